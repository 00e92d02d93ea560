#pragma once

#include "gui/graph/graph_model.h"

#include <optional>
#include <vector>

#include <QFutureWatcher>
#include <QHash>
#include <QMetaType>
#include <QObject>
#include <QPainterPath>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QThreadPool>

namespace opscope::gui {

/// What to lay out: a snapshot of the model's items and edges plus each item's box size (scene units,
/// which are also Graphviz points). `generation` identifies the request; results carry it back.
struct LayoutRequest {
    quint64 generation = 0;
    std::vector<GraphItem> items;
    std::vector<GraphEdge> edges;
    QHash<QString, QSizeF> sizes; ///< by item key; missing sizes get a default box
};

/// Geometry in Qt scene coordinates (y down, top-left of bounds at the origin).
struct LayoutResult {
    quint64 generation = 0;
    QHash<QString, QRectF> nodes; ///< by item key
    struct Edge {
        QString from;
        QString to;
        QString label;
        QPainterPath path; ///< ends at the arrow tip when `arrow`
        QPointF labelPos; ///< centre of the label; meaningless when the label is empty
        bool arrow = false;
    };
    std::vector<Edge> edges;
    struct Cluster {
        QString path; ///< block path
        QString label; ///< block display name
        QRectF rect;
        int depth = 1;
    };
    std::vector<Cluster> clusters; ///< parents before children
    QRectF bounds;
    QString error; ///< non-empty when the layout failed (then the geometry is empty)
};

/// Lays out with Graphviz `dot` (top to bottom); expanded blocks become nested clusters labelled with
/// their names. Pure and callable from any thread; calls into Graphviz are serialised by a mutex since
/// Graphviz is not thread-safe. Errors are returned in LayoutResult::error.
LayoutResult computeLayout(const LayoutRequest& request);

/// Runs computeLayout() on a worker thread, one layout at a time. A request made while one runs waits
/// and replaces any request already waiting; layoutReady() is emitted on the owner's thread for the
/// latest request only (results of superseded requests are dropped). Destruction waits for a running
/// layout to finish.
class GraphLayouter : public QObject {
    Q_OBJECT
public:
    explicit GraphLayouter(QObject* parent = nullptr);
    ~GraphLayouter() override;

    /// Numbers the request with a new generation (overwriting request.generation) and returns it.
    quint64 request(LayoutRequest request);
    /// True while a layout runs or waits.
    bool isBusy() const { return m_running || m_queued.has_value(); }
    quint64 latestGeneration() const { return m_latest; }

signals:
    void layoutReady(const opscope::gui::LayoutResult& result);

private:
    void start(LayoutRequest request);
    void onFinished();

    QThreadPool m_pool;
    QFutureWatcher<LayoutResult> m_watcher;
    std::optional<LayoutRequest> m_queued;
    bool m_running = false;
    quint64 m_latest = 0;
};

} // namespace opscope::gui

Q_DECLARE_METATYPE(opscope::gui::LayoutResult)
