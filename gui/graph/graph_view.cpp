#include "gui/graph/graph_view.h"

#include "gui/graph/graph_cluster_item.h"
#include "gui/graph/graph_context_menu.h"
#include "gui/graph/graph_edge_item.h"
#include "gui/graph/graph_exporter.h"
#include "gui/graph/graph_node_item.h"
#include "gui/graph/graph_style.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <QApplication>
#include <QContextMenuEvent>
#include <QGraphicsPathItem>
#include <QGraphicsTextItem>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainterPath>
#include <QPainter>
#include <QScrollBar>
#include <QSet>
#include <QTimer>
#include <QWheelEvent>

namespace opscope::gui {

namespace {

constexpr double kMinZoom = 0.05;
constexpr double kMaxZoom = 4.0;
constexpr double kMaxFitZoom = 2.0;
constexpr double kSceneMargin = 30.0;
constexpr int kBusyHintDelayMs = 200;

} // namespace

GraphView::GraphView(QWidget* parent)
    : QGraphicsView(parent)
    , m_layouter(new GraphLayouter(this))
    , m_scene(new QGraphicsScene(this))
{
    setScene(m_scene);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorViewCenter);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setBackgroundBrush(QColor(0xfb, 0xfb, 0xfc));
    setFrameShape(QFrame::NoFrame);
    setFocusPolicy(Qt::StrongFocus);
    connect(m_layouter, &GraphLayouter::layoutReady, this, &GraphView::onLayoutReady);
}

GraphView::~GraphView() = default;

void GraphView::setModel(GraphModel* model)
{
    if (m_model == model) return;
    if (m_model) disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    m_selectedNode.clear();
    m_selectedBlock.clear();
    m_revealNode.clear();
    m_lastPaused.clear();
    m_anchor = {};
    m_initialView = true;
    if (model) {
        connect(model, &GraphModel::graphChanged, this, &GraphView::onGraphChanged);
        connect(model, &GraphModel::structureChanged, this, &GraphView::onStructureChanged);
        connect(model, &GraphModel::marksChanged, this, &GraphView::onMarksChanged);
        connect(model, &QObject::destroyed, this, [this] {
            m_model = nullptr;
            m_initialView = true;
            requestLayout();
        });
    }
    requestLayout();
}

void GraphView::selectNode(const QString& nodeName, bool center)
{
    if (!m_model) return;
    const int id = m_model->nodeId(nodeName);
    if (id < 0) return;
    if (m_model->isParameter(id) && !m_model->showParameters()) m_model->setShowParameters(true);
    m_model->expandToShow(nodeName);
    const bool changed = m_selectedNode != nodeName || !m_selectedBlock.isEmpty();
    m_selectedNode = nodeName;
    m_selectedBlock.clear();
    applySelection();
    if (center) reveal(nodeName, true);
    if (changed) emit nodeSelected(nodeName);
}

void GraphView::zoomIn()
{
    scaleBy(1.25);
}

void GraphView::zoomOut()
{
    scaleBy(0.8);
}

void GraphView::resetZoom()
{
    setZoomFactor(1.0);
}

void GraphView::fitToView()
{
    if (m_scene->items().isEmpty()) return;
    const QRectF target = m_scene->sceneRect();
    fitInView(target, Qt::KeepAspectRatio);
    if (zoomFactor() > kMaxFitZoom) setZoomFactor(kMaxFitZoom);
    if (zoomFactor() < kMinZoom) setZoomFactor(kMinZoom);
    centerOn(target.center());
}

double GraphView::zoomFactor() const
{
    return transform().m11();
}

void GraphView::setZoomFactor(double factor)
{
    const double current = zoomFactor();
    if (current > 0) scaleBy(factor / current);
}

void GraphView::scaleBy(double factor)
{
    const double current = zoomFactor();
    const double target = std::clamp(current * factor, kMinZoom, kMaxZoom);
    if (current <= 0 || std::abs(target / current - 1.0) < 1e-9) return;
    scale(target / current, target / current);
}

bool GraphView::exportPng(const QString& path, QString* error)
{
    // Selection is a view state, not part of the picture.
    for (GraphNodeItem* n : std::as_const(m_nodeItems))
        n->setSelected(false);
    for (GraphEdgeItem* e : m_edgeItems)
        e->setHighlighted(false);
    const bool ok = GraphExporter::writePng(m_scene, path, error);
    applySelection();
    return ok;
}

