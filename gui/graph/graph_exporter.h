#pragma once

#include "gui/graph/graph_layout.h"
#include "gui/graph/graph_model.h"

#include <vector>

#include <QString>

class QGraphicsScene;

namespace opscope::gui {

/// Writes the graph drawing to files: a PNG rendered from the scene at twice its size on white, or a
/// standalone SVG document built from the layout (clusters, edges with arrowheads and labels, boxes
/// with their text and debugger marks, drawn like the view).
class GraphExporter {
public:
    /// False with `error` set when the scene is empty, too large or the file cannot be written.
    static bool writePng(QGraphicsScene* scene, const QString& path, QString* error);
    /// `model` may be null (no marks). The document's size is the layout's bounds plus a margin.
    static QString toSvg(const LayoutResult& layout, const std::vector<GraphItem>& items, const GraphModel* model);
    /// Writes toSvg() to `path`; false with `error` set when the file cannot be written.
    static bool writeSvg(const QString& path, const LayoutResult& layout, const std::vector<GraphItem>& items,
        const GraphModel* model, QString* error);
};

} // namespace opscope::gui
