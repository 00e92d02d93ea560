#include "gluon/op_hook.h"

#include "graph/graph.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

namespace opscope::gluon {

namespace {
    std::atomic<uint64_t> g_nextHookId { 1 };
    // Counts additions and removals of hooks on every list, so that a thread's shared union
    // (ActiveHooks::current) knows when it is stale.
    std::atomic<uint64_t> g_hooksChanged { 0 };
    thread_local std::vector<const HookList*> t_active;
    // Counts pushes and pops of t_active, so that an op sees without comparing lists that this
    // thread's active blocks are those of the op before (a plain integer: no TLS wrapper call).
    thread_local uint64_t t_activeMoves = 0;
    thread_local size_t t_activeCount = 0; // t_active.size(), for the same reason
    struct CurrentHooks {
        std::shared_ptr<const std::vector<OpHook>> hooks;
        std::vector<const HookList*> active; // t_active when made
        uint64_t changes = 0;
        uint64_t activeMoves = 0; // t_activeMoves when `active` was last found equal to t_active
    };
    thread_local CurrentHooks t_current;
    // What Held reads first: t_current's set and the counts it was checked at, in plain thread
    // locals (no initialisation wrapper on each access, as t_current's members have). Written
    // only by currentSet(), with t_current: whatever else replaces t_current.hooks must set them
    // too, or Held would read a set that is gone.
    thread_local const std::vector<OpHook>* t_checkedSet = nullptr;
    thread_local uint64_t t_checkedChanges = 0;
    thread_local uint64_t t_checkedMoves = 0;
    // ActiveHooks::Held: how many are alive on this thread, and the sets replaced while one was.
    thread_local int t_holds = 0;
    thread_local std::vector<std::shared_ptr<const std::vector<OpHook>>> t_retired;
    thread_local bool t_anyRetired = false; // !t_retired.empty(), read without the TLS wrapper

    // `name` + "_" + `slot` in a buffer on the stack when it fits (no allocation per call).
    class TensorName {
    public:
        TensorName(const std::string& node, const std::string& slot)
        {
            const size_t n = node.size() + 1 + slot.size();
            char* out = m_inline;
            if (n > sizeof m_inline) {
                m_heap = std::make_unique_for_overwrite<char[]>(n);
                out = m_heap.get();
            }
            std::memcpy(out, node.data(), node.size());
            out[node.size()] = '_';
            std::memcpy(out + node.size() + 1, slot.data(), slot.size());
            m_view = std::string_view(out, n);
        }
        TensorName(const TensorName&) = delete;
        TensorName& operator=(const TensorName&) = delete;
        std::string_view view() const { return m_view; }

