// Where GraphView looks after a layout: the first view, keeping the node or block the user was
// looking at in place across expand and collapse, and revealing a node (the view's placement; the
// rest of the view is in graph_view.cpp).

#include "gui/graph/graph_view.h"

#include "gui/graph/graph_cluster_item.h"
#include "gui/graph/graph_node_item.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QScrollBar>

namespace opscope::gui {

namespace {
constexpr double kInitialMinZoom = 0.8; // the first view zooms out no further, if that needs scrolling
} // namespace

void GraphView::placeViewAfterLayout()
{
    if (!m_layout.error.isEmpty()) {
        setTransform(QTransform());
        centerOn(m_scene->sceneRect().center());
        m_anchor = {};
        return;
    }
    if (m_initialView && !m_nodeItems.isEmpty()) {
        showInitialView();
        m_initialView = false;
    } else if (m_anchor.valid) {
        restoreAnchor();
    }
    m_anchor = {};
    if (!m_revealNode.isEmpty()) {
        const QString name = m_revealNode;
        const bool center = m_revealCenter;
        m_revealNode.clear();
        m_revealCenter = false;
        reveal(name, center);
    }
}

void GraphView::showInitialView()
{
    const QRectF bounds = m_scene->sceneRect();
    const QSizeF vp = viewport()->size();
    const double fit = std::min(vp.width() / bounds.width(), vp.height() / bounds.height());
    // Start readable: fit when the graph is small, otherwise show its top at a legible zoom.
    const double zoom = std::clamp(fit, kInitialMinZoom, 1.0);
    setTransform(QTransform::fromScale(zoom, zoom));
    if (fit >= zoom) {
        centerOn(bounds.center());
        return;
    }
    double x = bounds.center().x();
    if (bounds.width() * zoom > vp.width() && !m_items.empty()) x = itemSceneRect(m_items.front().key).center().x();
    centerOn(QPointF(x, bounds.top() + vp.height() / (2 * zoom)));
}

void GraphView::expandBlockAt(const QString& path, const QPointF& anchorScenePos)
{
    if (!m_model || m_model->isExpanded(path)) return;
    m_anchor = { true, {}, {}, path, QPointF(mapFromScene(anchorScenePos)) };
    if (m_selectedBlock == path) m_selectedBlock.clear();
    m_model->setExpanded(path, true);
}

void GraphView::collapseBlockAt(const QString& path, const QPointF& anchorScenePos)
{
    if (!m_model || !m_model->isExpanded(path)) return;
    m_anchor = { true, {}, {}, path, QPointF(mapFromScene(anchorScenePos)) };
    m_model->setExpanded(path, false);
    if (!m_model->isExpanded(path)) {
        // The selected node is now inside the block: select the block instead.
        if (!m_selectedNode.isEmpty() && m_model->itemKeyForNode(m_selectedNode) == GraphModel::blockKey(path)) {
            m_selectedNode.clear();
            m_selectedBlock = path;
        }
    }
}

void GraphView::captureDefaultAnchor()
{
    if (m_nodeItems.isEmpty()) return;
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    const QString selectedKey = !m_selectedBlock.isEmpty() ? GraphModel::blockKey(m_selectedBlock)
        : m_model && !m_selectedNode.isEmpty()             ? m_model->itemKeyForNode(m_selectedNode)
                                                           : QString();
    // The selected item if it is on screen, else the item nearest the middle of the view.
    GraphNodeItem* best = m_nodeItems.value(selectedKey);
    if (best && !visible.intersects(best->sceneCardRect())) best = nullptr;
    if (!best) {
        double bestDistance = std::numeric_limits<double>::max();
        for (GraphNodeItem* n : std::as_const(m_nodeItems)) {
            const QPointF d = n->sceneCardRect().center() - visible.center();
            const double distance = d.x() * d.x() + d.y() * d.y();
            if (distance < bestDistance) {
                best = n;
                bestDistance = distance;
            }
        }
    }
    if (!best) return;
    const GraphItem& item = best->item();
    const bool block = item.kind == GraphItemKind::Block;
    m_anchor = { true, item.key, block ? QString() : item.name, block ? item.name : QString(),
        QPointF(mapFromScene(best->sceneCardRect().center())) };
}

bool GraphView::restoreAnchor()
{
    QPointF target;
    bool found = false;
    if (GraphNodeItem* n = m_nodeItems.value(m_anchor.key)) {
        target = n->sceneCardRect().center();
        found = true;
    }
    if (!found && !m_anchor.blockPath.isEmpty()) {
        for (GraphClusterItem* c : m_clusterItems) {
            if (c->cluster().path != m_anchor.blockPath) continue;
            target = c->labelRect().center();
            found = true;
        }
        if (GraphNodeItem* n = m_nodeItems.value(GraphModel::blockKey(m_anchor.blockPath)); !found && n) {
            target = n->sceneCardRect().center();
            found = true;
        }
    }
    if (!found && !m_anchor.nodeName.isEmpty() && m_model) {
        if (GraphNodeItem* n = m_nodeItems.value(m_model->itemKeyForNode(m_anchor.nodeName))) {
            target = n->sceneCardRect().center();
            found = true;
        }
    }
    if (!found) return false;
    const QPointF centre = QRectF(viewport()->rect()).center();
    centerOn(target + (centre - m_anchor.viewportPos) / zoomFactor());
    return true;
}

void GraphView::reveal(const QString& nodeName, bool forceCenter)
{
    if (isLayoutPending()) {
        m_revealNode = nodeName;
        m_revealCenter = m_revealCenter || forceCenter;
        return;
    }
    if (!m_model) return;
    const GraphNodeItem* n = m_nodeItems.value(m_model->itemKeyForNode(nodeName));
    if (!n) return;
    const QRectF rect = n->sceneCardRect();
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect().adjusted(20, 20, -20, -20);
    if (forceCenter || !visible.contains(rect)) centerOn(rect.center());
}

} // namespace opscope::gui
