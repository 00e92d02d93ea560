#include "gui/explain/explain_panel.h"

#include "gui/explain/heat_overlay.h"
#include "graph/graph.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>
#include <QSlider>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStackedWidget>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>
#include <cstring>

namespace opscope::gui {

/// The overlay, scaled up by whole pixels to fit (no smoothing: each input pixel stays a square).
class HeatView : public QWidget {
public:
    explicit HeatView(QWidget* parent)
        : QWidget(parent)
    {
        setMinimumSize(160, 160);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    }
    void setImage(const QImage& image)
    {
        m_image = image;
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.fillRect(rect(), palette().color(QPalette::Base));
        if (m_image.isNull()) return;
        const double fit = std::min(double(width()) / m_image.width(), double(height()) / m_image.height());
        const double scale = fit >= 1 ? std::floor(fit) : fit;
        const QSizeF size(m_image.width() * scale, m_image.height() * scale);
        const QRectF target(QPointF((width() - size.width()) / 2, (height() - size.height()) / 2), size);
        p.setRenderHint(QPainter::SmoothPixmapTransform, false);
        p.drawImage(target, m_image);
    }

private:
    QImage m_image;
};

namespace {
const debug::ExplainMethod kMethods[] = { debug::ExplainMethod::Saliency, debug::ExplainMethod::GradientTimesInput,
    debug::ExplainMethod::GradCam, debug::ExplainMethod::Occlusion };

QString methodTitle(debug::ExplainMethod m)
{
    switch (m) {
    case debug::ExplainMethod::Saliency: return QObject::tr("Saliency");
    case debug::ExplainMethod::GradientTimesInput: return QObject::tr("Gradient × input");
    case debug::ExplainMethod::GradCam: return QObject::tr("Grad-CAM");
    case debug::ExplainMethod::Occlusion: return QObject::tr("Occlusion");
    }
    return {};
}
} // namespace

ExplainPanel::ExplainPanel(QWidget* parent)
    : QWidget(parent)
    , m_runner(new ExplainRunner(this))
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    m_stack = new QStackedWidget(this);
    outer->addWidget(m_stack);
    m_message = new QLabel(this);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_stack->addWidget(m_message);

    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    m_methodBox = new QComboBox(page);
    for (debug::ExplainMethod m : kMethods)
        m_methodBox->addItem(methodTitle(m), static_cast<int>(m));
    m_methodBox->setToolTip(tr("Saliency: |∂score/∂input|. Gradient × input: ∂score/∂input · input. Grad-CAM: a "
                               "convolution's maps weighted by their mean gradient. Occlusion: the score's drop "
                               "when a patch covers each place."));
    m_layerBox = new QComboBox(page);
    m_layerBox->setToolTip(tr("Grad-CAM's layer: the convolution (or its activation) whose feature maps explain"));
    m_layerBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_layerBox->setMinimumContentsLength(12);
    m_opacity = new QSlider(Qt::Horizontal, page);
    m_opacity->setRange(0, 100);
    m_opacity->setValue(70);
    m_opacity->setMaximumWidth(110);
    m_opacity->setToolTip(tr("Opacity of the explanation over the input"));
    m_progress = new QProgressBar(page);
    m_progress->setMaximumWidth(120);
    m_progress->hide();
    m_cancel = new QToolButton(page);
    m_cancel->setText(tr("Cancel"));
    m_cancel->hide();
    bar->addWidget(new QLabel(tr("Method"), page));
    bar->addWidget(m_methodBox);
    bar->addWidget(m_layerBox, 1);
    bar->addWidget(new QLabel(tr("Opacity"), page));
    bar->addWidget(m_opacity);
    bar->addWidget(m_progress);
    bar->addWidget(m_cancel);
    layout->addLayout(bar);

