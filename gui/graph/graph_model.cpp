#include "gui/graph/graph_model.h"

#include "gui/graph/op_family.h"

#include <algorithm>

namespace opscope::gui {

namespace {

constexpr auto kBlockPrefix = QLatin1String("block:");

bool isParameterName(const QString& name)
{
    static const char* const kSuffixes[]
        = { "_weight", "_bias", "_gamma", "_beta", "_running_mean", "_running_var", "_moving_mean", "_moving_var" };
    for (const char* suffix : kSuffixes)
        if (name.endsWith(QLatin1String(suffix))) return true;
    return false;
}

} // namespace

GraphModel::GraphModel(QObject* parent)
    : QObject(parent)
{
}

GraphModel::~GraphModel() = default;

void GraphModel::setGraph(std::shared_ptr<const Graph> graph, std::vector<Shape> entryShapes)
{
    if (!graph) {
        clear();
        return;
    }
    m_graph = std::move(graph);
    m_shapes = std::move(entryShapes);
    m_fusion.clear();
    m_marks.assign(m_graph->nodes().size(), NodeMarks {});
    m_pausedId = -1;
    m_compared = false;
    m_divergence.clear();
    m_firstDivergent = -1;
    m_marksDirty = false;
    buildIndex();
    m_tree.build(*m_graph, m_parameter);
    m_expanded = fitSet(kDefaultMaxVisible);
    rebuild();
    emit graphChanged();
    emit structureChanged();
}

void GraphModel::setEntryShapes(std::vector<Shape> entryShapes)
{
    m_shapes = std::move(entryShapes);
    if (!m_graph) return;
    rebuild();
    emit structureChanged();
}

void GraphModel::clear()
{
    m_graph.reset();
    m_fusion.clear();
    m_shapes.clear();
    m_keys.clear();
    m_parameter.clear();
    m_nameToId.clear();
    m_tree.clear();
    m_expanded.clear();
    m_items.clear();
    m_edges.clear();
    m_itemIndex.clear();
    m_nodeItem.clear();
    m_marks.clear();
    m_pausedId = -1;
    m_compared = false;
    m_divergence.clear();
    m_firstDivergent = -1;
    m_marksDirty = false;
    emit graphChanged();
    emit structureChanged();
}

void GraphModel::setShowParameters(bool show)
{
    if (show == m_showParameters) return;
    m_showParameters = show;
    rebuild();
    emit showParametersChanged(show);
    emit structureChanged();
}

int GraphModel::blockOpCount(const QString& path) const
{
    return m_tree.opCount(path);
}

bool GraphModel::isExpanded(const QString& path) const
{
    return m_tree.block(path) && isOpen(path, m_expanded);
}

void GraphModel::setExpanded(const QString& path, bool expanded)
{
    if (!m_tree.block(path)) return;
    QSet<QString> next = m_expanded;
    if (expanded)
        next.insert(path);
    else
        next.remove(path);
    setExpandedSet(std::move(next));
}

void GraphModel::toggleExpanded(const QString& path)
{
    setExpanded(path, !isExpanded(path));
}

void GraphModel::expandToShow(const QString& nodeName)
{
    const int id = nodeId(nodeName);
    if (id < 0) return;
    QSet<QString> next = m_expanded;
    for (const QString& p : m_tree.prefixesOf(static_cast<uint32_t>(id)))
        next.insert(p);
    setExpandedSet(std::move(next));
}

void GraphModel::expandToFit(int maxVisible)
{
    setExpandedSet(fitSet(maxVisible));
}

GraphModel::ExpandResult GraphModel::expandAll(int maxVisible)
{
    ExpandResult r;
    QSet<QString> all;
    for (const QString& path : m_tree.order()) {
        const BlockTree::Block& b = *m_tree.block(path);
        if (b.ops.size() <= 1) continue;
        all.insert(path);
        r.levels = std::max(r.levels, b.depth);
    }
    if (m_graph)
        for (const Node& node : m_graph->nodes())
            r.opCount += node.isVariable() ? 0 : 1;
    r.fullCount = static_cast<int>(computeVisible(all).items.size());
    r.complete = r.fullCount <= maxVisible;
    // Blocks opened by hand stay open.
    QSet<QString> next = r.complete ? std::move(all) : fitSet(maxVisible).unite(m_expanded);
    r.levelsOpened = r.levels;
    for (const QString& path : m_tree.order()) {
        const BlockTree::Block& b = *m_tree.block(path);
        if (b.ops.size() > 1 && !next.contains(path)) r.levelsOpened = std::min(r.levelsOpened, b.depth - 1);
    }
    // Opening a block of several ops always adds boxes.
    const int before = visibleCount();
    setExpandedSet(std::move(next));
    r.visible = visibleCount();
    r.changed = r.visible != before;
    return r;
}

void GraphModel::collapseAll()
{
    setExpandedSet(collapsedSet());
}

QSet<QString> GraphModel::fitSet(int maxVisible) const
{
    QSet<QString> expanded;
    for (int depth = 1;; ++depth) {
        QSet<QString> next = expanded;
        bool any = false;
        for (const QString& path : m_tree.order()) {
            const BlockTree::Block& b = *m_tree.block(path);
            if (b.depth != depth || b.ops.size() <= 1) continue;
            if (!b.parent.isEmpty() && !isOpen(b.parent, expanded)) continue;
            next.insert(path);
            any = true;
        }
        if (!any) break;
        if (static_cast<int>(computeVisible(next).items.size()) > maxVisible) break;
        expanded = std::move(next);
    }
    return expanded;
}

QSet<QString> GraphModel::collapsedSet() const
{
    QSet<QString> expanded;
    while (true) {
        const Visible v = computeVisible(expanded);
        const GraphItem* lone = nullptr;
        int blocks = 0;
        for (const GraphItem& item : v.items) {
            if (item.kind != GraphItemKind::Block) continue;
            ++blocks;
            lone = &item;
        }
        if (blocks != 1) break;
        QSet<QString> next = expanded;
        next.insert(lone->name);
        if (static_cast<int>(computeVisible(next).items.size()) > kDefaultMaxVisible) break;
        expanded = std::move(next);
    }
    return expanded;
}

QString GraphModel::itemKeyForNode(const QString& nodeName) const
{
    const int id = nodeId(nodeName);
    if (id < 0 || static_cast<size_t>(id) >= m_nodeItem.size()) return {};
    const int index = m_nodeItem[static_cast<size_t>(id)];
    return index < 0 ? QString() : m_items[static_cast<size_t>(index)].key;
}

const GraphItem* GraphModel::findItem(const QString& key) const
{
    const auto it = m_itemIndex.constFind(key);
    return it == m_itemIndex.constEnd() ? nullptr : &m_items[static_cast<size_t>(it.value())];
}

int GraphModel::nodeId(const QString& nodeName) const
{
    return m_nameToId.value(nodeName, -1);
}

bool GraphModel::isParameter(int nodeId) const
{
    return nodeId >= 0 && static_cast<size_t>(nodeId) < m_parameter.size() && m_parameter[static_cast<size_t>(nodeId)];
}

void GraphModel::beginMarkUpdate()
{
    ++m_markUpdateDepth;
}

void GraphModel::endMarkUpdate()
{
    if (m_markUpdateDepth > 0) --m_markUpdateDepth;
    if (m_markUpdateDepth == 0 && m_marksDirty) {
        m_marksDirty = false;
        emit marksChanged();
    }
}

void GraphModel::setBreakpointMark(const QString& node, BreakMark mark, bool conditional)
{
    const int id = nodeId(node);
    if (id < 0) return;
    NodeMarks& m = m_marks[static_cast<size_t>(id)];
    conditional = conditional && mark != BreakMark::None;
    if (m.breakpoint == mark && m.conditional == conditional) return;
    m.breakpoint = mark;
    m.conditional = conditional;
    emitMarksChanged();
}

void GraphModel::clearBreakpointMarks()
{
    bool changed = false;
    for (NodeMarks& m : m_marks) {
        changed = changed || m.breakpoint != BreakMark::None;
        m.breakpoint = BreakMark::None;
        m.conditional = false;
    }
    if (changed) emitMarksChanged();
}

void GraphModel::setExecuted(const QString& node, bool nanInf)
{
    const int id = nodeId(node);
    if (id < 0) return;
    NodeMarks& m = m_marks[static_cast<size_t>(id)];
    if (m.executed && m.nanInf == nanInf) return;
    m.executed = true;
    m.nanInf = nanInf;
    emitMarksChanged();
}

void GraphModel::clearRunMarks()
{
    bool changed = m_pausedId >= 0;
    for (NodeMarks& m : m_marks) {
        changed = changed || m.executed || m.nanInf;
        m.executed = false;
        m.nanInf = false;
    }
    m_pausedId = -1;
    if (changed) emitMarksChanged();
}

void GraphModel::setPausedNode(const QString& node)
{
    const int id = node.isEmpty() ? -1 : nodeId(node);
    if (id >= 0) expandToShow(node);
    if (id == m_pausedId) return;
    m_pausedId = id;
    emitMarksChanged();
}

QString GraphModel::pausedNode() const
{
    return m_pausedId < 0 ? QString() : QString::fromStdString(m_graph->node(static_cast<uint32_t>(m_pausedId)).name);
}

NodeMarks GraphModel::marks(const QString& key) const
{
    NodeMarks out;
    if (key.startsWith(kBlockPrefix)) {
        const QString path = key.mid(kBlockPrefix.size());
        const BlockTree::Block* b = m_tree.block(path);
        if (!b || b->ops.empty()) return out;
        bool all = true;
        for (uint32_t id : b->ops) {
            const NodeMarks& m = m_marks[id];
            if (m.breakpoint == BreakMark::Enabled)
                out.breakpoint = BreakMark::Enabled;
            else if (m.breakpoint == BreakMark::Disabled && out.breakpoint == BreakMark::None)
                out.breakpoint = BreakMark::Disabled;
            out.conditional = out.conditional || m.conditional;
            out.nanInf = out.nanInf || m.nanInf;
            all = all && m.executed;
        }
        out.executed = all;
        if (m_compared) {
            out.compared = true;
            for (uint32_t id : b->ops)
                if (id < m_divergence.size()) out.divergence = std::max(out.divergence, m_divergence[id]);
            out.firstDivergent = m_firstDivergent >= 0
                && std::find(b->ops.begin(), b->ops.end(), static_cast<uint32_t>(m_firstDivergent)) != b->ops.end();
        }
        if (m_pausedId >= 0) {
            const QString& pausedPath = m_tree.pathOf(static_cast<uint32_t>(m_pausedId));
            out.paused = pausedPath == path || pausedPath.startsWith(path + QLatin1Char('/'));
        }
        return out;
    }
    // A node key whether or not it is visible; keys differ from names only for duplicated names.
    const auto it = m_itemIndex.constFind(key);
    const int id = it != m_itemIndex.constEnd() ? m_items[static_cast<size_t>(it.value())].nodeId : nodeId(key);
    if (id < 0 || static_cast<size_t>(id) >= m_marks.size()) return out;
    out = m_marks[static_cast<size_t>(id)];
    out.paused = id == m_pausedId;
    if (m_compared) {
        out.compared = true;
        out.divergence = static_cast<size_t>(id) < m_divergence.size() ? m_divergence[static_cast<size_t>(id)] : -1.0f;
        out.firstDivergent = id == m_firstDivergent;
    }
    return out;
}

void GraphModel::setDivergence(std::vector<float> severityByNode, int firstDivergent)
{
    m_compared = true;
    m_divergence = std::move(severityByNode);
    m_firstDivergent = firstDivergent;
    if (firstDivergent >= 0 && static_cast<size_t>(firstDivergent) < m_keys.size())
        expandToShow(QString::fromStdString(m_graph->node(static_cast<uint32_t>(firstDivergent)).name));
    emitMarksChanged();
}

void GraphModel::clearDivergence()
{
    if (!m_compared) return;
    m_compared = false;
    m_divergence.clear();
    m_firstDivergent = -1;
    emitMarksChanged();
}

QStringList GraphModel::find(const QString& text) const
{
    // Ops first (what one steps through and breaks on), then inputs and parameters; each in graph order.
    QStringList ops, variables;
    if (!m_graph || text.isEmpty()) return ops;
    for (const Node& node : m_graph->nodes()) {
        const QString name = QString::fromStdString(node.name);
        if (name.contains(text, Qt::CaseInsensitive)
            || (!node.isVariable() && QString::fromStdString(node.op).contains(text, Qt::CaseInsensitive)))
            (node.isVariable() ? variables : ops) << name;
    }
    return ops + variables;
}

void GraphModel::buildIndex()
{
    const auto& nodes = m_graph->nodes();
    m_keys.assign(nodes.size(), QString());
    m_parameter.assign(nodes.size(), false);
    m_nameToId.clear();
    QSet<QString> used;
    for (size_t id = 0; id < nodes.size(); ++id) {
        const Node& node = nodes[id];
        const QString name = QString::fromStdString(node.name);
        if (!m_nameToId.contains(name)) m_nameToId.insert(name, static_cast<int>(id));
        // Duplicate names (possible in hand-written files) still need distinct keys.
        QString key = name;
        for (int n = 2; used.contains(key) || key.startsWith(kBlockPrefix); ++n)
            key = name + QStringLiteral("#%1").arg(n);
        used.insert(key);
        m_keys[id] = key;
        // A parameter: MXNet's by its name; an ONNX initializer by its known value (a Constant or a
        // folded node stays in view, drawn as such).
        if (node.isVariable())
            m_parameter[id] = isParameterName(name) || m_graph->isAuxiliary(static_cast<uint32_t>(id))
                || (node.attrs.count("__const__") && !node.attrs.count("__folded__"));
    }
}

bool GraphModel::isOpen(const QString& path, const QSet<QString>& expanded) const
{
    return expanded.contains(path) || blockOpCount(path) <= 1;
}

QString GraphModel::clusterPathOf(const QString& path) const
{
    // The deepest enclosing block that is drawn as a frame: open and holding more than one op.
    QString p = path;
    while (!p.isEmpty() && blockOpCount(p) <= 1)
        p = BlockTree::parentPath(p);
    return p;
}

GraphModel::Visible GraphModel::computeVisible(const QSet<QString>& expanded) const
{
    Visible v;
    if (!m_graph) return v;
    const auto& nodes = m_graph->nodes();
    v.nodeItem.assign(nodes.size(), -1);
    QHash<QString, int> blockItems;
    for (size_t id = 0; id < nodes.size(); ++id) {
        const Node& node = nodes[id];
        if (node.isVariable() && m_parameter[id] && !m_showParameters) continue;
        QString closed;
        for (const QString& p : m_tree.prefixesOf(static_cast<uint32_t>(id))) {
            if (!isOpen(p, expanded)) {
                closed = p;
                break;
            }
        }
        if (!closed.isEmpty()) {
            const auto found = blockItems.constFind(closed);
            if (found != blockItems.constEnd()) {
                v.nodeItem[id] = found.value();
                continue;
            }
            GraphItem item;
            item.key = kBlockPrefix + closed;
            item.kind = GraphItemKind::Block;
            item.title = blockDisplayName(closed);
            item.name = closed;
            item.opCount = blockOpCount(closed);
            item.shape = item.opCount == 1 ? QStringLiteral("1 op") : QStringLiteral("%1 ops").arg(item.opCount);
            item.family = QStringLiteral("block");
            item.blockPath = clusterPathOf(BlockTree::parentPath(closed));
            blockItems.insert(closed, static_cast<int>(v.items.size()));
            v.nodeItem[id] = static_cast<int>(v.items.size());
            v.items.push_back(std::move(item));
            continue;
        }
        GraphItem item;
        item.key = m_keys[id];
        item.name = QString::fromStdString(node.name);
        item.nodeId = static_cast<int>(id);
        item.shape = shapeText(static_cast<uint32_t>(id), 0);
        item.blockPath = clusterPathOf(m_tree.pathOf(static_cast<uint32_t>(id)));
        if (node.isVariable()) {
            item.kind = GraphItemKind::Variable;
            item.parameter = m_parameter[id];
            item.title = item.parameter ? QStringLiteral("Parameter") : QStringLiteral("Input");
            item.family = item.parameter ? QStringLiteral("parameter") : QStringLiteral("input");
            // An ONNX node computed before the run (its inputs were known): shown as folded, with
            // the operator and node it came from.
            const auto folded = node.attrs.find("__folded__");
            if (folded != node.attrs.end()) {
                const QString what = QString::fromStdString(folded->second);
                const QString op = what.section(QLatin1Char(' '), 0, 0);
                item.title = op == QLatin1String("Constant") ? QStringLiteral("Constant") : QStringLiteral("Folded %1").arg(op);
                item.detail = what.section(QLatin1Char(' '), 1);
            }
        } else {
            item.kind = GraphItemKind::Op;
            item.title = QString::fromStdString(node.op);
            item.family = opFamily(item.title);
            item.detail = opSummary(node);
        }
        v.nodeItem[id] = static_cast<int>(v.items.size());
        v.items.push_back(std::move(item));
    }
    return v;
}

void GraphModel::rebuild()
{
    Visible v = computeVisible(m_expanded);
    m_items = std::move(v.items);
    m_nodeItem = std::move(v.nodeItem);
    m_itemIndex.clear();
    for (size_t i = 0; i < m_items.size(); ++i)
        m_itemIndex.insert(m_items[i].key, static_cast<int>(i));
    m_edges.clear();
    if (!m_graph) return;
    const auto& nodes = m_graph->nodes();
    QSet<quint64> seen;
    for (size_t id = 0; id < nodes.size(); ++id) {
        if (nodes[id].isVariable()) continue;
        const int to = m_nodeItem[id];
        if (to < 0) continue;
        for (const NodeEntry& e : nodes[id].inputs) {
            if (e.node >= nodes.size()) continue;
            const int from = m_nodeItem[e.node];
            if (from < 0 || from == to) continue;
            const quint64 pair = (static_cast<quint64>(from) << 32) | static_cast<quint32>(to);
            if (seen.contains(pair)) continue;
            seen.insert(pair);
            m_edges.push_back({ m_items[static_cast<size_t>(from)].key, m_items[static_cast<size_t>(to)].key,
                shapeText(e.node, e.index) });
        }
    }
}

void GraphModel::setExpandedSet(QSet<QString> expanded)
{
    if (expanded == m_expanded) return;
    m_expanded = std::move(expanded);
    rebuild();
    emit structureChanged();
}

void GraphModel::emitMarksChanged()
{
    if (m_markUpdateDepth > 0)
        m_marksDirty = true;
    else
        emit marksChanged();
}

QString GraphModel::shapeText(uint32_t node, uint32_t index) const
{
    if (!m_graph) return {};
    const auto& rowPtr = m_graph->rowPtr();
    if (node >= rowPtr.size()) return {};
    const size_t entry = static_cast<size_t>(rowPtr[node]) + index;
    if (entry >= m_shapes.size() || !m_shapes[entry].known()) return {};
    return QString::fromStdString(m_shapes[entry].str());
}

} // namespace opscope::gui
