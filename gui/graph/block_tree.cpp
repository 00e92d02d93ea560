#include "gui/graph/block_tree.h"

#include <algorithm>

#include <QRegularExpression>

namespace opscope::gui {

namespace {

// A block (or the top level) with more direct ops than this is split into runs of consecutive ops.
constexpr int kMaxDirectOps = 150;
// Runs hold at least this many ops, and a split block gets at most kMaxRuns of them.
constexpr int kMinRunLength = 20;
constexpr int kMaxRuns = 60;

QString normalizePath(const std::string& raw)
{
    return QString::fromStdString(raw).split(QLatin1Char('/'), Qt::SkipEmptyParts).join(QLatin1Char('/'));
}

} // namespace

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
    m_paths.assign(nodes.size(), QString());
    std::vector<uint32_t> unplaced;
    for (size_t id = 0; id < nodes.size(); ++id) {
        if (nodes[id].isVariable()) continue;
        m_paths[id] = normalizePath(nodes[id].blockPath);
        if (m_paths[id].isEmpty()) unplaced.push_back(static_cast<uint32_t>(id));
    }
    if (static_cast<int>(unplaced.size()) > kMaxDirectOps) deriveNamePaths(graph, unplaced);
    chunkLargeBlocks(graph);
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

void BlockTree::deriveNamePaths(const Graph& graph, const std::vector<uint32_t>& ops)
{
    // "resnet_stage1_conv0_fwd" suggests blocks resnet / resnet_stage1 / resnet_stage1_conv0.
    static const QRegularExpression separators(QStringLiteral("[_/]"));
    std::vector<QStringList> candidates(ops.size());
    QHash<QString, int> counts;
    for (size_t i = 0; i < ops.size(); ++i) {
        const QStringList tokens
            = QString::fromStdString(graph.node(ops[i]).name).split(separators, Qt::SkipEmptyParts);
        QString component;
        QString path;
        for (qsizetype k = 0; k + 1 < tokens.size(); ++k) {
            component += (k ? QStringLiteral("_") : QString()) + tokens[k];
            path += (k ? QStringLiteral("/") : QString()) + component;
            candidates[i] << path;
            ++counts[path];
        }
    }
    for (size_t i = 0; i < ops.size(); ++i) {
        QString path;
        for (const QString& p : std::as_const(candidates[i])) {
            if (counts.value(p) < 2) break;
            path = p;
        }
        m_paths[ops[i]] = path;
    }
}

void BlockTree::chunkLargeBlocks(const Graph& graph)
{
    const auto& nodes = graph.nodes();
    QHash<QString, std::vector<uint32_t>> direct;
    QStringList containers;
    for (size_t id = 0; id < nodes.size(); ++id) {
        if (nodes[id].isVariable()) continue;
        auto it = direct.find(m_paths[id]);
        if (it == direct.end()) {
            it = direct.insert(m_paths[id], {});
            containers << m_paths[id];
        }
        it->push_back(static_cast<uint32_t>(id));
    }
    for (const QString& container : std::as_const(containers)) {
        const std::vector<uint32_t>& ops = direct[container];
        const int n = static_cast<int>(ops.size());
        if (n <= kMaxDirectOps) continue;
        const int run = std::max(kMinRunLength, (n + kMaxRuns - 1) / kMaxRuns);
        for (int start = 0; start < n; start += run) {
            const int end = std::min(n, start + run);
            const QString label = QStringLiteral("ops %1\u2013%2").arg(start + 1).arg(end);
            const QString path = container.isEmpty() ? label : container + QLatin1Char('/') + label;
            for (int k = start; k < end; ++k)
                m_paths[ops[static_cast<size_t>(k)]] = path;
        }
    }
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
