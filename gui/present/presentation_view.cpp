#include "gui/present/presentation_view.h"

#include "core/error.h"
#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/value_format.h"
#include "load/model_loader.h"
#include "load/onnx_loader.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPainter>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace opscope::gui {

/// The layers as a clean vertical chain of boxes (operator and shape), the current one highlighted.
class LayerStrip : public QWidget {
public:
    explicit LayerStrip(QWidget* parent)
        : QWidget(parent)
    {
        setMinimumWidth(250);
    }
    void setPass(const ForwardPass* pass, int current)
    {
        m_pass = pass;
        m_current = current;
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        if (!m_pass || m_pass->layers.empty()) return;
        const int n = static_cast<int>(m_pass->layers.size());
        const int box = std::clamp((height() - 8) / std::max(1, n) - 8, 24, 64);
        // Show a window of layers around the current one when they do not all fit.
        const int fit = std::max(1, (height() - 8) / (box + 8));
        const int first = std::clamp(m_current - fit / 2, 0, std::max(0, n - fit));
        QFont name = font();
        QFont small = font();
        small.setPointSizeF(font().pointSizeF() * 0.7);
        for (int i = first; i < std::min(n, first + fit); ++i) {
            const auto& l = m_pass->layers[static_cast<size_t>(i)];
            const QRectF r(8, 4 + (i - first) * (box + 8), width() - 16, box);
            const bool now = i == m_current;
            p.setPen(QPen(now ? QColor(200, 70, 20) : QColor(150, 150, 160), now ? 3 : 1));
            p.setBrush(now ? QColor(255, 236, 220) : (i < m_current ? QColor(235, 240, 250) : QColor(248, 248, 248)));
            p.drawRoundedRect(r, 6, 6);
            p.setPen(QColor(30, 30, 30));
            p.setFont(name);
            p.drawText(r.adjusted(10, 2, -10, -r.height() / 2), Qt::AlignLeft | Qt::AlignVCenter, QString::fromStdString(l.op));
            p.setFont(small);
            p.drawText(r.adjusted(10, r.height() / 2, -10, -2), Qt::AlignLeft | Qt::AlignVCenter, formatShape(l.output.shape()));
        }
    }

private:
    const ForwardPass* m_pass = nullptr;
    int m_current = 0;
};

/// The prediction: each class's softmax probability as a bar, named, the best first.
class PredictionBars : public QWidget {
public:
    explicit PredictionBars(QWidget* parent)
        : QWidget(parent)
    {
        setMinimumSize(260, 200);
    }
    void setScores(const Tensor& scores, const std::vector<std::string>& names)
    {
        m_rows.clear();
        if (scores.defined() && scores.size() > 0) {
            const float* s = scores.data();
            const int64_t k = scores.size();
            const float top = *std::max_element(s, s + k);
            double z = 0;
            for (int64_t c = 0; c < k; ++c)
                z += std::exp(static_cast<double>(s[c] - top));
            for (int64_t c = 0; c < k; ++c)
                m_rows.push_back({ c < static_cast<int64_t>(names.size()) ? QString::fromStdString(names[static_cast<size_t>(c)]) : QString::number(c),
                    std::exp(static_cast<double>(s[c] - top)) / z });
            std::stable_sort(m_rows.begin(), m_rows.end(), [](const Row& a, const Row& b) { return a.p > b.p; });
            if (m_rows.size() > 10) m_rows.resize(10);
        }
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        if (m_rows.empty()) {
            p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, tr("The output is not one row of class scores"));
            return;
        }
        const int rowH = std::min(40, height() / static_cast<int>(m_rows.size()));
        const int label = std::min(width() / 2, 130);
        for (size_t i = 0; i < m_rows.size(); ++i) {
            const int y = static_cast<int>(i) * rowH;
            p.setPen(QColor(30, 30, 30));
            p.drawText(QRect(0, y, label - 8, rowH), Qt::AlignRight | Qt::AlignVCenter, m_rows[i].name);
            const int w = static_cast<int>((width() - label - 70) * m_rows[i].p);
            p.fillRect(QRect(label, y + rowH / 6, std::max(1, w), rowH * 2 / 3), i == 0 ? QColor(220, 90, 30) : QColor(90, 130, 200));
            p.drawText(QRect(label + w + 6, y, 70, rowH), Qt::AlignLeft | Qt::AlignVCenter,
                QStringLiteral("%1 %").arg(100 * m_rows[i].p, 0, 'f', m_rows[i].p < 0.1 ? 1 : 0));
        }
    }

