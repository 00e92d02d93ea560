#pragma once

#include <QPoint>

class QMenu;

namespace opscope::gui {

class GraphView;

/// Builds the graph view's context menu for what is under the cursor: breakpoints, run to here, expand
/// or collapse a block and copy a name on a box; collapse on a block's frame; fit, parameters and
/// expansion on the background. The actions emit the view's request signals.
class GraphContextMenu {
public:
    static void fill(QMenu* menu, GraphView* view, const QPoint& viewportPos);
};

} // namespace opscope::gui