bool GraphView::exportSvg(const QString& path, QString* error)
{
    if (m_items.empty() && m_layout.error.isEmpty()) {
        if (error) *error = QStringLiteral("There is no graph to export.");
        return false;
    }
    return GraphExporter::writeSvg(path, m_layout, m_items, m_model, error);
}

QRectF GraphView::itemSceneRect(const QString& itemKey) const
{
    const GraphNodeItem* n = m_nodeItems.value(itemKey);
    return n ? n->sceneCardRect() : QRectF();
}

QString GraphView::itemKeyAt(const QPoint& viewportPos) const
{
    const GraphNodeItem* n = nodeItemAt(viewportPos);
    return n ? n->item().key : QString();
}

void GraphView::fillContextMenu(QMenu* menu, const QPoint& viewportPos)
{
    GraphContextMenu::fill(menu, this, viewportPos);
}

const GraphItem* GraphView::shownItemAt(const QPoint& viewportPos) const
{
    const GraphNodeItem* n = nodeItemAt(viewportPos);
    return n ? &n->item() : nullptr;
}

QString GraphView::clusterPathAt(const QPoint& viewportPos) const
{
    const GraphClusterItem* c = clusterAt(viewportPos, false);
    return c ? c->cluster().path : QString();
}

void GraphView::expandBlock(const QString& path)
{
    expandBlockAt(path, itemSceneRect(GraphModel::blockKey(path)).center());
}

void GraphView::collapseBlock(const QString& path)
{
    QPointF anchor = mapToScene(viewport()->rect().center());
    for (const GraphClusterItem* c : m_clusterItems)
        if (c->cluster().path == path) anchor = c->labelRect().center();
    collapseBlockAt(path, anchor);
}

void GraphView::wheelEvent(QWheelEvent* event)
{
    const int delta = event->angleDelta().y();
    if (delta == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    // Zoom around the cursor: keep the scene point under it in place.
    const QPoint pos = event->position().toPoint();
    const QPointF before = mapToScene(pos);
    const ViewportAnchor anchor = transformationAnchor();
    setTransformationAnchor(QGraphicsView::NoAnchor);
    scaleBy(std::pow(1.0015, delta));
    setTransformationAnchor(anchor);
    const QPoint shift = mapFromScene(before) - pos;
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() + shift.x());
    verticalScrollBar()->setValue(verticalScrollBar()->value() + shift.y());
    event->accept();
}

void GraphView::keyPressEvent(QKeyEvent* event)
{
    if (event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)) {
        QGraphicsView::keyPressEvent(event);
        return;
    }
    switch (event->key()) {
    case Qt::Key_F:
        fitToView();
        break;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomIn();
        break;
    case Qt::Key_Minus:
        zoomOut();
        break;
    case Qt::Key_0:
        resetZoom();
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (!m_selectedBlock.isEmpty())
            expandBlock(m_selectedBlock);
        else
            QGraphicsView::keyPressEvent(event);
        return;
    default:
        QGraphicsView::keyPressEvent(event);
        return;
    }
    event->accept();
}

void GraphView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        m_pressPos = event->pos();
        m_pressed = true;
    }
    QGraphicsView::mousePressEvent(event);
}

void GraphView::mouseReleaseEvent(QMouseEvent* event)
{
    QGraphicsView::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton || !m_pressed) return;
    m_pressed = false;
    if ((event->pos() - m_pressPos).manhattanLength() < QApplication::startDragDistance()) handleClick(event->pos());
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton) {
        QGraphicsView::mouseDoubleClickEvent(event);
        return;
    }
    event->accept();
    if (GraphNodeItem* n = nodeItemAt(event->pos())) {
        const GraphItem& item = n->item();
        if (item.kind == GraphItemKind::Block)
            expandBlockAt(item.name, n->sceneCardRect().center());
        else if (n->inGutter(n->mapFromScene(mapToScene(event->pos()))))
            emit breakpointToggleRequested(item.name, OpPhase::Before); // each click in the gutter toggles
        else
            emit nodeActivated(item.name);
        return;
    }
    if (GraphClusterItem* c = clusterAt(event->pos(), true))
        collapseBlockAt(c->cluster().path, c->labelRect().center());
}