    private:
        char m_inline[160];
        std::unique_ptr<char[]> m_heap;
        std::string_view m_view;
    };
}

uint64_t HookList::add(OpHookCallback cb, bool monitor_all)
{
    const uint64_t id = g_nextHookId.fetch_add(1);
    m_hooks.push_back({ id, std::move(cb), monitor_all });
    g_hooksChanged.fetch_add(1, std::memory_order_release);
    return id;
}

bool HookList::remove(uint64_t id)
{
    auto it = std::find_if(m_hooks.begin(), m_hooks.end(), [&](const OpHook& h) { return h.id == id; });
    if (it == m_hooks.end())
        return false;
    m_hooks.erase(it);
    g_hooksChanged.fetch_add(1, std::memory_order_release);
    return true;
}

void HookHandle::remove()
{
    for (Target& t : m_targets)
        if (auto list = t.list.lock())
            list->remove(t.id);
    m_targets.clear();
}

bool HookHandle::active() const
{
    for (const Target& t : m_targets) {
        if (auto list = t.list.lock()) {
            for (const OpHook& h : list->hooks())
                if (h.id == t.id)
                    return true;
        }
    }
    return false;
}

void HookHandle::merge(const HookHandle& other)
{
    m_targets.insert(m_targets.end(), other.m_targets.begin(), other.m_targets.end());
}

HookHandle HookHandleBuilder::make(const std::shared_ptr<HookList>& list, uint64_t id)
{
    HookHandle h;
    h.m_targets.push_back({ list, id });
    return h;
}

ActiveHooks::Scope::Scope(const HookList* list)
    : m_pushed(list && !list->empty())
{
    if (m_pushed) {
        t_active.push_back(list);
        ++t_activeMoves;
        ++t_activeCount;
    }
}

ActiveHooks::Scope::~Scope()
{
    if (m_pushed) {
        t_active.pop_back();
        ++t_activeMoves;
        --t_activeCount;
    }
}

bool ActiveHooks::any()
{
    return t_activeCount != 0;
}

std::vector<OpHook> ActiveHooks::collect()
{
    std::vector<OpHook> out;
    for (const HookList* list : t_active)
        for (const OpHook& h : list->hooks())
            if (std::none_of(out.begin(), out.end(), [&](const OpHook& o) { return o.id == h.id; }))
                out.push_back(h);
    return out;
}

const std::shared_ptr<const std::vector<OpHook>>& ActiveHooks::currentSet()
{
    const uint64_t changes = g_hooksChanged.load(std::memory_order_acquire);
    CurrentHooks& c = t_current;
    const uint64_t moves = t_activeMoves;
    if (!c.hooks || c.changes != changes || (c.activeMoves != moves && c.active != t_active)) {
        if (c.hooks && t_holds > 0) { // a Held may point at it
            t_retired.push_back(std::move(c.hooks));
            t_anyRetired = true;
        }
        c.hooks = std::make_shared<const std::vector<OpHook>>(collect());
        c.active = t_active;
        c.changes = changes;
    }
    c.activeMoves = moves;
    t_checkedSet = c.hooks.get();
    t_checkedChanges = changes;
    t_checkedMoves = moves;
    return c.hooks;
}

std::shared_ptr<const std::vector<OpHook>> ActiveHooks::current()
{
    return currentSet();
}

ActiveHooks::Held::Held()
    : m_holding(any())
{
    static const std::vector<OpHook> kNone;
    if (!m_holding) {
        m_hooks = &kNone;
        return;
    }
    // The set checked last, while nothing changed since: what currentSet() would return.
    const bool checked = t_checkedSet && t_checkedMoves == t_activeMoves
        && t_checkedChanges == g_hooksChanged.load(std::memory_order_acquire);
    m_hooks = checked ? t_checkedSet : currentSet().get();
    ++t_holds;
}

ActiveHooks::Held::~Held()
{
    if (m_holding && --t_holds == 0 && t_anyRetired) {
        // Freed outside the vector: a hook's destructor may run an op, which may retire again.
        auto retired = std::move(t_retired);
        t_retired.clear();
        t_anyRetired = false;
    }
}

void reportEagerInputs(const std::vector<OpHook>& hooks, const std::string& node, const std::string& op,
    std::span<const std::string> slots, std::span<const TensorView> inputs)
{
    if (std::none_of(hooks.begin(), hooks.end(), [](const OpHook& h) { return h.monitor_all; })) return;
    for (size_t k = 0; k < inputs.size(); ++k) {
        const TensorName name(node, slots[k]);
        for (const OpHook& h : hooks)
            if (h.monitor_all) h.callback(name.view(), op, inputs[k]);
    }
}

void reportEagerOutputs(const std::vector<OpHook>& hooks, const std::string& node, const std::string& op,
    std::span<const std::string> slots, std::span<const TensorView> outputs)
{
    for (size_t k = 0; k < outputs.size(); ++k) {
        const TensorName name(node, slots[k]);
        for (const OpHook& h : hooks)
            h.callback(name.view(), op, outputs[k]);
    }
}

bool HookObserver::setHooks(const std::shared_ptr<const std::vector<OpHook>>& hooks)
{
    if (hooks == m_set && !m_blocksChanged) return false;
    const bool changed = setHooks(*hooks);
    m_set = hooks;
    return changed;
}

void HookObserver::setBlockHooks(std::shared_ptr<const BlockHooks> blocks)
{
    m_blocks = std::move(blocks);
    m_blocksChanged = true;
}

bool HookObserver::setHooks(std::vector<OpHook> hooks)
{
    m_set.reset();
    std::vector<const HookList*> owner(hooks.size(), nullptr);
    if (m_blocks) {
        std::vector<const HookList*> lists; // each once: a list is in every chain below its block
        for (const auto& chain : m_blocks->chains)
            for (const auto& list : chain)
                if (std::find(lists.begin(), lists.end(), list.get()) == lists.end()) lists.push_back(list.get());
        for (const HookList* list : lists)
            for (const OpHook& h : list->hooks())
                if (std::none_of(hooks.begin(), hooks.end(), [&](const OpHook& o) { return o.id == h.id; })) {
                    hooks.push_back(h);
                    owner.push_back(list);
                }
    }
    bool same = hooks.size() == m_hooks.size() && !m_blocksChanged;
    m_blocksChanged = false;
    for (size_t i = 0; same && i < hooks.size(); ++i)
        same = hooks[i].id == m_hooks[i].id && hooks[i].monitor_all == m_hooks[i].monitor_all;
    if (same) { // the same hooks: each callback taken where it is, since the executor may hold it (tensorCalls)
        for (size_t i = 0; i < hooks.size(); ++i)
            m_hooks[i].callback = std::move(hooks[i].callback);
    } else {
        m_hooks = std::move(hooks);
        m_hookOwner = std::move(owner);
    }
    if (!same) { // the lists name hooks by position: none is called until wants() lists them again
        for (NodeCalls& c : m_calls)
            c = NodeCalls { c.op };
        m_callList.clear();
        m_listedCalls = 0;
    }
    return !same;
}

PhaseMask HookObserver::wants(const Graph& graph, uint32_t nodeId)
{
    if (&graph != m_namedGraph || m_inNames.size() != graph.size()) {
        m_namedGraph = &graph;
        m_inNames.assign(graph.size(), {});
        m_outNames.assign(graph.size(), {});
        m_calls.assign(graph.size(), {});
        m_callList.clear();
        m_listedCalls = 0;
    }
    const Node& n = graph.node(nodeId);
    if (m_outNames[nodeId].empty() && !n.isVariable()) {
        for (const std::string& s : n.inputSlots)
            m_inNames[nodeId].push_back(n.name + "_" + s);
        for (const std::string& s : n.outputSlots)
            m_outNames[nodeId].push_back(n.name + "_" + s);
    }
    listCalls(n, nodeId);
    if (m_nodeHooks.empty()) return PhaseMask::None;
    const bool monitorAll = std::any_of(m_nodeHooks.begin(), m_nodeHooks.end(), [&](uint32_t h) { return m_hooks[h].monitor_all; });
    return monitorAll ? PhaseMask::Both : PhaseMask::After;
}

void HookObserver::hooksOf(uint32_t nodeId)
{
    m_nodeHooks.clear();
    for (uint32_t h = 0; h < m_hooks.size(); ++h)
        if (!m_hookOwner[h]) m_nodeHooks.push_back(h); // given to setHooks(): every node's
    if (!m_blocks || nodeId >= m_blocks->chainOf.size() || m_blocks->chainOf[nodeId] < 0) return;
    // Then those of the blocks that made the node, outermost first, as eager takes them.
    for (const auto& list : m_blocks->chains[static_cast<size_t>(m_blocks->chainOf[nodeId])])
        for (uint32_t h = 0; h < m_hooks.size(); ++h)
            if (m_hookOwner[h] == list.get() && std::find(m_nodeHooks.begin(), m_nodeHooks.end(), h) == m_nodeHooks.end())
                m_nodeHooks.push_back(h);
}

void HookObserver::listCalls(const Node& node, uint32_t nodeId)
{
    NodeCalls& calls = m_calls[nodeId];
    calls.op = node.opName();
    for (int after = 0; after < 2; ++after)
        m_listedCalls -= calls.end[after] - calls.begin[after];
    // Inputs to monitor_all hooks before the op, outputs to every hook after it; each tensor to
    // the node's hooks in hooksOf()'s order (each block's in the order they were registered).
    // Appended: a node listed again leaves its old calls behind until compactCalls().
    hooksOf(nodeId);
    const size_t inputs = std::min(node.inputs.size(), m_inNames[nodeId].size());
    const size_t outputs = std::min(static_cast<size_t>(std::max(node.numOutputs, 0)), m_outNames[nodeId].size());
    for (int after = 0; after < 2; ++after) {
        calls.begin[after] = static_cast<uint32_t>(m_callList.size());
        const auto& names = after ? m_outNames[nodeId] : m_inNames[nodeId];
        for (size_t k = 0; k < (after ? outputs : inputs); ++k)
            for (const uint32_t h : m_nodeHooks)
                if (after || m_hooks[h].monitor_all)
                    m_callList.push_back({ names[k], calls.op, h, static_cast<uint32_t>(k) });
        calls.end[after] = static_cast<uint32_t>(m_callList.size());
        m_listedCalls += calls.end[after] - calls.begin[after];
    }
    if (m_callList.size() > 2 * m_listedCalls + 1024) compactCalls();
}

void HookObserver::compactCalls()
{
    std::vector<Call> list;
    list.reserve(m_listedCalls);
    for (NodeCalls& calls : m_calls) {
        for (int after = 0; after < 2; ++after) {
            const uint32_t begin = static_cast<uint32_t>(list.size());
            list.insert(list.end(), m_callList.begin() + calls.begin[after], m_callList.begin() + calls.end[after]);
            calls.begin[after] = begin;
            calls.end[after] = static_cast<uint32_t>(list.size());
        }
    }
    m_callList = std::move(list);
}

ObserverAction HookObserver::onOp(const OpEvent& ev)
{
    const bool after = ev.phase == OpPhase::After;
    const std::span<const TensorView> views = after ? ev.outputs : ev.inputs;
    // The node's k-th call, its range read again each time: a hook that attaches or detaches an
    // observer has the executor ask wants() again, which lists the calls anew elsewhere meanwhile.
    for (uint32_t k = 0; ev.nodeId < m_calls.size(); ++k) {
        const NodeCalls& node = m_calls[ev.nodeId];
        const uint32_t i = node.begin[after] + k;
        if (i >= node.end[after] || i >= m_callList.size()) break;
        const Call c = m_callList[i];
        if (c.slot >= views.size()) break; // listed by slot
        m_hooks[c.hook].callback(c.name, c.op, views[c.slot]);
    }
    return ObserverAction::Continue;
}

bool HookObserver::tensorCalls(uint32_t nodeId, OpPhase phase, std::vector<TensorCall>& calls)
{
    if (nodeId >= m_calls.size()) return true; // not listed by wants(): no calls
    const bool after = phase == OpPhase::After;
    const NodeCalls& node = m_calls[nodeId];
    for (uint32_t c = node.begin[after]; c < node.end[after]; ++c) {
        const Call& call = m_callList[c];
        calls.push_back(TensorCall { &m_hooks[call.hook].callback, call.name, call.op, call.slot });
    }
    return true;
}

} // namespace opscope::gluon
