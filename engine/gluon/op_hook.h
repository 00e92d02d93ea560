#pragma once

#include "exec/observer.h"
#include "tensor/tensor_view.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::gluon {

/// MXNet's op-hook callback: (tensor name `<node>_<slot>`, operator name, the tensor). The view is
/// valid only during the call; copy it (Tensor::copyOf) to keep it.
using OpHookCallback = TensorCallback;

struct OpHook {
    uint64_t id;
    OpHookCallback callback;
    bool monitor_all;
};

/// The hooks registered on one block. Shared with the handles that can remove them.
class HookList {
public:
    uint64_t add(OpHookCallback cb, bool monitor_all);
    bool remove(uint64_t id);
    const std::vector<OpHook>& hooks() const { return m_hooks; }
    bool empty() const { return m_hooks.empty(); }

private:
    std::vector<OpHook> m_hooks;
};

/// Returned by register_op_hook; remove() (or MXNet's detach()) unregisters the hook from every
/// block it was registered on. Destroying the handle leaves the hook registered.
class HookHandle {
public:
    HookHandle() = default;
    void remove();
    void detach() { remove(); }
    /// True while the hook is still registered somewhere.
    bool active() const;
    void merge(const HookHandle& other);

private:
    friend class HookHandleBuilder;
    struct Target {
        std::weak_ptr<HookList> list;
        uint64_t id;
    };
    std::vector<Target> m_targets;
};

class HookHandleBuilder {
public:
    static HookHandle make(const std::shared_ptr<HookList>& list, uint64_t id);
};

/// The hooks of the blocks whose forward is running on this thread (innermost last). An eager op
/// reports to all of them; a cached op attaches them to its executor.
class ActiveHooks {
public:
    class Scope {
    public:
        explicit Scope(const HookList* list);
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        bool m_pushed;
    };
    /// The union of active hooks, outermost block first, each hook once.
    static std::vector<OpHook> collect();
    /// The same union, shared: made again only when this thread's active blocks differ from when it
    /// was made or a hook was added or removed anywhere since, so that an op takes it without
    /// copying and a cached op sees by its address that nothing changed. Never null. Hold the
    /// pointer while calling hooks: a hook may change the set.
    static std::shared_ptr<const std::vector<OpHook>> current();
    static bool any();

    /// current()'s set, kept alive while the Held lives without a reference count: a set this
    /// thread replaces meanwhile (a hook that adds or removes hooks) is freed when the outermost
    /// Held on the thread ends. What an eager op holds while it reports.
    class Held {
    public:
        Held();
        ~Held();
        Held(const Held&) = delete;
        Held& operator=(const Held&) = delete;
        const std::vector<OpHook>& hooks() const { return *m_hooks; }

    private:
        const std::vector<OpHook>* m_hooks;
        bool m_holding;
    };

private:
    static const std::shared_ptr<const std::vector<OpHook>>& currentSet();
};

/// Which blocks made each node of a traced graph, as their hook lists: a block hybridized as part
/// of another's graph runs no forward of its own, so its hooks are called from that graph for the
/// nodes it made, as they are when it runs eagerly.
struct BlockHooks {
    /// Each a chain of blocks entered while tracing, outermost first (those with a hook list).
    std::vector<std::vector<std::shared_ptr<const HookList>>> chains;
    std::vector<int32_t> chainOf; ///< by node id: index into chains, -1 (or beyond) for none
};

/// Reports one eager op to hooks: inputs (monitor_all hooks) before, outputs after, MXNet's names.
void reportEagerInputs(const std::vector<OpHook>& hooks, const std::string& node, const std::string& op,
    std::span<const std::string> slots, std::span<const TensorView> inputs);
void reportEagerOutputs(const std::vector<OpHook>& hooks, const std::string& node, const std::string& op,
    std::span<const std::string> slots, std::span<const TensorView> outputs);

/// The execution observer behind op hooks in a cached op: names precomputed per node, so a call
/// costs the callback and nothing else.
class HookObserver : public ExecutionObserver {
public:
    /// Replaces the hooks; returns true when the set of hooks (by id and monitor_all) changed: the
    /// executor must then refresh its wants before it runs again (it may hold the old callbacks).
    bool setHooks(std::vector<OpHook> hooks);
    /// The same with ActiveHooks::current()'s set: nothing to do when it is the one given last.
    bool setHooks(const std::shared_ptr<const std::vector<OpHook>>& hooks);
    /// The hooks of the blocks that made each node (the traced graph's inner blocks): after the
    /// hooks of setHooks(), which every node reports to, a node reports to those of its chain's
    /// blocks, outermost first, each hook once. Taken into account from the next setHooks().
    void setBlockHooks(std::shared_ptr<const BlockHooks> blocks);
    bool empty() const { return m_hooks.empty(); }
    PhaseMask wants(const Graph& graph, uint32_t nodeId) override;
    ObserverAction onOp(const OpEvent& event) override;
    /// Each of a node's calls is a hook on one tensor: the executor's table makes them itself.
    bool tensorCalls(uint32_t nodeId, OpPhase phase, std::vector<TensorCall>& calls) override;

private:
    // One callback call: hook m_hooks[hook] on the node's input (before) or output (after) `slot`.
    struct Call {
        std::string_view name; // into m_inNames / m_outNames
        std::string_view op;
        uint32_t hook;
        uint32_t slot;
    };
    // A node's calls before and after its op (in MXNet's order: slot, then hook) are
    // m_callList[begin[phase], end[phase]): one array for every node, read in the order the
    // nodes run.
    struct NodeCalls {
        std::string_view op;
        uint32_t begin[2] = { 0, 0 }, end[2] = { 0, 0 };
    };
    void listCalls(const Node& node, uint32_t nodeId);
    void compactCalls();
    // The positions in m_hooks of the hooks node `nodeId` reports to, in order, into m_nodeHooks.
    void hooksOf(uint32_t nodeId);

    // The hooks given to setHooks(), then those of the blocks in m_blocks not among them; the
    // latter's lists by position in m_hookOwner (null for the former).
    std::vector<OpHook> m_hooks;
    std::vector<const HookList*> m_hookOwner;
    std::shared_ptr<const BlockHooks> m_blocks;
    bool m_blocksChanged = false;
    std::vector<uint32_t> m_nodeHooks; // hooksOf()'s answer
    std::shared_ptr<const std::vector<OpHook>> m_set; // where m_hooks came from, if shared
    const Graph* m_namedGraph = nullptr;
    std::vector<std::vector<std::string>> m_inNames, m_outNames; // by node id
    // By node id, made by wants() and emptied when the hooks change (the executor asks wants()
    // again then): onOp() calls exactly these.
    std::vector<NodeCalls> m_calls;
    std::vector<Call> m_callList;
    size_t m_listedCalls = 0; // in m_callList that some node's ranges cover (the rest were listed again)
};

} // namespace opscope::gluon
