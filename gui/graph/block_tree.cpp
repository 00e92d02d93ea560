#include "gui/graph/block_tree.h"

#include "graph/block_paths.h"

namespace opscope::gui {

QString blockDisplayName(const QString& blockPath)
{
    const QString last = BlockTree::lastComponent(blockPath);
    const QString parent = BlockTree::lastComponent(BlockTree::parentPath(blockPath));
    if (!parent.isEmpty() && last.size() > parent.size() + 1 && last.startsWith(parent + QLatin1Char('_')))
        return last.mid(parent.size() + 1);
    return last;
}

QString nodeDisplayName(const QString& nodeName, const QString& blockPath)
{
    auto strip = [&nodeName](const QString& component) {
        const QString prefix = component + QLatin1Char('_');
        if (component.isEmpty() || nodeName.size() <= prefix.size() || !nodeName.startsWith(prefix)) return nodeName;
        return nodeName.mid(prefix.size());
    };
    // The frame already names the block, so its prefix goes ("net0_stage1_relu0" in net0/net0_stage1 shows
    // "relu0"); a block's own forward op keeps the block's name ("net0_dense0_fwd" shows "dense0_fwd").
    const QString shown = strip(BlockTree::lastComponent(blockPath));
    if (shown == QLatin1String("fwd") || shown == QLatin1String("output"))
        return strip(BlockTree::lastComponent(BlockTree::parentPath(blockPath)));
    return shown;
}

QString BlockTree::lastComponent(const QString& path)
{
    const qsizetype slash = path.lastIndexOf(QLatin1Char('/'));
    return slash < 0 ? path : path.mid(slash + 1);
}

QString BlockTree::parentPath(const QString& path)
{
    const qsizetype slash = path.lastIndexOf(QLatin1Char('/'));
    return slash < 0 ? QString() : path.left(slash);
}

QStringList BlockTree::prefixes(const QString& path)
{
    QStringList out;
    if (path.isEmpty()) return out;
    for (qsizetype from = 0;;) {
        const qsizetype slash = path.indexOf(QLatin1Char('/'), from);
        if (slash < 0) break;
        out << path.left(slash);
        from = slash + 1;
    }
    out << path;
    return out;
}

void BlockTree::clear()
{
    m_paths.clear();
    m_prefixes.clear();
    m_blocks.clear();
    m_order.clear();
}

const BlockTree::Block* BlockTree::block(const QString& path) const
{
    const auto it = m_blocks.constFind(path);
    return it == m_blocks.constEnd() ? nullptr : &it.value();
}

int BlockTree::opCount(const QString& path) const
{
    const Block* b = block(path);
    return b ? static_cast<int>(b->ops.size()) : 0;
}

void BlockTree::build(const Graph& graph, const std::vector<bool>& parameter)
{
    clear();
    const auto& nodes = graph.nodes();
    // The engine decides the blocks (Step Out leaves the same frames the view draws).
    const std::vector<std::string> paths = blockPaths(graph);
    m_paths.assign(nodes.size(), QString());
    for (size_t id = 0; id < nodes.size(); ++id)
        if (!nodes[id].isVariable()) m_paths[id] = QString::fromStdString(paths[id]);
    std::vector<bool> placed(nodes.size(), false);
    for (size_t id = 0; id < nodes.size(); ++id) {
        if (nodes[id].isVariable()) continue;
        for (const NodeEntry& e : nodes[id].inputs) {
            if (e.node >= nodes.size() || placed[e.node] || e.node >= parameter.size() || !parameter[e.node]) continue;
            placed[e.node] = true;
            m_paths[e.node] = m_paths[id];
        }
    }
    m_prefixes.resize(nodes.size());
    for (size_t id = 0; id < nodes.size(); ++id)
        m_prefixes[id] = prefixes(m_paths[id]);
    registerBlocks(graph);
}

void BlockTree::registerBlocks(const Graph& graph)
{
    const auto& nodes = graph.nodes();
    for (size_t id = 0; id < nodes.size(); ++id) {
        if (nodes[id].isVariable()) continue;
        const QStringList& chain = m_prefixes[id];
        for (qsizetype d = 0; d < chain.size(); ++d) {
            auto it = m_blocks.find(chain[d]);
            if (it == m_blocks.end()) {
                it = m_blocks.insert(chain[d], Block {});
                it->parent = d ? chain[d - 1] : QString();
                it->depth = static_cast<int>(d) + 1;
                m_order << chain[d];
            }
            it->ops.push_back(static_cast<uint32_t>(id));
        }
    }
}

} // namespace opscope::gui
