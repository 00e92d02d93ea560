// How the window explains a value: a click on an element of a paused convolution's or fully
// connected layer's output opens the terms that make it (debug/unit_anatomy.h).

#include "gui/app/main_window.h"

#include "debug/unit_anatomy.h"
#include "gui/explain/channel_examples_view.h"
#include "gui/explain/unit_anatomy_view.h"
#include "gui/inputs/input_panel.h"
#include "gui/present/presentation_view.h"
#include "gui/session/parameter_snapshot.h"
#include "gui/train/train_panel.h"
#include "models/training.h"
#include "gui/session/session_controller.h"
#include "gui/tensor/value_format.h"

#include <QDialog>
#include <QFutureWatcher>
#include <QStatusBar>
#include <QVBoxLayout>

namespace opscope::gui {

bool MainWindow::showUnitAnatomy(const QString& tensor, const QList<qint64>& index)
{
    const auto e = m_controller->pauseEvent();
    const auto graph = m_controller->runGraph();
    auto refuse = [this](const QString& why) {
        statusBar()->showMessage(why, 8000);
        return false;
    };
    if (!e || !graph || e->nodeId >= graph->size()) return refuse(tr("Not paused"));
    const uint32_t id = e->nodeId;
    const Node& node = graph->node(id);
    if (!debug::hasUnitAnatomy(node))
        return refuse(tr("Click a value of a convolution's or a fully connected layer's output (paused after it) "
                         "to see how it is computed"));
    if (tensor.toStdString() != graph->outputName(NodeEntry { id, 0, 0 }))
        return refuse(tr("Click a value of %1's output to see how it is computed").arg(QString::fromStdString(node.name)));
    // The node's inputs, then its output, as the pause holds them.
    std::vector<std::string> names;
    for (size_t slot = 0; slot < node.inputs.size(); ++slot)
        names.push_back(graph->inputName(id, slot));
    names.push_back(tensor.toStdString());
    std::vector<Tensor> tensors;
    for (size_t i = 0; i < names.size(); ++i) {
        const bool isInput = i + 1 < names.size();
        const auto it = std::find_if(e->tensors.begin(), e->tensors.end(),
            [&](const debug::PausedTensor& t) { return t.isInput == isInput && t.name == names[i]; });
        if (it == e->tensors.end()) return refuse(tr("The pause does not hold %1").arg(QString::fromStdString(names[i])));
        tensors.push_back(it->values);
    }
    std::vector<int64_t> idx(index.begin(), index.end());
    if (!m_controller->model() || !m_controller->model()->isRemote()) return presentUnitAnatomy(*graph, id, std::move(tensors), idx);
    // On a server: the terms are computed here from the node's tensors, fetched from there.
    statusBar()->showMessage(tr("Fetching the tensors of %1 from %2…").arg(QString::fromStdString(node.name), m_controller->engineLocation()));
    auto* watcher = new QFutureWatcher<SessionController::Fetched>(this);
    connect(watcher, &QFutureWatcher<SessionController::Fetched>::finished, this, [this, watcher, e, graph, id, idx, names] {
        watcher->deleteLater();
        const SessionController::Fetched f = watcher->result();
        const auto now = m_controller->pauseEvent();
        if (!now || now->runId != e->runId || now->sequence != e->sequence) return; // the run has moved on
        std::vector<Tensor> fetched;
        for (size_t i = 0; i < names.size(); ++i) {
            if (i >= f.tensors.size() || !f.tensors[i]) {
                statusBar()->showMessage(tr("%1 could not be fetched: %2").arg(QString::fromStdString(names[i]), f.error), 8000);
                return;
            }
            fetched.push_back(*f.tensors[i]);
        }
        statusBar()->clearMessage();
        presentUnitAnatomy(*graph, id, std::move(fetched), idx);
    });
    watcher->setFuture(m_controller->fetchTensors(names, {}, debug::TensorPin { e->runId, e->sequence }));
    return true;
}

bool MainWindow::presentUnitAnatomy(const Graph& graph, uint32_t id, std::vector<Tensor> tensors, const std::vector<int64_t>& idx)
{
    const Tensor out = tensors.back();
    tensors.pop_back();
    debug::UnitAnatomy anatomy;
    try {
        anatomy = debug::unitAnatomy(graph, id, tensors, out, idx);
    } catch (const std::exception& x) {
        statusBar()->showMessage(QString::fromStdString(x.what()), 8000);
        return false;
    }
    if (!m_anatomyDialog) {
        m_anatomyDialog = new QDialog(this);
        m_anatomyDialog->setObjectName(QStringLiteral("unitAnatomyDialog"));
        auto* layout = new QVBoxLayout(m_anatomyDialog);
        layout->setContentsMargins(0, 0, 0, 0);
        m_anatomyView = new UnitAnatomyView(m_anatomyDialog);
        layout->addWidget(m_anatomyView);
        m_anatomyDialog->resize(m_anatomyView->sizeHint());
    }
    m_anatomyView->setAnatomy(anatomy);
    m_anatomyDialog->setWindowTitle(tr("How %1 %2 is computed").arg(QString::fromStdString(graph.node(id).name), formatIndex(idx)));
    m_anatomyDialog->show();
    m_anatomyDialog->raise();
    Q_EMIT unitAnatomyShown();
    return true;
}

bool MainWindow::showChannelExamples(const QString& tensor, int channel)
{
    const ModelInfoPtr model = m_controller->model();
    const auto graph = m_controller->runGraph();
    auto refuse = [this](const QString& why) {
        statusBar()->showMessage(why, 8000);
        return false;
    };
    if (!model || !graph) return refuse(tr("No model"));
    // The node whose first output the tensor is.
    std::optional<uint32_t> layer;
    for (uint32_t i = 0; i < graph->size() && !layer; ++i)
        if (!graph->node(i).isVariable() && graph->outputName(NodeEntry { i, 0, 0 }) == tensor.toStdString()) layer = i;
    if (!layer) return refuse(tr("%1 is not an operator's output").arg(tensor));
    if (model->inputShapes.size() != 1) return refuse(tr("Profiling a layer needs a model of one input"));
    const Shape& in = model->inputShapes.front();
    std::vector<int64_t> perSample(in.dims().begin() + std::min<int64_t>(1, in.ndim()), in.dims().end());
    QStringList sets = ChannelProfileRunner::dataSetsFor(perSample);
    if (sets.isEmpty())
        return refuse(tr("No data set here fits this model's input %1 (mnist, fashion and digits are 1×28×28)")
                          .arg(formatShape(in)));
    // The sample's own data set first.
    if (model->isSample()) {
        const std::string name = model->title.toStdString();
        if (samples::hasTrainingData(name)) {
            const QString own = QString::fromStdString(samples::trainingDefaults(name).data);
            if (sets.contains(own)) {
                sets.removeAll(own);
                sets.prepend(own);
            }
        }
    }
    const QString node = QString::fromStdString(graph->node(*layer).name);
    if (m_train->isTraining()) return refuse(tr("The Train dock is training the model: profile it once it is done"));
    if (model->isRemote()) // profiled here, on a copy of the server's model with its weights as they are now
        return withReplica(tr("What a channel responds to"), false, &m_channelReplica, [this, node, sets, channel](const ModelReplica& r) {
            showChannelExamples(r.model->spec, r.model->paramsFile, node, sets, channel, {});
        });
    showChannelExamples(model->spec, model->paramsFile, node, sets, channel, snapshotParameters(*model->block));
    return true;
}

void MainWindow::showChannelExamples(const QString& spec, const QString& params, const QString& node, const QStringList& sets,
    int channel, ParameterSnapshot weights)
{
    if (!m_channelDialog) {
        m_channelDialog = new QDialog(this);
        m_channelDialog->setObjectName(QStringLiteral("channelExamplesDialog"));
        auto* layout = new QVBoxLayout(m_channelDialog);
        layout->setContentsMargins(0, 0, 0, 0);
        m_channelView = new ChannelExamplesView(m_channelDialog);
        layout->addWidget(m_channelView);
        m_channelDialog->resize(900, 560);
    }
    m_channelDialog->setWindowTitle(tr("What Does This Channel Respond To? %1").arg(node));
    m_channelView->start(spec, params, node, sets, channel, std::move(weights));
    m_channelDialog->show();
    m_channelDialog->raise();
}

bool MainWindow::openPresentation(int layer)
{
    const ModelInfoPtr model = m_controller->model();
    if (!model) return false;
    if (model->inputNames.size() != 1) {
        statusBar()->showMessage(tr("Presenting needs a model of one input"), 8000);
        return false;
    }
    const InputPanel::Built built = m_inputs->buildInputs();
    if (!built.ok() || built.tensors.empty()) {
        showMessage(tr("Inputs"), built.error);
        return false;
    }
    if (m_train->isTraining()) {
        statusBar()->showMessage(tr("The Train dock is training the model: present it once it is done"), 8000);
        return false;
    }
    if (model->isRemote()) { // a copy of the server's model; its own input unless the Model panel gives one
        const Tensor given = built.tensors.front();
        return withReplica(tr("Presentation"), !given.defined(), &m_presentReplica, [this, given, layer](const ModelReplica& r) {
            showPresentation(r.model, given.defined() ? given : r.input, layer, {});
        });
    }
    showPresentation(model, built.tensors.front(), layer, snapshotParameters(*model->block));
    return true;
}

void MainWindow::showPresentation(ModelInfoPtr model, const Tensor& input, int layer, ParameterSnapshot weights)
{
    if (!m_presentation) {
        m_presentation = new PresentationView(this);
        m_presentation->resize(1280, 720);
    }
    m_presentation->present(std::move(model), input, layer, std::move(weights));
    m_presentation->show();
    m_presentation->raise();
    m_presentation->activateWindow();
}

} // namespace opscope::gui