private:
    struct Row {
        QString name;
        double p;
    };
    std::vector<Row> m_rows;
};

ForwardPassPtr recordForwardPass(const ModelInfo& model, const Tensor& input, const ParameterSnapshot& weights)
{
    load::LoadedModel m = load::loadModel(model.spec.toStdString(), model.paramsFile.toStdString(), 0);
    if (m.inputNames.size() != 1) throw UsageError("presenting needs a model of one input");
    load::fitToInputs(m, std::vector<Tensor> { input });
    if (!m.block->hasFixedGraph()) m.block->initializeFor({ input.shape() });
    applyParameters(*m.block, weights);
    m.block->hybridize();
    m.block->call(input); // traces the graph
    const std::shared_ptr<const Graph> graph = m.block->graph();
    auto pass = std::make_shared<ForwardPass>();
    pass->input = input.copy();
    pass->classNames = model.classNames;
    std::map<std::string, size_t> byTensor;
    for (uint32_t i = 0; i < graph->size(); ++i) {
        const Node& n = graph->node(i);
        if (n.isVariable()) continue;
        byTensor[graph->outputName(NodeEntry { i, 0, 0 })] = pass->layers.size();
        pass->layers.push_back({ n.name, n.opName(), {} });
    }
    gluon::HookHandle h = m.block->register_op_hook(
        [&](std::string_view name, std::string_view, const TensorView& t) {
            auto it = byTensor.find(std::string(name));
            if (it != byTensor.end()) pass->layers[it->second].output = Tensor::copyOf(t);
        },
        false);
    const Tensor out = m.block->call(input);
    h.remove();
    std::erase_if(pass->layers, [](const ForwardPass::Layer& l) { return !l.output.defined(); });
    const Tensor f = out.dtype() == DType::Float32 ? out : out.astype(DType::Float32);
    if ((f.ndim() == 2 && f.shape()[0] == 1) || f.ndim() == 1) pass->scores = f.copy();
    return pass;
}

PresentationView::PresentationView(QWidget* parent)
    : QWidget(parent, Qt::Window)
{
    setWindowTitle(tr("opscope — Presentation"));
    setObjectName(QStringLiteral("presentationView"));
    QFont big = font();
    big.setPointSizeF(font().pointSizeF() * 1.5);
    setFont(big);
    setAutoFillBackground(true);
    QPalette pal = palette();
    pal.setColor(QPalette::Window, Qt::white);
    setPalette(pal);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(16, 10, 16, 10);
    m_title = new QLabel(this);
    QFont titleFont = big;
    titleFont.setPointSizeF(big.pointSizeF() * 1.2);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    outer->addWidget(m_title);
    auto* row = new QHBoxLayout;
    m_strip = new LayerStrip(this);
    row->addWidget(m_strip);
    m_maps = new FeatureMapView(this);
    row->addWidget(m_maps, 1);
    auto* right = new QVBoxLayout;
    m_input = new QLabel(this);
    m_input->setAlignment(Qt::AlignCenter);
    m_input->setMinimumSize(168, 168);
    auto* inputTitle = new QLabel(tr("Input"), this);
    inputTitle->setAlignment(Qt::AlignCenter);
    right->addWidget(inputTitle);
    right->addWidget(m_input);
    auto* predTitle = new QLabel(tr("Prediction"), this);
    predTitle->setAlignment(Qt::AlignCenter);
    right->addWidget(predTitle);
    m_bars = new PredictionBars(this);
    right->addWidget(m_bars, 1);
    row->addLayout(right);
    outer->addLayout(row, 1);
    m_hint = new QLabel(tr("← → step through the layers · Home / End · F full screen · Esc close"), this);
    QFont hintFont = font();
    hintFont.setPointSizeF(font().pointSizeF() * 0.7);
    m_hint->setFont(hintFont);
    m_hint->setStyleSheet(QStringLiteral("color: #777;"));
    outer->addWidget(m_hint);
    connect(&m_watcher, &QFutureWatcher<ForwardPassPtr>::finished, this, [this] {
        m_pass = m_watcher.result();
        if (!m_pass->error.empty()) {
            m_title->setText(tr("Cannot present this model: %1").arg(QString::fromStdString(m_pass->error)));
            m_pass.reset();
            Q_EMIT failed(m_title->text());
            return;
        }
        // The input, gray and large.
        const Tensor& x = m_pass->input;
        if (x.ndim() == 4) {
            const int64_t c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
            QImage img(static_cast<int>(w), static_cast<int>(h), QImage::Format_Grayscale8);
            const float* px = x.view().data();
            const auto [lo, hi] = std::minmax_element(px, px + x.size());
            const float span = *hi > *lo ? *hi - *lo : 1.0f;
            for (int64_t y = 0; y < h; ++y)
                for (int64_t xx = 0; xx < w; ++xx) {
                    float v = 0;
                    for (int64_t ch = 0; ch < c; ++ch)
                        v += (px[ch * h * w + y * w + xx] - *lo) / span / static_cast<float>(c);
                    img.scanLine(static_cast<int>(y))[xx] = static_cast<uchar>(std::clamp(static_cast<int>(v * 255), 0, 255));
                }
            m_input->setPixmap(QPixmap::fromImage(img.scaled(168, 168, Qt::KeepAspectRatio, Qt::FastTransformation)));
        }
        m_bars->setScores(m_pass->scores, m_pass->classNames);
        showLayer(m_wanted);
    });
}

