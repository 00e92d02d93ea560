#include "gui/explain/channel_examples_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace opscope::gui {

namespace {
constexpr int kScale = 4; // 28×28 images drawn at 112×112
constexpr int kExamples = 9;

// Row `sample` of (N, C, H, W) images as gray (channels averaged), its receptive field in red.
QImage exampleImage(const Tensor& images, int64_t sample, const debug::PixelRect& field)
{
    const int64_t c = images.shape()[1], h = images.shape()[2], w = images.shape()[3];
    QImage img(static_cast<int>(w), static_cast<int>(h), QImage::Format_RGB32);
    const float* base = images.data() + sample * c * h * w;
    for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
            float v = 0;
            for (int64_t ch = 0; ch < c; ++ch)
                v += base[ch * h * w + y * w + x] / static_cast<float>(c);
            const int g = std::clamp(static_cast<int>(v * 255), 0, 255);
            img.setPixel(static_cast<int>(x), static_cast<int>(y), qRgb(g, g, g));
        }
    QImage big = img.scaled(img.width() * kScale, img.height() * kScale, Qt::IgnoreAspectRatio, Qt::FastTransformation);
    QPainter p(&big);
    p.setPen(QPen(QColor(235, 40, 40), 2));
    p.drawRect(QRectF(field.left * kScale + 1, field.top * kScale + 1, (field.right - field.left + 1) * kScale - 2,
        (field.bottom - field.top + 1) * kScale - 2));
    return big;
}
} // namespace

ChannelExamplesView::ChannelExamplesView(QWidget* parent)
    : QWidget(parent)
    , m_runner(new ChannelProfileRunner(this))
{
    auto* layout = new QVBoxLayout(this);
    m_title = new QLabel(this);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_title);
    auto* bar = new QHBoxLayout;
    m_dataSet = new QComboBox(this);
    m_channel = new QSpinBox(this);
    m_progress = new QProgressBar(this);
    m_progress->hide();
    m_cancel = new QToolButton(this);
    m_cancel->setText(tr("Cancel"));
    m_cancel->hide();
    bar->addWidget(new QLabel(tr("Data set"), this));
    bar->addWidget(m_dataSet);
    bar->addWidget(new QLabel(tr("Channel"), this));
    bar->addWidget(m_channel);
    bar->addWidget(m_progress, 1);
    bar->addWidget(m_cancel);
    bar->addStretch();
    layout->addLayout(bar);
    auto* body = new QHBoxLayout;
    auto* gridBox = new QWidget(this);
    m_grid = new QGridLayout(gridBox);
    m_grid->setSpacing(6);
    for (int i = 0; i < kExamples; ++i) {
        auto* cell = new QWidget(gridBox);
        auto* v = new QVBoxLayout(cell);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(2);
        auto* image = new QLabel(cell);
        image->setFixedSize(28 * kScale, 28 * kScale);
        auto* caption = new QLabel(cell);
        caption->setAlignment(Qt::AlignCenter);
        v->addWidget(image);
        v->addWidget(caption);
        m_images.push_back(image);
        m_captions.push_back(caption);
        m_grid->addWidget(cell, i / 3, i % 3);
    }
    body->addWidget(gridBox);
    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(320, 260);
    m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setPen(QPen(QColor(40, 90, 170)));
    m_bars->setBrush(QColor(90, 140, 210));
    m_plot->yAxis->setLabel(tr("mean activation"));
    m_plot->xAxis->setTickLabelRotation(60);
    body->addWidget(m_plot, 1);
    layout->addLayout(body, 1);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    connect(m_channel, &QSpinBox::valueChanged, this, [this] { render(); });
    // `activated`: picking the same data set again after a Cancel starts over.
    connect(m_dataSet, &QComboBox::activated, this, [this] {
        if (!m_request.layer.isEmpty()) request();
    });
    connect(m_cancel, &QToolButton::clicked, this, [this] {
        m_runner->cancel();
        m_progress->hide();
        m_cancel->hide();
        m_status->setText(tr("Cancelled: nothing is cached; pick the data set again to start over."));
    });
    connect(m_runner, &ChannelProfileRunner::progress, this, [this](int done, int total) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    });
    connect(m_runner, &ChannelProfileRunner::finished, this, [this](ChannelProfileResultPtr r) { show(r); });
    connect(m_runner, &ChannelProfileRunner::failed, this, [this](const QString& error) {
        m_progress->hide();
        m_cancel->hide();
        m_status->setText(tr("Cannot profile this layer: %1").arg(error));
    });
}

