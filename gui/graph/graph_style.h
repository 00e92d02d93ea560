#pragma once

#include "gui/graph/graph_model.h"

#include <vector>

#include <QColor>
#include <QFont>
#include <QPainterPath>
#include <QPolygonF>
#include <QRectF>
#include <QSizeF>
#include <QString>

namespace opscope::gui {

/// Fonts, colours, sizes and text placement of the graph drawing, shared by the scene items and the
/// SVG export so both show the same picture. Sizes are in scene units (pixels at zoom 1; Graphviz
/// points). Fonts use pixel sizes so the layout does not depend on the screen's DPI.
class GraphStyle {
public:
    enum class Role { Title, Detail, Name, Shape, ParamName, ParamShape, Edge, Cluster, Badge };

    /// One line of text in an item's local coordinates (baseline start).
    struct TextLine {
        QString text;
        Role role;
        QPointF baseline;
    };

    static constexpr double kGutter = 14.0; ///< left margin holding breakpoint and paused marks
    static constexpr double kRadius = 5.0;
    static constexpr double kStackOffset = 4.0; ///< offset of each card behind a collapsed block
    static constexpr double kClusterRadius = 8.0;
    static constexpr double kClusterLabelHeight = 18.0;

    static QFont font(Role role);
    static QColor textColor(Role role);

    static QColor selectionColor() { return QColor(0x2f, 0x7f, 0xe0); }
    static QColor pausedColor() { return QColor(0xf0, 0xa0, 0x00); }
    static QColor breakpointColor() { return QColor(0xe0, 0x41, 0x3a); }
    static QColor conditionColor() { return QColor(0xff, 0xd5, 0x4a); }
    static QColor executedColor() { return QColor(0x3d, 0xa3, 0x5d); }
    static QColor nanColor() { return QColor(0xd9, 0x30, 0x25); }
    static QColor edgeColor() { return QColor(0x8a, 0x90, 0x99); }
    static QColor clusterFill(int depth);
    static QColor clusterBorder() { return QColor(0xc3, 0xc9, 0xd2); }
    /// The frame around nodes that run fused when nothing watches them.
    static QColor fusionColor() { return QColor(0x8e, 0x5c, 0xd9); }
    /// A comparison's colours: green (agree) through yellow to red (severity 1); grey where nothing
    /// was compared (severity < 0); magenta marks the first divergent node.
    static QColor divergenceColor(double severity);
    static QColor firstDivergentColor() { return QColor(0xd5, 0x00, 0xf9); }
    static QColor borderColor(const GraphItem& item);
    static QColor fillColor(const GraphItem& item);

    /// Box size that fits the item's text (a collapsed block includes its stacked cards).
    static QSizeF itemSize(const GraphItem& item);
    /// The front card of an item of this size (smaller than the size for a block).
    static QRectF cardRect(const GraphItem& item, const QSizeF& size);
    static bool hasGutter(const GraphItem& item) { return !item.parameter; }
    /// Node name without the enclosing block's prefix; the block name for a block.
    static QString displayName(const GraphItem& item);
    /// The text lines of an item of this size, elided to fit.
    static std::vector<TextLine> textLines(const GraphItem& item, const QSizeF& size);
    /// Centre of the breakpoint dot (and of the paused arrow) in item coordinates.
    static QPointF markerCentre(const GraphItem& item);
    /// The paused arrow in the gutter, pointing right, around markerCentre().
    static QPolygonF pausedArrow(const GraphItem& item);
    /// Badge at the top-right corner for NaN/Inf.
    static QRectF nanBadgeRect(const GraphItem& item, const QSizeF& size);
    /// Filled arrowhead at the end of an edge path.
    static QPolygonF arrowHead(const QPainterPath& path);
    /// Rect of a cluster's name tab (double-clicking it collapses the block).
    static QRectF clusterLabelRect(const QRectF& clusterRect, const QString& label);
};

} // namespace opscope::gui