    auto* split = new QSplitter(Qt::Horizontal, page);
    m_classes = new QTreeWidget(split);
    m_classes->setHeaderLabels({ tr("Class"), tr("Score") });
    m_classes->setRootIsDecorated(false);
    m_classes->setToolTip(tr("The model's top classes: pick one to explain it"));
    m_classes->header()->setStretchLastSection(false);
    m_classes->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_classes->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_view = new HeatView(split);
    split->addWidget(m_classes);
    split->addWidget(m_view);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setSizes({ 170, 400 });
    layout->addWidget(split, 1);
    m_status = new QLabel(page);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);
    m_stack->addWidget(page);

    connect(m_methodBox, &QComboBox::currentIndexChanged, this, [this] {
        m_layerBox->setEnabled(method() == debug::ExplainMethod::GradCam);
        compute();
    });
    connect(m_layerBox, &QComboBox::currentIndexChanged, this, [this] {
        if (method() == debug::ExplainMethod::GradCam) compute();
    });
    connect(m_opacity, &QSlider::valueChanged, this, [this] { render(); });
    connect(m_classes, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
        const auto k = item->data(0, Qt::UserRole).toLongLong();
        if (m_result && k == m_result->explanation.classIndex) return;
        m_class = k;
        compute();
    });
    connect(m_cancel, &QToolButton::clicked, this, [this] {
        m_runner->cancel();
        m_progress->hide();
        m_cancel->hide();
        m_status->setText(tr("Cancelled."));
    });
    connect(m_runner, &ExplainRunner::progress, this, [this](int done, int total) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
        m_progress->show();
        m_cancel->show();
    });
    connect(m_runner, &ExplainRunner::finished, this, &ExplainPanel::onFinished);
    connect(m_runner, &ExplainRunner::failed, this, [this](const QString& error) {
        m_progress->hide();
        m_cancel->hide();
        m_result.reset();
        showMessage(tr("Cannot explain this: %1").arg(error));
    });
    m_layerBox->setEnabled(false);
    clearSubject(tr("Run the model (F5): the explanation of its prediction shows here."));
}

void ExplainPanel::setSubject(ModelInfoPtr model, const Tensor& input, ParameterSnapshot weights)
{
    subject(std::move(model), input, std::move(weights), nullptr, 0);
}

void ExplainPanel::setSubject(ModelInfoPtr model, std::shared_ptr<debug::Engine> engine, uint64_t runId)
{
    subject(std::move(model), Tensor(), {}, std::move(engine), runId);
}

void ExplainPanel::subject(ModelInfoPtr model, const Tensor& input, ParameterSnapshot weights, std::shared_ptr<debug::Engine> engine, uint64_t runId)
{
    const bool sameModel = m_model && model && m_model->spec == model->spec && m_model->paramsFile == model->paramsFile
        && m_engine == engine;
    const bool sameInput = engine ? m_engineRun == runId
                                  : m_input.defined() && input.defined() && m_input.shape() == input.shape()
            && m_input.dtype() == input.dtype() && std::memcmp(m_input.raw(), input.raw(), input.bytes()) == 0;
    const QString weightsKey = fingerprint(weights);
    // Shown already for this model, weights, input, method, class and layer: nothing to do.
    if (sameModel && sameInput && weightsKey == m_weightsKey && m_result && !m_runner->isRunning()
        && m_result->request.options.method == method()
        && (m_class < 0 || m_result->explanation.classIndex == m_class)
        && (method() != debug::ExplainMethod::GradCam || m_result->request.options.layer == m_layerBox->currentText().toStdString()))
        return;
    m_weights = std::move(weights);
    m_weightsKey = weightsKey;
    m_model = std::move(model);
    m_input = input;
    m_engine = std::move(engine);
    m_engineRun = runId;
    if (!sameModel) {
        m_class = -1;
        m_classes->clear();
        QSignalBlocker block(m_layerBox);
        m_layerBox->clear();
        if (m_model && m_model->graph) {
            const Graph& g = *m_model->graph;
            const std::string chosen = debug::defaultCamLayer(g);
            for (uint32_t i = 0; i < g.size(); ++i) {
                const Node& n = g.node(i);
                if (n.isVariable() || (n.opName() != "Convolution" && n.opName() != "Conv" && n.name != chosen)) continue;
                m_layerBox->addItem(QString::fromStdString(n.name));
            }
            m_layerBox->setCurrentIndex(std::max(0, m_layerBox->findText(QString::fromStdString(chosen))));
        }
    }
    // Grad-CAM and occlusion need an image.
    const bool image = m_input.defined() ? m_input.ndim() == 4
        : m_engine && m_model && m_model->inputShapes.size() == 1 && m_model->inputShapes.front().ndim() == 4;
    if (auto* items = qobject_cast<QStandardItemModel*>(m_methodBox->model())) {
        for (int i = 0; i < m_methodBox->count(); ++i) {
            const auto m = static_cast<debug::ExplainMethod>(m_methodBox->itemData(i).toInt());
            items->item(i)->setEnabled(
                image || m == debug::ExplainMethod::Saliency || m == debug::ExplainMethod::GradientTimesInput);
        }
    }
    if (!image && (method() == debug::ExplainMethod::GradCam || method() == debug::ExplainMethod::Occlusion)) {
        QSignalBlocker block(m_methodBox);
        setMethod(debug::ExplainMethod::Saliency);
        m_layerBox->setEnabled(false);
    }
    compute();
}