void GraphView::contextMenuEvent(QContextMenuEvent* event)
{
    QMenu menu(this);
    fillContextMenu(&menu, event->pos());
    if (!menu.isEmpty()) menu.exec(event->globalPos());
    event->accept();
}

void GraphView::drawForeground(QPainter* painter, const QRectF& rect)
{
    QGraphicsView::drawForeground(painter, rect);
    const bool empty = !m_model || !m_model->graph();
    const bool busy = isLayoutPending();
    if (!empty && !busy) return;
    painter->save();
    painter->resetTransform();
    painter->setRenderHint(QPainter::Antialiasing);
    QFont font = GraphStyle::font(GraphStyle::Role::Name);
    if (empty) {
        font.setPixelSize(13);
        painter->setFont(font);
        painter->setPen(GraphStyle::textColor(GraphStyle::Role::Shape));
        painter->drawText(viewport()->rect(), Qt::AlignCenter, QStringLiteral("No model loaded"));
    } else {
        painter->setFont(font);
        const QString text = QStringLiteral("Laying out\u2026");
        const QRectF pill(viewport()->width() - 104, 10, 92, 22);
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(0x33, 0x3a, 0x45, 200));
        painter->drawRoundedRect(pill, 11, 11);
        painter->setPen(Qt::white);
        painter->drawText(pill, Qt::AlignCenter, text);
    }
    painter->restore();
}

void GraphView::onGraphChanged()
{
    m_selectedNode.clear();
    m_selectedBlock.clear();
    m_revealNode.clear();
    m_revealCenter = false;
    m_lastPaused.clear();
    m_anchor = {};
    m_initialView = true;
}

void GraphView::onStructureChanged()
{
    if (!m_initialView && !m_anchor.valid && m_revealNode.isEmpty()) captureDefaultAnchor();
    requestLayout();
}

void GraphView::onMarksChanged()
{
    m_scene->update();
    const QString paused = m_model ? m_model->pausedNode() : QString();
    if (paused == m_lastPaused) return;
    m_lastPaused = paused;
    if (!paused.isEmpty()) reveal(paused, false);
}

void GraphView::requestLayout()
{
    LayoutRequest request;
    if (m_model) {
        request.items = m_model->items();
        request.edges = m_model->edges();
    }
    // A parameter's box already shows its shape; labels on its edges would only crowd the drawing.
    QSet<QString> parameters;
    for (const GraphItem& item : request.items)
        if (item.parameter) parameters.insert(item.key);
    for (GraphEdge& edge : request.edges)
        if (parameters.contains(edge.from)) edge.label.clear();
    for (const GraphItem& item : request.items)
        request.sizes.insert(item.key, GraphStyle::itemSize(item));
    m_requestedItems = request.items;
    m_pendingGeneration = m_layouter->request(std::move(request));
    // Repaint for the "Laying out…" hint only if the layout takes a noticeable time.
    const quint64 generation = m_pendingGeneration;
    QTimer::singleShot(kBusyHintDelayMs, this, [this, generation] {
        if (m_pendingGeneration == generation) viewport()->update();
    });
}

void GraphView::onLayoutReady(const LayoutResult& result)
{
    if (result.generation != m_pendingGeneration) return;
    m_pendingGeneration = 0;
    m_items = std::move(m_requestedItems);
    m_requestedItems.clear();
    buildScene(result);
    placeViewAfterLayout();
    viewport()->update();
    emit layoutFinished();
}

