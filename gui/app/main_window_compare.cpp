// The window's comparisons: Debug ▸ Compare… sets up run B beside the loaded model (A); both are
// recorded on worker threads; the graph is coloured by each node's divergence with the first
// divergent node marked, and the Compare dock shows A and B of the selected node side by side.

#include "gui/app/main_window.h"

#include "gui/compare/compare_bar.h"
#include "gui/compare/compare_dialog.h"
#include "gui/compare/compare_view.h"
#include "gui/compare/divergence_scale.h"
#include "gui/graph/graph_model.h"
#include "gui/graph/graph_panel.h"
#include "gui/graph/graph_view.h"
#include "gui/inputs/input_panel.h"
#include "gui/panels/run_record_panel.h"
#include "gui/tensor/tensor_inspector.h"

#include <QAction>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QLocale>
#include <QFileInfo>
#include <QLayout>
#include <QMenu>
#include <QStatusBar>

#include <algorithm>
#include <set>
#include <utility>

namespace opscope::gui {

void MainWindow::buildCompare(QMenu* debugMenu)
{
    m_compareRunner = new CompareRunner(m_controller, this);
    m_compareBar = new CompareBar(m_graph);
    m_compareBar->hide();
    // Under the graph's toolbar, above its find and notice bars.
    if (auto* box = qobject_cast<QBoxLayout*>(m_graph->layout())) box->insertWidget(1, m_compareBar);
    m_compareView = new CompareView(this);
    m_compareDock = new QDockWidget(tr("Compare A ↔ B"), this);
    m_compareDock->setObjectName(QStringLiteral("compareDock"));
    m_compareDock->setWidget(m_compareView);
    addDockWidget(Qt::RightDockWidgetArea, m_compareDock);
    m_compareDock->hide();

    QAction* compare = debugMenu->addAction(tr("&Compare…"), this, [this] { openCompareDialog(); });
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    compare->setToolTip(tr("Run the model again as B (other kernels, precision, checkpoint or model, or a saved "
                           "run) and find where the two runs part ways"));
    debugMenu->addAction(tr("End Comparison"), this, [this] { clearCompare(); });

    connect(m_compareRunner, &CompareRunner::finished, this, &MainWindow::onCompareFinished);
    connect(m_compareRunner, &CompareRunner::failed, this, [this](const QString& error) {
        m_compareBar->hide();
        showMessage(tr("Compare"), error);
        if (!m_options.compare.isEmpty() && (!m_options.screenshot.isEmpty() || m_options.quit))
            m_exitStatus = kExitRunFailed;
    });
    connect(m_compareBar, &CompareBar::metricChanged, this, [this] { recolourCompare(); });
    connect(m_compareBar, &CompareBar::closeRequested, this, [this] { clearCompare(); });
    connect(m_compareBar, &CompareBar::firstDivergentClicked, this, [this](const QString& node) {
        m_graph->view()->selectNode(node, true);
        showCompareFor(node);
    });
    connect(m_graph->view(), &GraphView::nodeSelected, this, [this](const QString& node) { showCompareFor(node); });
    connect(m_graph->view(), &GraphView::precisionCompareRequested, this, [this](const QString& target, bool bf16) {
        CompareSpec spec;
        spec.tol = m_compareSpec.tol;
        spec.precisionB = { { target.toStdString(), bf16 ? Precision::BFloat16 : Precision::Float16 } };
        startCompare(spec);
    });
    connect(m_inspector, &TensorInspector::currentTensorChanged, this, [this](const QString& name) {
        if (m_compare && !name.isEmpty()) m_compareView->showTensor(name);
    });
    // Another model (or an attach, a detach): the engine that compared has ended it itself.
    connect(m_controller, &SessionController::modelLoaded, this, [this] { clearCompare(false); });
}

void MainWindow::openCompareDialog()
{
    if (!m_controller->model()) return;
    std::set<QString> ops;
    for (const Node& n : m_controller->model()->graph->nodes())
        if (!n.isVariable()) ops.insert(QString::fromStdString(n.opName()));
    CompareDialog dialog(m_compareSpec, QStringList(ops.begin(), ops.end()), this);
    if (m_controller->model()->isRemote()) dialog.setServer(m_controller->model()->server);
    if (dialog.exec() != QDialog::Accepted) return;
    startCompare(dialog.spec());
}

bool MainWindow::startCompare(const CompareSpec& spec)
{
    const ModelInfoPtr model = m_controller->model();
    if (!model) return false;
    std::vector<Tensor> inputs;
    if (model->isRemote()) {
        // The server compares its model on its own inputs; B's files are the server's.
        if (!m_controller->hasControl()) {
            showMessage(tr("Compare"),
                m_controller->isEngineLost() ? tr("The engine on %1 is gone: reconnect to compare.").arg(model->server)
                                             : tr("Comparing runs on %1, and %2 holds control: take control to compare.")
                                                   .arg(model->server, QString::fromStdString(m_controller->control().holderName)));
            return false;
        }
    } else {
        for (const QString& path : { spec.modelB, spec.paramsB, spec.savedB, spec.mapFile })
            if (!path.isEmpty() && !path.startsWith(QStringLiteral("sample:")) && !QFileInfo::exists(path)) {
                showMessage(tr("Compare"), tr("%1: no such file or folder").arg(path));
                if (!m_options.compare.isEmpty()) m_exitStatus = kExitLoadFailed;
                return false;
            }
        const InputPanel::Built built = m_inputs->buildInputs();
        if (!built.ok()) {
            showMessage(tr("Inputs"), built.error);
            return false;
        }
        inputs = built.tensors;
    }
    m_compareSpec = spec;
    m_compareBar->setBusy(spec.describeB());
    m_compareBar->show();
    statusBar()->showMessage(model->isRemote() ? tr("Comparing with B on %1: %2…").arg(model->server, spec.describeB())
                                               : tr("Comparing with B: %1…").arg(spec.describeB()));
    m_compareRunner->start(model->spec, std::move(inputs), spec);
    return true;
}

void MainWindow::onCompareFinished(CompareResultPtr result)
{
    const ModelInfoPtr model = m_controller->model();
    if (!model || result->modelA != model->spec) return; // another model since
    m_compareView->clear({}); // it reads the comparison it shows: let go of the old one first
    m_compareFetched.reset();
    m_compare = result;
    const debug::Comparison& c = result->comparison;
    int diverging = 0;
    for (const debug::TensorDiff& d : c.diffs)
        diverging += d.diverges;
    QString top1;
    for (const debug::HeadAgreement& h : c.top1)
        top1 += tr("top-1 agrees on %1 of %2").arg(h.agree).arg(h.rows);
    const QString first = c.firstDivergentNode ? QString::fromStdString(*c.firstDivergentNode) : QString();
    m_compareBar->setSummary(result->spec.describeB(), static_cast<int>(c.diffs.size()), diverging,
        static_cast<int>(c.onlyA.size() + c.onlyB.size()), first, top1);
    m_compareBar->show();
    recolourCompare();
    // The engine made run B the reference of `diff>T` breakpoints: the next debug run pauses where
    // A's tensor leaves B's by more than T.
    // The run record's divergence columns: each node's first output.
    std::map<std::string, RunRecordModel::NodeDiff> byNode;
    const Graph& g = *result->graph;
    for (uint32_t id = 0; id < g.size(); ++id) {
        if (g.node(id).isVariable()) continue;
        if (const debug::TensorDiff* d = c.find(g.outputName({ id, 0, 0 })))
            byNode[g.node(id).name] = { debug::metricOf(*d, debug::Metric::RelL2), debug::metricOf(*d, debug::Metric::Sqnr),
                d->diverges };
    }
    m_record->setDivergence(std::move(byNode));
    if (!m_compareDock->isVisible()) {
        // In the inspector's place, at its width.
        QDockWidget* inspector = findChild<QDockWidget*>(QStringLiteral("inspectorDock"));
        const int width = inspector->width();
        tabifyDockWidget(inspector, m_compareDock);
        m_compareDock->show();
        resizeDocks({ m_compareDock }, { width }, Qt::Horizontal);
    }
    m_compareDock->raise();
    // The first divergent node, else the one selected, else the output.
    QString show = !first.isEmpty() ? first : m_graph->view()->selectedNode();
    if (show.isEmpty() && !result->graph->heads().empty())
        show = QString::fromStdString(result->graph->node(result->graph->heads().front().node).name);
    if (!first.isEmpty()) m_graph->view()->selectNode(first, true);
    showCompareFor(show);
    statusBar()->showMessage(first.isEmpty() ? tr("The runs agree within the tolerance (%1 ms)").arg(result->elapsedMs)
                                             : tr("The runs part ways at %1 (%2 ms)").arg(first).arg(result->elapsedMs),
        15000);
}

void MainWindow::recolourCompare()
{
    if (!m_compare || !m_compare->graph) return;
    const Graph& graph = *m_compare->graph;
    const DivergenceScale scale { m_compareBar->metric() };
    // The comparison's nodes by name onto the graph shown (an equal graph, maybe another object).
    const std::vector<float> byCompared = scale.severities(graph, m_compare->comparison);
    GraphModel* model = m_graph->model();
    const auto shown = model->graph();
    if (!shown) return;
    std::vector<float> severity(shown->size(), -1.0f);
    for (uint32_t id = 0; id < graph.size(); ++id)
        if (const auto s = shown->findNode(graph.node(id).name)) severity[*s] = byCompared[id];
    int first = -1;
    if (m_compare->comparison.firstDivergentNode)
        if (const auto s = shown->findNode(*m_compare->comparison.firstDivergentNode)) first = static_cast<int>(*s);
    model->setDivergence(std::move(severity), first);
}

void MainWindow::showCompareFor(const QString& node)
{
    if (!m_compare || !m_compare->graph) return;
    const Graph& g = *m_compare->graph;
    const auto id = g.findNode(node.toStdString());
    if (!id) {
        m_compareView->clear(tr("Select a node to see its tensors in A and B."));
        return;
    }
    // The node's outputs first (what the graph's colour says), then its inputs.
    QStringList names;
    const Node& n = g.node(*id);
    if (n.isVariable()) {
        for (uint32_t k = 0; k < g.size(); ++k)
            for (size_t i = 0; i < g.node(k).inputs.size(); ++i)
                if (g.node(k).inputs[i].node == *id)
                    names << QString::fromStdString(g.inputName(k, i));
    } else {
        for (int k = 0; k < n.numOutputs; ++k)
            names << QString::fromStdString(g.outputName({ *id, static_cast<uint32_t>(k), 0 }));
        for (size_t i = 0; i < n.inputs.size(); ++i)
            names << QString::fromStdString(g.inputName(*id, i));
    }
    QStringList present;
    for (const QString& name : names)
        if (m_compare->inA(name.toStdString())) present << name;
    m_compareNode = node;
    if (present.isEmpty()) {
        m_compareView->clear(tr("Nothing of %1 was recorded in run A.").arg(node));
        return;
    }
    const QString title = QStringLiteral("%1 (%2)").arg(node, QString::fromStdString(n.isVariable() ? "variable" : n.opName()));
    if (!m_compare->valuesHere) {
        fetchCompareFor(node, title, present);
        return;
    }
    m_compareView->setTensors(title, present, &m_compare->a, &m_compare->b, &m_compare->comparison);
}

void MainWindow::fetchCompareFor(const QString& node, const QString& title, const QStringList& names)
{
    std::vector<std::pair<debug::CompareSide, std::string>> wanted;
    for (const QString& name : names) {
        const std::string n = name.toStdString();
        wanted.emplace_back(debug::CompareSide::A, n);
        if (std::find(m_compare->b.order.begin(), m_compare->b.order.end(), n) != m_compare->b.order.end())
            wanted.emplace_back(debug::CompareSide::B, n);
    }
    const QString where = m_controller->engineLocation();
    m_compareView->clear(tr("Fetching %1's tensors of A and B from %2…").arg(node, where));
    QElapsedTimer clock;
    clock.start();
    auto* watcher = new QFutureWatcher<SessionController::Fetched>(this);
    connect(watcher, &QFutureWatcher<SessionController::Fetched>::finished, this,
        [this, watcher, wanted, node, title, names, where, clock, compared = m_compare] {
            watcher->deleteLater();
            if (m_compare != compared || m_compareNode != node) return; // another comparison or node since
            const SessionController::Fetched f = watcher->result();
            auto fetched = std::make_shared<std::pair<debug::RecordedRun, debug::RecordedRun>>();
            size_t bytes = 0;
            for (size_t i = 0; i < wanted.size() && i < f.tensors.size(); ++i) {
                if (!f.tensors[i]) continue;
                bytes += f.tensors[i]->bytes();
                debug::RecordedRun& run = wanted[i].first == debug::CompareSide::A ? fetched->first : fetched->second;
                run.order.push_back(wanted[i].second);
                run.tensors.emplace(wanted[i].second, *f.tensors[i]);
            }
            if (!f.error.isEmpty() && fetched->first.tensors.empty()) {
                m_compareView->clear(tr("The tensors of %1 could not be fetched from %2: %3").arg(node, where, f.error));
                return;
            }
            statusBar()->showMessage(tr("Fetched %1 of A and B from %2 in %3 ms")
                                         .arg(QLocale().formattedDataSize(static_cast<qint64>(bytes)), where)
                                         .arg(clock.elapsed()),
                8000);
            // The view reads the pair it shows: the old one goes only once the new one is shown.
            const auto shown = std::exchange(m_compareFetched, fetched);
            m_compareView->setTensors(title, names, &m_compareFetched->first, &m_compareFetched->second, &m_compare->comparison);
        });
    watcher->setFuture(m_controller->fetchCompared(std::move(wanted), m_compare ? m_compare->id : 0));
}

void MainWindow::clearCompare(bool inEngine)
{
    m_compareView->clear(tr("No comparison. Debug ▸ Compare… runs the model again as B and compares every tensor."));
    if (inEngine) {
        m_compareRunner->cancel(); // one still going is not shown, nor kept by the engine
        m_controller->endComparison();
    }
    m_compare.reset();
    m_compareFetched.reset();
    m_compareNode.clear();
    m_graph->model()->clearDivergence();
    m_record->setDivergence({});
    m_compareBar->hide();
}

} // namespace opscope::gui
