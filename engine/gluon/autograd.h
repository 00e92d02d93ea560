#pragma once

#include "gluon/parameter.h"
#include "tensor/tensor.h"

#include <string>
#include <vector>

namespace opscope::autograd {

/// MXNet's `autograd.record()`: while a RecordScope lives, operators called through Gluon on this
/// thread (eager F calls and hybridized blocks alike) are recorded for backward(). `trainMode`
/// makes Dropout drop and BatchNorm use batch statistics. Scopes nest; each restores the state it
/// found.
class RecordScope {
public:
    explicit RecordScope(bool trainMode = true, bool recording = true);
    ~RecordScope();
    RecordScope(const RecordScope&) = delete;
    RecordScope& operator=(const RecordScope&) = delete;

private:
    bool m_prevRecording;
    bool m_prevTraining;
};

/// `auto r = autograd::record();`
[[nodiscard]] inline RecordScope record(bool trainMode = true)
{
    return RecordScope(trainMode, true);
}
/// `auto p = autograd::pause();` — operators inside are not recorded.
[[nodiscard]] inline RecordScope pause(bool trainMode = false)
{
    return RecordScope(trainMode, false);
}

bool is_recording();
bool is_training();

/// MXNet's mark_variables / NDArray.attach_grad: backward() writes (grad_req "write") or adds
/// ("add") the gradient of each variable into its grad tensor (same shape; its storage is used).
/// The variables stay marked (and held) on this thread until clear_record().
void mark_variables(const std::vector<Tensor>& variables, const std::vector<Tensor>& grads,
    const std::vector<std::string>& grad_reqs = {});

/// The gradients of `heads` (head_grads: one per head, ones when not given) back through every
/// operator recorded on this thread, into the marked variables and the parameters that took part
/// (by their grad_req: write, add or null). The op hooks active when an operator was recorded see its
/// gradient run as `<node>_backward`. The record is cleared unless `retain_graph`. Throws UsageError
/// when no head was recorded, GraphError naming an operator without a gradient.
void backward(const std::vector<Tensor>& heads, const std::vector<Tensor>& head_grads = {}, bool retain_graph = false);
inline void backward(const Tensor& head, const Tensor& head_grad = {}, bool retain_graph = false)
{
    backward(std::vector<Tensor> { head },
        head_grad.defined() ? std::vector<Tensor> { head_grad } : std::vector<Tensor> {}, retain_graph);
}

/// Operators recorded on this thread since the last backward (tests).
size_t recorded_count();
/// Drops what was recorded on this thread, and forgets the marked variables.
void clear_record();

} // namespace opscope::autograd
