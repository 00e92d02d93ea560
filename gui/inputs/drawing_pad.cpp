#include "gui/inputs/drawing_pad.h"

#include "gui/inputs/input_source.h"

#include <algorithm>
#include <cmath>

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QMouseEvent>
#include <QPainter>
#include <QUrl>

namespace opscope::gui {

namespace {

// Gray level above which a pixel counts as ink: antialiasing fringes and faint noise in loaded
// pictures must not widen the bounding box.
constexpr int kInkThreshold = 32;
// MNIST fits each digit into a 20×20 box inside its 28×28 field.
constexpr double kDigitBox = 20.0 / 28.0;

bool hasInk(const QImage& gray8)
{
    for (int y = 0; y < gray8.height(); ++y) {
        const uchar* line = gray8.constScanLine(y);
        for (int x = 0; x < gray8.width(); ++x)
            if (line[x] > kInkThreshold) return true;
    }
    return false;
}

QImage grayByLuminance(const QImage& picture)
{
    QImage rgb;
    if (picture.hasAlphaChannel()) {
        rgb = QImage(picture.size(), QImage::Format_RGB32);
        rgb.fill(Qt::white);
        QPainter p(&rgb);
        p.drawImage(0, 0, picture);
    } else {
        rgb = picture.convertToFormat(QImage::Format_RGB32);
    }
    QImage gray(rgb.size(), QImage::Format_Grayscale8);
    for (int y = 0; y < rgb.height(); ++y) {
        const auto* in = reinterpret_cast<const QRgb*>(rgb.constScanLine(y));
        uchar* out = gray.scanLine(y);
        for (int x = 0; x < rgb.width(); ++x)
            out[x] = uchar(qGray(in[x]));
    }
    return gray;
}

double borderMean(const QImage& gray8)
{
    const int w = gray8.width(), h = gray8.height();
    double sum = 0;
    int64_t count = 0;
    for (int y = 0; y < h; ++y) {
        const uchar* line = gray8.constScanLine(y);
        if (y == 0 || y == h - 1) {
            for (int x = 0; x < w; ++x)
                sum += line[x];
            count += w;
        } else {
            sum += line[0] + line[w - 1];
            count += 2;
        }
    }
    return count ? sum / double(count) : 0;
}

// Maps the background level to 0 and the brightest ink to 255, so a photographed page looks like a
// drawing on the pad: black paper, saturated ink.
void stretchLevels(QImage& gray8, double background)
{
    int top = 0;
    for (int y = 0; y < gray8.height(); ++y) {
        const uchar* line = gray8.constScanLine(y);
        top = std::max(top, int(*std::max_element(line, line + gray8.width())));
    }
    const double lo = std::min(background, top - 1.0);
    if (top <= kInkThreshold || lo < 0) return;
    const double gain = 255.0 / (top - lo);
    for (int y = 0; y < gray8.height(); ++y) {
        uchar* line = gray8.scanLine(y);
        for (int x = 0; x < gray8.width(); ++x)
            line[x] = uchar(std::clamp(std::lround((line[x] - lo) * gain), 0L, 255L));
    }
}

} // namespace

DrawingPad::DrawingPad(QWidget* parent)
    : QWidget(parent)
    , m_canvas(kCanvasSize, kCanvasSize, QImage::Format_RGB32)
{
    m_canvas.fill(Qt::black);
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    setMouseTracking(true);
    setAcceptDrops(true);
    setCursor(Qt::CrossCursor);
    setAttribute(Qt::WA_OpaquePaintEvent, false);
    setToolTip(tr("Draw with the left mouse button, erase with the right one. Drop an image to load it."));
}

QSize DrawingPad::sizeHint() const
{
    return { kCanvasSize, kCanvasSize };
}

QSize DrawingPad::minimumSizeHint() const
{
    return { 140, 140 };
}

void DrawingPad::clear()
{
    m_canvas.fill(Qt::black);
    m_empty = true;
    m_stroking = false;
    m_previewCache = QImage();
    update();
    emit canvasChanged();
    emit drawingChanged();
}

QImage DrawingPad::image() const
{
    return m_canvas.convertToFormat(QImage::Format_Grayscale8);
}

Tensor DrawingPad::toTensor(const Shape& shape) const
{
    return digitTensor(m_canvas, shape);
}

Tensor DrawingPad::digitTensor(const QImage& ink, const Shape& shape)
{
    const ImageLayout l = imageLayout(shape);
    if (!l.valid || l.c > 1 || l.h <= 0 || l.w <= 0 || ink.isNull()) return Tensor();
    const int64_t n = l.n > 0 ? l.n : 1;
    const int h = int(l.h), w = int(l.w);
    Shape outShape = shape;
    if (shape.ndim() == 4)
        outShape[0] = n;
    else if (shape.ndim() == 3)
        outShape[0] = 1;
    Tensor t = Tensor::zeros(outShape);

    const QImage gray = ink.convertToFormat(QImage::Format_Grayscale8);
    int left = gray.width(), top = gray.height(), right = -1, bottom = -1;
    for (int y = 0; y < gray.height(); ++y) {
        const uchar* line = gray.constScanLine(y);
        for (int x = 0; x < gray.width(); ++x) {
            if (line[x] <= kInkThreshold) continue;
            left = std::min(left, x);
            right = std::max(right, x);
            top = std::min(top, y);
            bottom = std::max(bottom, y);
        }
    }
    if (right < 0) return t;

    const int bw = right - left + 1, bh = bottom - top + 1;
    const double scale = std::min(w * kDigitBox / bw, h * kDigitBox / bh);
    const int sw = std::clamp(int(std::lround(bw * scale)), 1, w);
    const int sh = std::clamp(int(std::lround(bh * scale)), 1, h);
    const QImage digit = gray.copy(left, top, bw, bh)
                             .scaled(sw, sh, Qt::IgnoreAspectRatio, Qt::SmoothTransformation)
                             .convertToFormat(QImage::Format_Grayscale8);

    double mass = 0, mx = 0, my = 0;
    for (int y = 0; y < digit.height(); ++y) {
        const uchar* line = digit.constScanLine(y);
        for (int x = 0; x < digit.width(); ++x) {
            mass += line[x];
            mx += line[x] * (x + 0.5);
            my += line[x] * (y + 0.5);
        }
    }
    const double cx = mass > 0 ? mx / mass : sw / 2.0;
    const double cy = mass > 0 ? my / mass : sh / 2.0;
    const int ox = std::clamp(int(std::lround(w / 2.0 - cx)), 0, w - digit.width());
    const int oy = std::clamp(int(std::lround(h / 2.0 - cy)), 0, h - digit.height());

    float* out = t.data();
    for (int y = 0; y < digit.height(); ++y) {
        const uchar* line = digit.constScanLine(y);
        for (int x = 0; x < digit.width(); ++x)
            out[(oy + y) * w + ox + x] = float(line[x]) / 255.0f;
    }
    const int64_t plane = int64_t(h) * w;
    for (int64_t k = 1; k < n; ++k)
        std::copy(out, out + plane, out + k * plane);
    return t;
}

QImage DrawingPad::preview() const
{
    if (m_previewCache.isNull()) {
        const Tensor t = toTensor(m_previewShape);
        const int h = int(m_previewShape[0]), w = int(m_previewShape[1]);
        QImage img(w, h, QImage::Format_Grayscale8);
        const float* v = t.data();
        for (int y = 0; y < h; ++y) {
            uchar* line = img.scanLine(y);
            for (int x = 0; x < w; ++x)
                line[x] = uchar(std::lround(std::clamp(v[y * w + x], 0.0f, 1.0f) * 255.0f));
        }
        m_previewCache = img;
    }
    return m_previewCache;
}

void DrawingPad::setPreviewShape(const Shape& shape)
{
    const ImageLayout l = imageLayout(shape);
    const Shape hw = (l.valid && l.h > 0 && l.w > 0) ? Shape { l.h, l.w } : Shape { 28, 28 };
    if (hw == m_previewShape) return;
    m_previewShape = hw;
    m_previewCache = QImage();
    emit canvasChanged();
}

void DrawingPad::setPenWidth(int width)
{
    m_penWidth = std::clamp(width, 2, 80);
    update();
}

void DrawingPad::loadImage(const QImage& picture)
{
    m_canvas.fill(Qt::black);
    m_stroking = false;
    if (!picture.isNull()) {
        QImage gray = grayByLuminance(picture);
        double background = borderMean(gray);
        if (background > 127) {
            gray.invertPixels();
            background = 255 - background;
        }
        stretchLevels(gray, background);
        gray = gray.scaled(kCanvasSize, kCanvasSize, Qt::KeepAspectRatio, Qt::SmoothTransformation);
        QPainter p(&m_canvas);
        p.drawImage((kCanvasSize - gray.width()) / 2, (kCanvasSize - gray.height()) / 2, gray);
    }
    m_empty = !hasInk(image());
    m_previewCache = QImage();
    update();
    emit canvasChanged();
    emit drawingChanged();
}

QRectF DrawingPad::canvasRect() const
{
    const int side = std::max(1, std::min(width(), height()) - 2);
    return QRectF((width() - side) / 2, (height() - side) / 2, side, side);
}

QPointF DrawingPad::toCanvas(const QPointF& widgetPos) const
{
    const QRectF r = canvasRect();
    return (widgetPos - r.topLeft()) * (kCanvasSize / r.width());
}

void DrawingPad::strokeTo(const QPointF& canvasPos)
{
    {
        QPainter p(&m_canvas);
        p.setRenderHint(QPainter::Antialiasing);
        const QColor color = m_erasing ? Qt::black : Qt::white;
        const double width = strokeWidth();
        if (canvasPos == m_last) {
            p.setPen(Qt::NoPen);
            p.setBrush(color);
            p.drawEllipse(canvasPos, width / 2, width / 2);
        } else {
            p.setPen(QPen(color, width, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
            p.drawLine(m_last, canvasPos);
        }
    }
    m_last = canvasPos;
    if (!m_erasing) m_empty = false;
    m_previewCache = QImage();
    update();
    emit canvasChanged();
}

double DrawingPad::strokeWidth() const
{
    // The eraser is wider than the pen so that it also removes a stroke's antialiased fringe.
    return m_erasing && m_stroking ? m_penWidth * 1.5 + 2 : m_penWidth;
}

void DrawingPad::finishStroke()
{
    m_stroking = false;
    if (m_erasing) m_empty = !hasInk(image());
    update();
    emit drawingChanged();
}

void DrawingPad::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const QRectF r = canvasRect();
    p.setRenderHint(QPainter::SmoothPixmapTransform);
    p.drawImage(r, m_canvas);
    if (!isEnabled()) p.fillRect(r, QColor(128, 128, 128, 100));
    if (m_empty && !m_stroking) {
        p.setPen(QColor(140, 140, 140));
        p.drawText(r, Qt::AlignCenter, tr("Draw a digit here"));
    }
    p.setPen(palette().color(QPalette::Mid));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r.adjusted(-0.5, -0.5, 0.5, 0.5));
    if (isEnabled() && r.contains(m_hover)) {
        const double radius = strokeWidth() / 2 * r.width() / kCanvasSize;
        p.setRenderHint(QPainter::Antialiasing);
        p.setClipRect(r);
        p.setPen(QPen(QColor(255, 255, 255, m_erasing && m_stroking ? 200 : 110), 1));
        p.drawEllipse(m_hover, radius, radius);
    }
}

void DrawingPad::mousePressEvent(QMouseEvent* event)
{
    if (m_stroking || (event->button() != Qt::LeftButton && event->button() != Qt::RightButton)) {
        QWidget::mousePressEvent(event);
        return;
    }
    m_stroking = true;
    m_erasing = event->button() == Qt::RightButton;
    m_last = toCanvas(event->position());
    m_hover = event->position();
    strokeTo(m_last);
    event->accept();
}

void DrawingPad::mouseMoveEvent(QMouseEvent* event)
{
    m_hover = event->position();
    if (m_stroking)
        strokeTo(toCanvas(event->position()));
    else
        update();
}

void DrawingPad::mouseReleaseEvent(QMouseEvent* event)
{
    const Qt::MouseButton strokeButton = m_erasing ? Qt::RightButton : Qt::LeftButton;
    if (m_stroking && event->button() == strokeButton) {
        finishStroke();
        event->accept();
        return;
    }
    QWidget::mouseReleaseEvent(event);
}

void DrawingPad::leaveEvent(QEvent* event)
{
    m_hover = QPointF(-1, -1);
    update();
    QWidget::leaveEvent(event);
}

void DrawingPad::dragEnterEvent(QDragEnterEvent* event)
{
    const QMimeData* mime = event->mimeData();
    const bool file = mime->hasUrls() && mime->urls().size() == 1 && mime->urls().first().isLocalFile()
        && isImageFileName(mime->urls().first().toLocalFile());
    if (file || mime->hasImage()) event->acceptProposedAction();
}

void DrawingPad::dropEvent(QDropEvent* event)
{
    const QMimeData* mime = event->mimeData();
    QImage picture;
    if (mime->hasUrls() && !mime->urls().isEmpty() && mime->urls().first().isLocalFile())
        picture = readImageFile(mime->urls().first().toLocalFile());
    else if (mime->hasImage())
        picture = qvariant_cast<QImage>(mime->imageData());
    if (picture.isNull()) return;
    loadImage(picture);
    event->acceptProposedAction();
}

} // namespace opscope::gui