void ChannelExamplesView::start(const QString& model, const QString& params, const QString& layer,
    const QStringList& dataSets, int channel, ParameterSnapshot weights)
{
    m_request.model = model;
    m_request.params = params;
    m_request.layer = layer;
    m_request.weightsKey = fingerprint(weights);
    m_request.weights = std::move(weights);
    {
        QSignalBlocker block(m_dataSet);
        m_dataSet->clear();
        m_dataSet->addItems(dataSets);
    }
    m_wantedChannel = channel;
    request();
}

void ChannelExamplesView::setDataSet(const QString& name)
{
    const int i = m_dataSet->findText(name);
    if (i < 0) return;
    m_dataSet->setCurrentIndex(i);
    request();
}

void ChannelExamplesView::setChannel(int c)
{
    if (m_result) m_channel->setValue(c);
    else m_wantedChannel = c;
}

int ChannelExamplesView::channel() const
{
    return m_result || m_wantedChannel < 0 ? m_channel->value() : m_wantedChannel;
}

QString ChannelExamplesView::statusText() const
{
    return m_status->text();
}

QStringList ChannelExamplesView::captions() const
{
    QStringList out;
    for (QLabel* c : m_captions)
        if (!c->text().isEmpty()) out << c->text();
    return out;
}

void ChannelExamplesView::request()
{
    m_request.dataSet = m_dataSet->currentText();
    m_result.reset();
    m_title->setText(tr("What the channels of <b>%1</b> respond to, over %2's held-out images")
                         .arg(m_request.layer.toHtmlEscaped(), m_request.dataSet));
    m_progress->setRange(0, 0);
    m_progress->show();
    m_cancel->show();
    m_status->setText(tr("Running the model over the data set…"));
    for (QLabel* l : m_images)
        l->clear();
    for (QLabel* l : m_captions)
        l->clear();
    m_runner->start(m_request);
}

void ChannelExamplesView::show(const ChannelProfileResultPtr& result)
{
    m_result = result;
    m_progress->hide();
    m_cancel->hide();
    const int channels = static_cast<int>(result->profile.channels.size());
    {
        QSignalBlocker block(m_channel);
        m_channel->setRange(0, std::max(0, channels - 1));
        if (m_wantedChannel >= 0) m_channel->setValue(std::clamp(m_wantedChannel, 0, std::max(0, channels - 1)));
        m_wantedChannel = -1;
    }
    m_status->setText(tr("%1 channels profiled over %2 images of %3%4")
                          .arg(channels)
                          .arg(result->profile.samples)
                          .arg(m_request.dataSet, result->fromCache ? tr(" (from the cache)") : QString()));
    render();
    Q_EMIT shown();
}

void ChannelExamplesView::render()
{
    if (!m_result) return;
    const int c = m_channel->value();
    if (c < 0 || c >= static_cast<int>(m_result->profile.channels.size())) return;
    const debug::ChannelProfile& p = m_result->profile.channels[static_cast<size_t>(c)];
    auto name = [&](int64_t k) {
        return k >= 0 && static_cast<size_t>(k) < m_result->classNames.size()
            ? QString::fromStdString(m_result->classNames[static_cast<size_t>(k)])
            : QString::number(k);
    };
    for (int i = 0; i < kExamples; ++i) {
        if (i < static_cast<int>(p.top.size())) {
            const debug::ChannelExample& e = p.top[static_cast<size_t>(i)];
            m_images[static_cast<size_t>(i)]->setPixmap(QPixmap::fromImage(exampleImage(m_result->images, e.sample, e.field)));
            m_captions[static_cast<size_t>(i)]->setText(QStringLiteral("%1 · %2").arg(name(e.label)).arg(e.activation, 0, 'g', 4));
            m_images[static_cast<size_t>(i)]->setToolTip(tr("image %1, strongest at (%2, %3) of the map; the red square is what it sees")
                                                              .arg(e.sample)
                                                              .arg(e.y)
                                                              .arg(e.x));
        } else {
            m_images[static_cast<size_t>(i)]->clear();
            m_captions[static_cast<size_t>(i)]->clear();
        }
    }
    QVector<double> keys, values;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (size_t k = 0; k < p.meanPerClass.size(); ++k) {
        keys << static_cast<double>(k);
        values << p.meanPerClass[k];
        ticker->addTick(static_cast<double>(k), name(static_cast<int64_t>(k)));
    }
    m_bars->setData(keys, values);
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(-0.7, static_cast<double>(p.meanPerClass.size()) - 0.3);
    m_plot->yAxis->rescale();
    QCPRange r = m_plot->yAxis->range();
    m_plot->yAxis->setRange(std::min(0.0, r.lower) - 0.05 * r.size(), std::max(0.0, r.upper) + 0.05 * r.size());
    m_plot->replot();
}

} // namespace opscope::gui
