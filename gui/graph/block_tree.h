#pragma once

#include "graph/graph.h"

#include <cstdint>
#include <vector>

#include <QHash>
#include <QString>
#include <QStringList>

namespace opscope::gui {

/// Block name for display: the last path component without its parent's name as prefix
/// ("net0/net0_dense0" gives "dense0").
QString blockDisplayName(const QString& blockPath);
/// Node name for display inside the frame of `blockPath`: the block's name prefix removed, except that a
/// block's own forward op keeps it ("net0_dense0_relu_fwd" in net0/net0_dense0 gives "relu_fwd",
/// "net0_dense0_fwd" gives "dense0_fwd").
QString nodeDisplayName(const QString& nodeName, const QString& blockPath);

/// The block hierarchy of a graph: each node's block path and, per block, its parent, depth and ops.
/// Ops' paths are the engine's blockPaths() (graph/block_paths.h: Node::blockPath, or paths derived
/// from names for graphs loaded from files, large blocks split into runs "ops 1–50"), so the frames
/// drawn are the ones Step Out leaves. A parameter sits in the block of the first op that reads it;
/// data inputs stay at the top level.
class BlockTree {
public:
    struct Block {
        QString parent; ///< "" for a top-level block
        int depth = 1;
        std::vector<uint32_t> ops; ///< all ops inside, all levels, in graph order
    };

    /// `parameter[id]` tells which variables are parameters.
    void build(const Graph& graph, const std::vector<bool>& parameter);
    void clear();

    /// Block path of a node ("" at the top level).
    const QString& pathOf(uint32_t nodeId) const { return m_paths[nodeId]; }
    /// The node's block path and each of its prefixes, outermost first.
    const QStringList& prefixesOf(uint32_t nodeId) const { return m_prefixes[nodeId]; }
    const Block* block(const QString& path) const;
    int opCount(const QString& path) const;
    /// Every block path, parents before children, in graph order.
    const QStringList& order() const { return m_order; }

    static QString lastComponent(const QString& path);
    static QString parentPath(const QString& path);
    /// "a/b/c" gives a, a/b, a/b/c.
    static QStringList prefixes(const QString& path);

private:
    void registerBlocks(const Graph& graph);

    std::vector<QString> m_paths;
    std::vector<QStringList> m_prefixes;
    QHash<QString, Block> m_blocks;
    QStringList m_order;
};

} // namespace opscope::gui
