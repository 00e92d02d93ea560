#pragma once

#include "tensor/shape.h"
#include "tensor/tensor.h"

#include <QImage>
#include <QPointF>
#include <QWidget>

namespace opscope::gui {

/// A square canvas for drawing a digit with the mouse: white antialiased ink on black, as in MNIST.
/// The left button draws, the right button erases. toTensor() applies MNIST's preprocessing, so a
/// model trained on MNIST sees the drawing the way it saw its training digits. An image file dropped
/// on the pad is loaded as the drawing.
class DrawingPad : public QWidget {
    Q_OBJECT

public:
    /// Side of the canvas in pixels; the widget scales it to its own size.
    static constexpr int kCanvasSize = 280;
    static constexpr int kDefaultPenWidth = 22;

    explicit DrawingPad(QWidget* parent = nullptr);

    void clear();
    bool isEmpty() const { return m_empty; }
    /// The canvas: kCanvasSize × kCanvasSize, Format_Grayscale8, ink 255 on 0.
    QImage image() const;

    /// MNIST-style tensor of `shape` ((N, 1, H, W), (1, H, W) or (H, W), N copies; unknown N is 1):
    /// the ink's bounding box scaled so its longer side is 20/28 of the field, keeping its aspect,
    /// pasted with its centre of mass at the field's centre; values in [0, 1]. All zeros when the
    /// pad is empty; an undefined tensor when `shape` is not a one-channel image.
    opscope::Tensor toTensor(const opscope::Shape& shape = opscope::Shape { 1, 1, 28, 28 }) const;
    /// The same preprocessing applied to any picture with light ink on a dark background.
    static opscope::Tensor digitTensor(const QImage& ink, const opscope::Shape& shape);

    /// The tensor toTensor(previewShape()) as a grayscale picture of H×W pixels.
    QImage preview() const;
    opscope::Shape previewShape() const { return m_previewShape; }
    void setPreviewShape(const opscope::Shape& shape);

    int penWidth() const { return m_penWidth; }
    /// Pen diameter in canvas pixels (clamped to 2..80).
    void setPenWidth(int width);

    /// Replaces the drawing with `picture`, fitted into the canvas keeping its aspect. A picture with
    /// a light background (dark ink on paper) is inverted to light ink on black. Emits drawingChanged().
    void loadImage(const QImage& picture);

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override { return width; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    /// A stroke ended (mouse release), or the pad was cleared or loaded. Not emitted while drawing.
    void drawingChanged();
    /// Any change of the canvas, also during a stroke (for live previews).
    void canvasChanged();

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    QRectF canvasRect() const;
    QPointF toCanvas(const QPointF& widgetPos) const;
    void strokeTo(const QPointF& canvasPos);
    void finishStroke();
    double strokeWidth() const;

    QImage m_canvas; // Format_RGB32, gray values
    bool m_empty = true;
    int m_penWidth = kDefaultPenWidth;
    bool m_stroking = false;
    bool m_erasing = false;
    QPointF m_last;
    QPointF m_hover { -1, -1 };
    opscope::Shape m_previewShape { 28, 28 };
    mutable QImage m_previewCache;
};

} // namespace opscope::gui