PresentationView::~PresentationView()
{
    m_watcher.waitForFinished();
}

void PresentationView::present(ModelInfoPtr model, const Tensor& input, int layer, ParameterSnapshot weights)
{
    m_model = std::move(model);
    m_pass.reset();
    m_wanted = layer;
    m_title->setText(tr("%1: running the forward pass…").arg(m_model ? m_model->title : QString()));
    m_maps->clear();
    m_strip->setPass(nullptr, 0);
    const ModelInfoPtr m = m_model;
    const Tensor x = input.copy();
    // The job's exceptions become the pass's error (QtConcurrent would only say "std::exception").
    m_watcher.setFuture(QtConcurrent::run([m, x, weights = std::move(weights)]() -> ForwardPassPtr {
        try {
            return recordForwardPass(*m, x, weights);
        } catch (const std::exception& e) {
            auto failed = std::make_shared<ForwardPass>();
            failed->error = e.what();
            return failed;
        }
    }));
}

int PresentationView::layerCount() const
{
    return m_pass ? static_cast<int>(m_pass->layers.size()) : 0;
}

QString PresentationView::titleText() const
{
    return m_title->text();
}

void PresentationView::showLayer(int index)
{
    if (!m_pass || m_pass->layers.empty()) return;
    m_current = std::clamp(index, 0, layerCount() - 1);
    const auto& l = m_pass->layers[static_cast<size_t>(m_current)];
    m_title->setText(tr("%1 · layer %2 of %3: %4 (%5) → %6")
                         .arg(m_model ? m_model->title : QString())
                         .arg(m_current + 1)
                         .arg(layerCount())
                         .arg(QString::fromStdString(l.op), QString::fromStdString(l.node), formatShape(l.output.shape())));
    m_strip->setPass(m_pass.get(), m_current);
    if (FeatureMapView::canShow(l.output.shape())) {
        m_maps->setTensor(l.output);
        // As large as the room allows: fewer, bigger maps for the back rows.
        const int64_t maps = l.output.ndim() == 4 ? l.output.shape()[1] : 1;
        const int columns = maps <= 1 ? 1 : maps <= 4 ? 2 : maps <= 16 ? 4 : maps <= 36 ? 6 : 8;
        m_maps->setCellSize(std::clamp((m_maps->width() - 60) / columns - 10, 48, 420));
    } else {
        m_maps->clear(tr("This output cannot be drawn as images"));
    }
    Q_EMIT layerShown(m_current);
}

void PresentationView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Right:
    case Qt::Key_PageDown:
    case Qt::Key_Space:
    case Qt::Key_Down:
        showLayer(m_current + 1);
        return;
    case Qt::Key_Left:
    case Qt::Key_PageUp:
    case Qt::Key_Backspace:
    case Qt::Key_Up:
        showLayer(m_current - 1);
        return;
    case Qt::Key_Home:
        showLayer(0);
        return;
    case Qt::Key_End:
        showLayer(layerCount() - 1);
        return;
    case Qt::Key_F:
        isFullScreen() ? showNormal() : showFullScreen();
        return;
    case Qt::Key_Escape:
        close();
        return;
    default:
        QWidget::keyPressEvent(event);
    }
}

} // namespace opscope::gui
