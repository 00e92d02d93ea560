// MainWindow: a loaded model shown (its graph with the fusion groups framed, its inputs, the
// command line's input options applied) and a model that failed to load.

#include "gui/app/main_window.h"

#include "gui/compare/compare_dialog.h"
#include "gui/graph/graph_model.h"
#include "gui/graph/graph_panel.h"
#include "gui/inputs/drawing_pad.h"
#include "gui/inputs/input_panel.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/panels/run_record_panel.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/explain/explain_panel.h"
#include "gui/train/train_panel.h"
#include "load/input_hints.h"
#include "load/input_spec.h"

#include <QLabel>
#include <QRegularExpression>
#include <QSettings>
#include <QTimer>

namespace opscope::gui {

void MainWindow::showModelGraph(const ModelInfo& model)
{
    GraphModel* graph = m_graph->model();
    if (model.graph != graph->graph())
        graph->setGraph(model.graph, model.entryShapes);
    else
        graph->setEntryShapes(model.entryShapes);
    std::vector<FusionGroup> groups;
    for (const fusion::Chain& c : model.fusionChains) {
        FusionGroup f;
        f.nodes << QString::fromStdString(model.graph->node(c.producer).name);
        for (uint32_t id : c.nodes())
            f.nodes << QString::fromStdString(model.graph->node(id).name);
        f.tip = tr("<b>Fused when nothing watches them:</b> %1<br>%2 folded into the %3, run by its kernel "
                   "(opscope-cli run and bench, static_alloc). Here every node is watched, so each runs on its own.")
                    .arg(f.nodes.join(QStringLiteral(" + ")).toHtmlEscaped(),
                        QString::fromStdString(fusion::describe(*model.graph, c)).toHtmlEscaped(),
                        QString::fromStdString(model.graph->node(c.producer).opName()));
        groups.push_back(std::move(f));
    }
    graph->setFusionGroups(std::move(groups));
}

void MainWindow::onModelLoaded(ModelInfoPtr model)
{
    if (!model->isSample() && !model->isRemote()) addRecentFile(model->spec);
    if (!m_options.fresh && !model->isRemote()) QSettings().setValue(QStringLiteral("files/lastModel"), model->spec);
    setWindowTitle(model->isRemote() ? tr("%1 on %2 — opscope").arg(model->title, model->server)
                                     : QStringLiteral("%1 — opscope").arg(model->title));
    showModelGraph(*model);
    m_breakpoints->setEngine(&m_controller->engine()); // a server's, once attached
    m_breakpoints->setGraph(model->graph);
    m_shownGraph = model->graph;
    std::vector<InputSpec> specs;
    for (size_t i = 0; i < model->inputNames.size(); ++i) {
        InputSpec s;
        s.name = QString::fromStdString(model->inputNames[i]);
        s.shape = model->inputShapes[i];
        s.hasDefault = i < model->defaultInputs.size();
        if (i < model->inputTypes.size()) s.dtype = model->inputTypes[i];
        if (s.hasDefault) s.defaultTensor = model->defaultInputs[i];
        if (s.shape.ndim() == 0) {
            const load::InputShapeHint hint = load::inputShapeHint(model->loaded(), i);
            if (!hint.empty()) {
                s.shapeHint
                    = tr("%1 from %2").arg(QString::fromStdString(hint.str()), QString::fromStdString(hint.reader));
                s.shapeExample = QString::fromStdString(hint.example());
            }
        }
        if (model->isRemote()) { // the server's own input by default; another source is sent there
            s.hasDefault = true;
            s.defaultElsewhere = tr("the server's own input, on %1").arg(model->server);
        }
        specs.push_back(s);
    }
    // A served program that feeds its model itself (a training loop) takes no inputs from here.
    const bool inputsHere = !model->isRemote() || m_controller->engine().acceptsStart();
    m_restoringSettings = true;
    m_inputs->setInputs(inputsHere ? specs : std::vector<InputSpec>());
    m_inputs->setCurrentSample(model->isSample() ? model->title : QString());
    QString details
        = tr("%1 · %2 ops · %3 parameters").arg(model->description).arg(model->opCount).arg(model->parameterCount);
    if (!model->weights.isEmpty()) details += QStringLiteral(" · ") + model->weights;
    m_inputs->setModelInfo(model->title, details);
    if (!inputsHere || (model->isRemote() && specs.empty()))
        m_inputs->setInputsElsewhere(tr("The server gives the model its inputs (a training loop its batches)."));
    m_restoringSettings = false;
    m_modelLabel->setText(QStringLiteral("%1 · %2 ops").arg(model->title).arg(model->opCount));
    m_record->setRecord(nullptr);
    m_inspector->clear(tr("Not paused. Set a breakpoint (F9) and run (F5)."));
    m_explain->clearSubject(tr("Run the model (F5): the explanation of its prediction shows here."));
    m_train->setModel(model);
    restoreModelSettings();
    const bool first = m_firstModel;
    m_firstModel = false;
    m_defaultStart = false;
    updateActions();
    updateStatus();
    Q_EMIT modelReady();
    const bool scripted = !m_options.screenshot.isEmpty() || m_options.quit;
    if (first && !m_options.inputs.isEmpty()) {
        int status = applyInputOptions();
        if (status == kExitOk && scripted && !m_options.run && !m_options.trainStep) {
            // No run to tell: the inputs the command line gave are made now, so a bad one is said.
            const InputPanel::Built built = m_inputs->buildInputs();
            if (!built.ok()) {
                showMessage(tr("Inputs"), built.error);
                status = exitStatusOf(built.problem);
            }
        }
        if (status != kExitOk && scripted) m_exitStatus = status;
    }
    if (first && m_exitStatus != kExitOk) {
        // A scripted start with a bad --input, or a breakpoint on a node the model lacks: the window
        // with the message is saved (--screenshot), then it exits with the status.
        scriptCheckpoint(false);
        return;
    }
    if (first && !m_options.compare.isEmpty()) {
        CompareSpec spec;
        QString error;
        if (parseCompareSpec(m_options.compare, &spec, &error)) startCompare(spec);
    }
    if (first && m_options.trainStep) {
        if (!m_train->debugSteps(1, false)) {
            showMessage(tr("Train"), m_train->lastError());
            if (!m_options.screenshot.isEmpty() || m_options.quit) finishScript(kExitUsage);
        }
    } else if (first && m_options.run) {
        // A scripted run that cannot start ends with the status of why (never waits for ever).
        if (!startRun(false) && (!m_options.screenshot.isEmpty() || m_options.quit)) {
            m_exitStatus = m_startFailure;
            scriptCheckpoint(false);
        }
    } else if (first && model->isRemote() && (m_controller->isActive() || m_options.explicitBreakpoints())
        && (!m_options.screenshot.isEmpty() || m_options.quit)) {
        // Attached to a run going on there, or with breakpoints for the runs the server starts (a
        // training loop): a pause or an end is on the way; nothing for a while is pictured as it is.
        QTimer::singleShot(10000, this, [this] { scriptCheckpoint(false); });
    } else if (first && (!m_options.screenshot.isEmpty() || m_options.quit)) {
        scriptCheckpoint(false);
    }
}

int MainWindow::applyInputOptions()
{
    const ModelInfoPtr model = m_controller->model();
    static const QRegularExpression shapeSpec(QStringLiteral("^([0-9]+(?:x[0-9]+)*)(?::(ones|zeros|uniform|normal))?$"),
        QRegularExpression::CaseInsensitiveOption);
    for (const QString& option : m_options.inputs) {
        const int eq = option.indexOf(QLatin1Char('='));
        const QString name = option.left(eq);
        QString spec = option.mid(eq + 1);
        const auto it = std::find(model->inputNames.begin(), model->inputNames.end(), name.toStdString());
        if (it == model->inputNames.end()) {
            const bool label = std::find(model->labelNames.begin(), model->labelNames.end(), name.toStdString())
                != model->labelNames.end();
            showMessage(tr("Inputs"),
                label ? tr("--input %1: '%2' is only a loss's label; a run gives it zeros").arg(option, name)
                      : tr("--input %1: the model has no input '%2'").arg(option, name));
            return kExitUsage;
        }
        const int index = static_cast<int>(it - model->inputNames.begin());
        InputSource src;
        const QString lower = spec.toLower();
        const QRegularExpressionMatch shaped = shapeSpec.match(spec);
        if (shaped.hasMatch()) {
            // NAME=SHAPE[:fill], as opscope-cli takes it: the input's shape, filled.
            Shape shape;
            try {
                shape = load::parseShapeX(shaped.captured(1).toStdString());
            } catch (const std::exception& e) {
                showMessage(tr("Inputs"), tr("--input %1: %2").arg(option, QString::fromUtf8(e.what())));
                return kExitUsage;
            }
            std::vector<Shape> shapes = m_inputs->shapes();
            shapes[static_cast<size_t>(index)] = shape;
            m_inputs->setShapes(shapes);
            if (!m_controller->setInputShapes(m_inputs->shapes())) {
                showMessage(tr("Inputs"), tr("--input %1: %2").arg(option, m_controller->lastError()));
                return kExitRunFailed; // a shape the model cannot take, as a run with it would fail
            }
            const QString fill = shaped.captured(2).toLower();
            src.kind = fill == QLatin1String("zeros") ? InputSource::Kind::Zeros
                : fill == QLatin1String("uniform")    ? InputSource::Kind::Uniform
                : fill == QLatin1String("normal")     ? InputSource::Kind::Normal
                                                      : InputSource::Kind::Ones;
        } else if (lower == QLatin1String("ones")) {
            src.kind = InputSource::Kind::Ones;
        } else if (lower == QLatin1String("zeros")) {
            src.kind = InputSource::Kind::Zeros;
        } else if (lower == QLatin1String("uniform")) {
            src.kind = InputSource::Kind::Uniform;
        } else if (lower == QLatin1String("normal")) {
            src.kind = InputSource::Kind::Normal;
        } else if (lower.startsWith(QLatin1String("draw:"))) {
            QString error;
            const QImage picture = readImageFile(spec.mid(5), &error);
            if (picture.isNull()) {
                showMessage(tr("Inputs"), tr("--input %1: %2").arg(option, error));
                return kExitLoadFailed;
            }
            m_inputs->drawingPad()->loadImage(picture);
            src.kind = InputSource::Kind::Drawing;
        } else if (lower.endsWith(QLatin1String(".npy"))) {
            src.kind = InputSource::Kind::NpyFile; // an input of unknown shape takes the file's
            src.file = spec;
        } else {
            if (lower.endsWith(QLatin1String(":invert"))) {
                src.invert = true;
                spec.chop(7);
            }
            src.kind = InputSource::Kind::ImageFile;
            src.file = spec;
        }
        m_inputs->setSource(index, src);
        if (m_inputs->sources()[static_cast<size_t>(index)].kind != src.kind) {
            showMessage(tr("Inputs"), tr("--input %1: input '%2' cannot take that source").arg(option, name));
            return kExitUsage;
        }
    }
    return kExitOk;
}

void MainWindow::onModelLoadFailed(const QString& spec, const QString& error)
{
    showMessage(tr("Open Model"), tr("%1 could not be opened:\n%2").arg(spec, error));
    updateStatus();
    if (m_firstModel && (!m_options.screenshot.isEmpty() || m_options.quit)) finishScript(kExitLoadFailed);
}

} // namespace opscope::gui
