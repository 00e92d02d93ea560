#pragma once

// What autograd records on a thread (used by F's eager calls and HybridBlock's cached calls; users
// see gluon/autograd.h).

#include "exec/executor.h"
#include "exec/gradient.h"
#include "gluon/op_hook.h"
#include "gluon/parameter.h"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace opscope::autograd::detail {

/// A hybridized block's backward pass for one set of wanted gradients: the gradient graph without
/// the forward nodes, its executor and the hooks that watch it.
struct BackwardProgram {
    GradientGraph gradient;
    std::shared_ptr<const Graph> graph;
    std::unique_ptr<Executor> exec;
    gluon::HookObserver hooks;
};

/// One recorded call: an eager operator (def set) or a block's cached graph (program set).
struct TapeEntry {
    const OpDef* def = nullptr;
    ParamsPtr params;
    std::string node;
    std::vector<Tensor> in;
    std::vector<Tensor> out; ///< every output (hidden ones too) of an op; a block's heads
    std::vector<gluon::OpHook> hooks; ///< hooks active when it was recorded
    bool training = true; ///< the mode the forward ran in (BatchNorm's gradient depends on it)

    std::shared_ptr<BackwardProgram> program;
    std::map<std::string, Tensor> bindings; ///< the program's variables, head gradients aside
    std::vector<Tensor> wrtTensors; ///< the tensors whose gradients the program gives, in its wrt order
};

/// The calls recorded on this thread, and which tensors (by storage address) need gradients.
class Tape {
public:
    static Tape& current();

    bool requiresGrad(const Tensor& t) const { return t.defined() && m_requires.count(t.data()) != 0; }
    /// A parameter taking part in a recorded call: a leaf when its grad_req is not null.
    void noteParameter(const gluon::ParamPtr& p);
    void markVariable(const Tensor& variable, const Tensor& grad, const std::string& req);
    /// Records an eager op when one of its inputs needs a gradient.
    void recordOp(const OpDef& def, ParamsPtr params, const std::string& node, const std::vector<Tensor>& in,
        const std::vector<Tensor>& out, std::vector<gluon::OpHook> hooks);
    void recordProgram(TapeEntry entry);

    const std::vector<TapeEntry>& entries() const { return m_entries; }
    /// Drops the recorded calls (marked variables stay marked, as MXNet's attach_grad lasts).
    void clear();
    /// Drops the marked variables too.
    void reset();

    struct Leaf {
        Tensor variable; ///< held, so its storage address stays its own
        Tensor grad;
        std::string req;
        gluon::ParamPtr param;
    };
    const std::unordered_map<const float*, Leaf>& leaves() const { return m_leaves; }

private:
    std::vector<TapeEntry> m_entries;
    std::unordered_set<const float*> m_requires;
    std::unordered_map<const float*, Leaf> m_leaves;
};

} // namespace opscope::autograd::detail