void ExplainPanel::clearSubject(const QString& message)
{
    m_runner->cancel();
    m_model.reset();
    m_input = {};
    m_engine.reset();
    m_engineRun = 0;
    m_result.reset();
    m_overlay = {};
    m_dirty = false;
    m_progress->hide();
    m_cancel->hide();
    showMessage(message);
}

void ExplainPanel::setMethod(debug::ExplainMethod m)
{
    m_methodBox->setCurrentIndex(m_methodBox->findData(static_cast<int>(m)));
}

debug::ExplainMethod ExplainPanel::method() const
{
    return static_cast<debug::ExplainMethod>(m_methodBox->currentData().toInt());
}

void ExplainPanel::setClass(int64_t k)
{
    m_class = k;
    compute();
}

void ExplainPanel::setLayer(const QString& node)
{
    const int i = m_layerBox->findText(node);
    if (i >= 0) m_layerBox->setCurrentIndex(i);
}

void ExplainPanel::setOpacity(int percent)
{
    m_opacity->setValue(percent);
}

bool ExplainPanel::isComputing() const
{
    return m_runner->isRunning() || (m_dirty && isVisible());
}

QString ExplainPanel::statusText() const
{
    return m_status->text();
}

QString ExplainPanel::messageText() const
{
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

void ExplainPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_dirty) compute();
}

void ExplainPanel::compute()
{
    if (!m_model || (!m_input.defined() && !m_engine)) return;
    if (!isVisible()) {
        m_dirty = true;
        return;
    }
    m_dirty = false;
    ExplainRequest r;
    r.model = m_model->spec;
    r.params = m_model->paramsFile;
    r.input = m_input;
    r.options.method = method();
    r.options.classIndex = m_class;
    r.options.topK = 10;
    if (r.options.method == debug::ExplainMethod::GradCam) r.options.layer = m_layerBox->currentText().toStdString();
    r.weights = m_weights;
    r.engine = m_engine;
    m_progress->hide();
    m_cancel->setVisible(r.options.method == debug::ExplainMethod::Occlusion);
    m_status->setText(tr("Computing %1…").arg(methodTitle(r.options.method)));
    m_runner->start(std::move(r));
}

QString ExplainPanel::className(int64_t k) const
{
    if (m_model && k >= 0 && static_cast<size_t>(k) < m_model->classNames.size()) {
        const QString name = QString::fromStdString(m_model->classNames[static_cast<size_t>(k)]);
        if (name != QString::number(k)) return QStringLiteral("%1 · %2").arg(k).arg(name);
    }
    return QString::number(k);
}

void ExplainPanel::fillClasses(const debug::Explanation& e)
{
    QSignalBlocker block(m_classes);
    m_classes->clear();
    for (const auto& [k, score] : e.top) {
        auto* item = new QTreeWidgetItem(m_classes, { className(k), QString::number(score, 'g', 5) });
        item->setData(0, Qt::UserRole, static_cast<qlonglong>(k));
        item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
        if (k == e.classIndex) m_classes->setCurrentItem(item);
    }
}

void ExplainPanel::onFinished(ExplainResultPtr result)
{
    m_progress->hide();
    m_cancel->hide();
    m_result = std::move(result);
    const debug::Explanation& e = m_result->explanation;
    fillClasses(e);
    m_stack->setCurrentIndex(1);
    render();
    int64_t peak = 0;
    const float* heat = e.heat.view().data();
    for (int64_t i = 1; i < e.heat.size(); ++i)
        if (std::fabs(heat[i]) > std::fabs(heat[peak])) peak = i;
    const int64_t cols = e.heat.ndim() == 2 ? e.heat.shape()[1] : e.heat.size();
    QString text = tr("%1 of class %2 (score %3)").arg(methodTitle(e.method), className(e.classIndex)).arg(e.score, 0, 'g', 4);
    if (!e.layer.empty()) text += tr(" on %1").arg(QString::fromStdString(e.layer));
    text += tr(" · strongest at row %1, column %2 · %3 ms").arg(peak / cols).arg(peak % cols).arg(m_result->elapsedMs);
    if (m_engine && m_model) text += tr(" · computed on %1").arg(m_model->server);
    if (m_overlay.isNull()) text += tr(" · the input is not an image: no overlay");
    m_status->setText(text);
    Q_EMIT explanationShown();
}

void ExplainPanel::render()
{
    if (!m_result) return;
    m_overlay = renderHeatOverlay(m_result->request.input, m_result->explanation.heat, m_opacity->value() / 100.0);
    m_view->setImage(m_overlay);
}

void ExplainPanel::showMessage(const QString& text)
{
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

} // namespace opscope::gui