void GraphView::buildScene(const LayoutResult& result)
{
    m_scene->clear();
    m_nodeItems.clear();
    m_edgeItems.clear();
    m_clusterItems.clear();
    m_fusionFrames.clear();
    m_layout = result;
    if (!result.error.isEmpty()) {
        auto* text = m_scene->addText(QString());
        text->setTextWidth(560);
        text->setDefaultTextColor(GraphStyle::textColor(GraphStyle::Role::Name));
        text->setHtml(QStringLiteral("<p><b>The graph could not be laid out.</b></p><p>%1</p>")
                          .arg(result.error.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"))));
        m_scene->setSceneRect(text->boundingRect().adjusted(-40, -40, 40, 40));
        return;
    }
    for (const LayoutResult::Cluster& c : result.clusters) {
        auto* item = new GraphClusterItem(c);
        item->setZValue(-100 + c.depth);
        m_scene->addItem(item);
        m_clusterItems.push_back(item);
    }
    for (const LayoutResult::Edge& e : result.edges) {
        auto* item = new GraphEdgeItem(e);
        m_scene->addItem(item);
        m_edgeItems.push_back(item);
    }
    for (const GraphItem& item : m_items) {
        const auto it = result.nodes.constFind(item.key);
        if (it == result.nodes.constEnd()) continue;
        auto* node = new GraphNodeItem(item, it->size(), m_model);
        node->setPos(it->topLeft());
        node->setZValue(1);
        m_scene->addItem(node);
        m_nodeItems.insert(item.key, node);
    }
    addFusionFrames();
    m_scene->setSceneRect(result.bounds.adjusted(-kSceneMargin, -kSceneMargin, kSceneMargin, kSceneMargin));
    applySelection();
}

QStringList GraphView::fusionFrameTips() const
{
    QStringList tips;
    for (const QGraphicsPathItem* f : m_fusionFrames)
        tips << f->toolTip();
    return tips;
}

void GraphView::addFusionFrames()
{
    // One dashed frame around each fusion group whose nodes all have boxes of their own (none
    // inside a collapsed block), behind the boxes, with the fusion named in its tooltip.
    m_fusionFrames.clear();
    if (!m_model) return;
    for (const FusionGroup& f : m_model->fusionGroups()) {
        QRectF box;
        bool shown = true;
        for (const QString& name : f.nodes) {
            const GraphNodeItem* n = m_nodeItems.value(m_model->itemKeyForNode(name));
            shown = shown && n && n->item().kind == GraphItemKind::Op && n->item().name == name;
            if (!shown) break;
            box |= n->sceneBoundingRect();
        }
        if (!shown) continue;
        QPainterPath path;
        path.addRoundedRect(box.adjusted(-7, -4, 7, 4), 8, 8);
        auto* frame = new QGraphicsPathItem(path);
        QPen pen(GraphStyle::fusionColor(), 1.6, Qt::DashLine);
        pen.setCosmetic(true);
        frame->setPen(pen);
        QColor fill = GraphStyle::fusionColor();
        fill.setAlpha(18);
        frame->setBrush(fill);
        frame->setZValue(0.5);
        frame->setToolTip(f.tip);
        m_scene->addItem(frame);
        m_fusionFrames.push_back(frame);
    }
}

void GraphView::applySelection()
{
    QString key;
    if (!m_selectedBlock.isEmpty())
        key = GraphModel::blockKey(m_selectedBlock);
    else if (m_model && !m_selectedNode.isEmpty())
        key = m_model->itemKeyForNode(m_selectedNode);
    for (auto it = m_nodeItems.cbegin(); it != m_nodeItems.cend(); ++it)
        it.value()->setSelected(!key.isEmpty() && it.key() == key);
    for (GraphEdgeItem* e : m_edgeItems)
        e->setHighlighted(!key.isEmpty() && (e->edge().from == key || e->edge().to == key));
}

void GraphView::handleClick(const QPoint& viewportPos)
{
    GraphNodeItem* n = nodeItemAt(viewportPos);
    if (!n) return;
    const GraphItem& item = n->item();
    if (n->inGutter(n->mapFromScene(mapToScene(viewportPos)))) {
        emit breakpointToggleRequested(item.name, OpPhase::Before);
        return;
    }
    if (item.kind == GraphItemKind::Block) {
        m_selectedBlock = item.name;
        m_selectedNode.clear();
        applySelection();
        emit blockSelected(item.name);
        return;
    }
    m_selectedNode = item.name;
    m_selectedBlock.clear();
    applySelection();
    emit nodeSelected(item.name);
}

GraphNodeItem* GraphView::nodeItemAt(const QPoint& viewportPos) const
{
    for (QGraphicsItem* item : items(viewportPos))
        if (item->type() == GraphNodeItem::Type) return static_cast<GraphNodeItem*>(item);
    return nullptr;
}

GraphClusterItem* GraphView::clusterAt(const QPoint& viewportPos, bool labelOnly) const
{
    const QPointF scenePos = mapToScene(viewportPos);
    for (QGraphicsItem* item : items(viewportPos)) {
        if (item->type() != GraphClusterItem::Type) continue;
        auto* c = static_cast<GraphClusterItem*>(item);
        if (!labelOnly || c->labelRect().contains(scenePos)) return c;
    }
    return nullptr;
}

} // namespace opscope::gui
