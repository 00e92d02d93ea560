#include "gui/graph/graph_layout.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <mutex>
#include <string>

#include <QByteArray>
#include <QtConcurrent/QtConcurrentRun>

namespace opscope::gui {

namespace {

constexpr double kPointsPerInch = 72.0;
constexpr double kMinSide = 4.0;
constexpr double kMaxSide = 4000.0;
const QSizeF kDefaultSize(120.0, 48.0);
// Above this many boxes dot spends its time in crossing minimisation; fewer passes keep it bearable.
constexpr size_t kLargeGraph = 300;

std::mutex& graphvizMutex()
{
    static std::mutex mutex;
    return mutex;
}

// Guarded by graphvizMutex().
std::string& errorText()
{
    static std::string text;
    return text;
}

int collectError(char* message)
{
    if (message) errorText() += message;
    return 0;
}

GVC_t* context()
{
    static GVC_t* gvc = gvContext();
    return gvc;
}

void set(void* object, const char* name, const QByteArray& value)
{
    agsafeset(object, const_cast<char*>(name), const_cast<char*>(value.constData()), const_cast<char*>(""));
}

QByteArray number(double v)
{
    return QByteArray::number(v, 'f', 4);
}

// Graphviz reads escapes such as \N and \l in labels; a literal backslash must be doubled.
QByteArray labelText(const QString& text)
{
    QString escaped = text;
    escaped.replace(QLatin1Char('\\'), QStringLiteral("\\\\"));
    return escaped.toUtf8();
}

QSizeF boxSize(const LayoutRequest& request, const QString& key)
{
    const QSizeF size = request.sizes.value(key, kDefaultSize);
    auto clampSide
        = [](double v, double fallback) { return std::isfinite(v) ? std::clamp(v, kMinSide, kMaxSide) : fallback; };
    return QSizeF(clampSide(size.width(), kDefaultSize.width()), clampSide(size.height(), kDefaultSize.height()));
}

QStringList prefixesOf(const QString& path)
{
    QStringList out;
    const QStringList parts = path.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    QString p;
    for (const QString& part : parts) {
        p = p.isEmpty() ? part : p + QLatin1Char('/') + part;
        out << p;
    }
    return out;
}

/// Maps Graphviz points (y up) into scene coordinates (y down, origin at the top-left).
struct Flip {
    boxf bb;
    QPointF operator()(const pointf& p) const { return QPointF(p.x - bb.LL.x, bb.UR.y - p.y); }
    QRectF operator()(const boxf& b) const
    {
        return QRectF(QPointF(b.LL.x - bb.LL.x, bb.UR.y - b.UR.y), QPointF(b.UR.x - bb.LL.x, bb.UR.y - b.LL.y));
    }
};

struct ClusterPlan {
    QStringList paths; ///< paths drawn as clusters, parents first
    QHash<QString, QString> parent; ///< nearest enclosing cluster ("" for the root graph)
};

// A block is framed when at least two boxes sit inside it; a frame around a single box says nothing.
ClusterPlan planClusters(const LayoutRequest& request)
{
    QHash<QString, int> members;
    QStringList order;
    for (const GraphItem& item : request.items) {
        for (const QString& p : prefixesOf(item.blockPath)) {
            if (!members.contains(p)) order << p;
            ++members[p];
        }
    }
    ClusterPlan plan;
    for (const QString& p : std::as_const(order)) {
        if (members.value(p) < 2) continue;
        QString enclosing;
        for (const QString& q : prefixesOf(p)) {
            if (q != p && members.value(q) >= 2) enclosing = q;
        }
        plan.paths << p;
        plan.parent.insert(p, enclosing);
    }
    return plan;
}

QString innermostCluster(const QString& blockPath, const ClusterPlan& plan)
{
    QString found;
    for (const QString& p : prefixesOf(blockPath))
        if (plan.parent.contains(p)) found = p;
    return found;
}

QPainterPath splinePath(const splines* spl, const Flip& flip, bool* arrow)
{
    QPainterPath path;
    for (int i = 0; spl && i < spl->size; ++i) {
        const bezier& bz = spl->list[i];
        if (bz.size < 1) continue;
        path.moveTo(flip(bz.list[0]));
        for (int j = 1; j + 2 < bz.size; j += 3)
            path.cubicTo(flip(bz.list[j]), flip(bz.list[j + 1]), flip(bz.list[j + 2]));
        if (bz.eflag) {
            path.lineTo(flip(bz.ep));
            *arrow = true;
        }
    }
    return path;
}

// One attempt with or without clusters; returns false with result->error set when dot fails.
bool runDot(const LayoutRequest& request, bool withClusters, LayoutResult* result)
{
    GVC_t* gvc = context();
    if (!gvc) {
        result->error = QStringLiteral("Graphviz could not be initialised");
        return false;
    }
    errorText().clear();
    Agraph_t* g = agopen(const_cast<char*>("opscope"), Agdirected, nullptr);
    if (!g) {
        result->error = QStringLiteral("Graphviz could not create a graph");
        return false;
    }
    set(g, "rankdir", "TB");
    set(g, "nodesep", "0.3");
    set(g, "ranksep", "0.35");
    set(g, "fontname", "Helvetica");
    set(g, "fontsize", "11");
    set(g, "labeljust", "l");
    set(g, "labelloc", "t");
    if (request.items.size() > kLargeGraph) {
        set(g, "mclimit", "0.3");
        set(g, "nslimit", "3");
    }
    agattr(g, AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
    agattr(g, AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
    agattr(g, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));
    agattr(g, AGEDGE, const_cast<char*>("fontname"), const_cast<char*>("Helvetica"));
    agattr(g, AGEDGE, const_cast<char*>("fontsize"), const_cast<char*>("9"));
    agattr(g, AGEDGE, const_cast<char*>("arrowsize"), const_cast<char*>("0.7"));

    const ClusterPlan plan = withClusters ? planClusters(request) : ClusterPlan {};
    QHash<QString, Agraph_t*> subgraphs;
    for (int i = 0; i < plan.paths.size(); ++i) {
        const QString& path = plan.paths[i];
        Agraph_t* parent = plan.parent.value(path).isEmpty() ? g : subgraphs.value(plan.parent.value(path), g);
        const QByteArray name = "cluster_" + QByteArray::number(i);
        Agraph_t* sg = agsubg(parent, const_cast<char*>(name.constData()), 1);
        set(sg, "label", labelText(blockDisplayName(path)));
        set(sg, "margin", "10");
        subgraphs.insert(path, sg);
    }

    QHash<QString, Agnode_t*> nodes;
    std::vector<std::pair<const GraphItem*, Agnode_t*>> created;
    for (size_t i = 0; i < request.items.size(); ++i) {
        const GraphItem& item = request.items[i];
        if (nodes.contains(item.key)) continue;
        Agraph_t* owner = subgraphs.value(innermostCluster(item.blockPath, plan), g);
        const QByteArray name = "n" + QByteArray::number(static_cast<qulonglong>(i));
        Agnode_t* n = agnode(owner, const_cast<char*>(name.constData()), 1);
        const QSizeF size = boxSize(request, item.key);
        set(n, "width", number(size.width() / kPointsPerInch));
        set(n, "height", number(size.height() / kPointsPerInch));
        nodes.insert(item.key, n);
        created.emplace_back(&item, n);
    }

    std::vector<std::pair<const GraphEdge*, Agedge_t*>> edges;
    for (const GraphEdge& edge : request.edges) {
        Agnode_t* tail = nodes.value(edge.from);
        Agnode_t* head = nodes.value(edge.to);
        if (!tail || !head || tail == head) continue;
        Agedge_t* e = agedge(g, tail, head, nullptr, 1);
        if (!e) continue;
        if (!edge.label.isEmpty()) set(e, "label", labelText(edge.label));
        edges.emplace_back(&edge, e);
    }

    if (gvLayout(gvc, g, "dot") != 0) {
        const QString detail = QString::fromStdString(errorText()).trimmed();
        result->error = QStringLiteral("Graphviz dot failed") + (detail.isEmpty() ? QString() : ": " + detail);
        agclose(g);
        return false;
    }

    const Flip flip { GD_bb(g) };
    result->bounds = flip(GD_bb(g)).normalized();
    for (const auto& [item, n] : created) {
        const QSizeF size = boxSize(request, item->key);
        const QPointF centre = flip(ND_coord(n));
        result->nodes.insert(item->key, QRectF(centre - QPointF(size.width() / 2, size.height() / 2), size));
    }
    for (const auto& [edge, e] : edges) {
        LayoutResult::Edge out { edge->from, edge->to, edge->label, {}, {}, false };
        out.path = splinePath(ED_spl(e), flip, &out.arrow);
        if (out.path.isEmpty()) {
            // dot leaves no spline in rare cluster cases: fall back to a straight line.
            const QRectF a = result->nodes.value(edge->from);
            const QRectF b = result->nodes.value(edge->to);
            out.path.moveTo(QPointF(a.center().x(), a.bottom()));
            out.path.lineTo(QPointF(b.center().x(), b.top()));
            out.arrow = true;
        }
        const textlabel_t* label = ED_label(e);
        out.labelPos = label && label->set ? flip(label->pos) : out.path.pointAtPercent(0.5);
        result->edges.push_back(std::move(out));
    }
    for (const QString& path : std::as_const(plan.paths)) {
        const int depth = static_cast<int>(prefixesOf(path).size());
        result->clusters.push_back({ path, blockDisplayName(path), flip(GD_bb(subgraphs.value(path))), depth });
    }
    gvFreeLayout(gvc, g);
    agclose(g);
    return true;
}

// Frames drawn around their members when dot could not lay out clusters.
void addMemberFrames(const LayoutRequest& request, LayoutResult* result)
{
    const ClusterPlan plan = planClusters(request);
    for (const QString& path : std::as_const(plan.paths)) {
        QRectF rect;
        for (const GraphItem& item : request.items) {
            if (item.blockPath == path || item.blockPath.startsWith(path + QLatin1Char('/')))
                rect = rect.united(result->nodes.value(item.key));
        }
        if (rect.isEmpty()) continue;
        const int depth = static_cast<int>(prefixesOf(path).size());
        const double pad = 6.0 + 4.0 * std::max(0, 6 - depth);
        result->clusters.push_back({ path, blockDisplayName(path), rect.adjusted(-pad, -pad - 14, pad, pad), depth });
    }
}

} // namespace

LayoutResult computeLayout(const LayoutRequest& request)
{
    LayoutResult result;
    result.generation = request.generation;
    if (request.items.empty()) return result;

    std::lock_guard<std::mutex> lock(graphvizMutex());
    const agusererrf previousHandler = agseterrf(collectError);
    const agerrlevel_t previousLevel = agseterr(AGERR);
    if (!runDot(request, true, &result)) {
        const QString firstError = result.error;
        result = LayoutResult {};
        result.generation = request.generation;
        if (runDot(request, false, &result))
            addMemberFrames(request, &result);
        else
            result.error = firstError;
    }
    agseterr(previousLevel);
    agseterrf(previousHandler);
    if (!result.error.isEmpty()) {
        result.nodes.clear();
        result.edges.clear();
        result.clusters.clear();
        result.bounds = QRectF();
    }
    return result;
}

GraphLayouter::GraphLayouter(QObject* parent)
    : QObject(parent)
{
    m_pool.setMaxThreadCount(1);
    connect(&m_watcher, &QFutureWatcher<LayoutResult>::finished, this, &GraphLayouter::onFinished);
}

GraphLayouter::~GraphLayouter()
{
    m_watcher.disconnect(this);
    m_queued.reset();
    m_pool.waitForDone();
}

quint64 GraphLayouter::request(LayoutRequest request)
{
    request.generation = ++m_latest;
    if (m_running)
        m_queued = std::move(request);
    else
        start(std::move(request));
    return m_latest;
}

void GraphLayouter::start(LayoutRequest request)
{
    m_running = true;
    m_watcher.setFuture(QtConcurrent::run(&m_pool, [request = std::move(request)] {
        try {
            return computeLayout(request);
        } catch (const std::exception& e) {
            LayoutResult failed;
            failed.generation = request.generation;
            failed.error = QStringLiteral("Graph layout failed: ") + QString::fromUtf8(e.what());
            return failed;
        }
    }));
}

void GraphLayouter::onFinished()
{
    m_running = false;
    const LayoutResult result = m_watcher.future().result();
    if (m_queued) {
        LayoutRequest next = std::move(*m_queued);
        m_queued.reset();
        start(std::move(next));
    }
    if (result.generation == m_latest) emit layoutReady(result);
}

} // namespace opscope::gui
