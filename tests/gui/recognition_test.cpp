// The trained lenet sample (real MNIST digits) recognises digits as people print and draw them:
// digits rendered in Debian's common fonts and drawn as strokes go through the drawing pad's
// preprocessing, as in the window: ink scaled into a 20-pixel box, its centre of mass at the centre
// of the 28×28 field, as MNIST's digits were prepared. printed() is the script that renders them.

#include "gui/inputs/drawing_pad.h"
#include "models/registry.h"

#include <gtest/gtest.h>

#include <QFont>
#include <QFontDatabase>
#include <QImage>
#include <QPainter>
#include <QPainterPath>

using namespace opscope;
using namespace opscope::gui;

namespace {

int predict(samples::Sample& lenet, const QImage& picture)
{
    DrawingPad pad; // as the window does: the picture on the pad, then MNIST-style preprocessing
    pad.loadImage(picture);
    const Tensor x = pad.toTensor(Shape { 1, 1, 28, 28 });
    const Tensor y = lenet.block->call(x);
    int best = 0;
    for (int k = 1; k < 10; ++k)
        if (y.at(k) > y.at(best)) best = k;
    return best;
}

// Dark ink on white paper, as printed.
QImage printed(int digit, const QString& family, bool bold)
{
    QImage img(280, 280, QImage::Format_Grayscale8);
    img.fill(255);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    QFont f(family);
    f.setPixelSize(200);
    f.setBold(bold);
    p.setFont(f);
    p.setPen(Qt::black);
    p.drawText(img.rect(), Qt::AlignCenter, QString::number(digit));
    return img;
}

} // namespace

// Debian's common fonts (fonts-dejavu-core, fonts-liberation2, fonts-freefont-ttf; .ci/setup installs
// them), each used only where installed: Qt would otherwise draw another font under its name.
TEST(Recognition, PrintedDigitsInCommonFonts)
{
    samples::Sample lenet = samples::makeSample("lenet");
    const QStringList installed = QFontDatabase::families();
    std::vector<std::string> families;
    for (const char* f : { "DejaVu Sans", "DejaVu Serif", "DejaVu Sans Mono", "Liberation Sans", "Liberation Serif",
             "Liberation Mono", "FreeSans", "FreeSerif", "FreeMono" })
        if (installed.contains(QString::fromLatin1(f))) families.emplace_back(f);
    ASSERT_GE(families.size(), 3u) << "DejaVu's fonts (fonts-dejavu-core) are missing";
    int right = 0, total = 0;
    std::string wrong;
    for (const std::string& familyName : families)
        for (bool bold : { false, true })
            for (int d = 0; d < 10; ++d) {
                const char* family = familyName.c_str();
                const int got = predict(lenet, printed(d, QString::fromLatin1(family), bold));
                ++total;
                if (got == d)
                    ++right;
                else
                    wrong += std::string(" ") + family + (bold ? " bold " : " ") + std::to_string(d) + "->"
                        + std::to_string(got);
            }
    std::printf("printed digits in %zu fonts: %d of %d right;%s\n", families.size(), right, total, wrong.c_str());
    EXPECT_GE(right * 100, total * 95) << wrong;
}

namespace {

// A digit drawn with the mouse: thick round white strokes on black, in a hand's shapes.
QImage drawn(int digit, qreal pen, qreal slant)
{
    QImage img(280, 280, QImage::Format_Grayscale8);
    img.fill(0);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(Qt::white, pen, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    p.translate(140, 140);
    p.shear(slant, 0);
    p.translate(-140, -140);
    QPainterPath path;
    switch (digit) {
    case 0:
        path.addEllipse(QPointF(140, 140), 60, 95);
        break;
    case 1:
        path.moveTo(115, 80);
        path.lineTo(150, 40);
        path.lineTo(150, 240);
        break;
    case 2:
        path.moveTo(85, 95);
        path.cubicTo(95, 20, 205, 25, 195, 100);
        path.lineTo(80, 240);
        path.lineTo(210, 240);
        break;
    case 3:
        path.moveTo(80, 60);
        path.cubicTo(200, 20, 220, 130, 130, 140);
        path.cubicTo(230, 150, 210, 260, 75, 225);
        break;
    case 4:
        path.moveTo(170, 240);
        path.lineTo(170, 40);
        path.lineTo(70, 170);
        path.lineTo(215, 170);
        break;
    case 5:
        path.moveTo(200, 45);
        path.lineTo(95, 45);
        path.lineTo(85, 135);
        path.cubicTo(200, 100, 230, 240, 80, 230);
        break;
    case 6:
        path.moveTo(180, 45);
        path.cubicTo(80, 70, 60, 200, 110, 235);
        path.cubicTo(190, 260, 220, 150, 140, 140);
        path.cubicTo(100, 138, 80, 170, 85, 190);
        break;
    case 7:
        path.moveTo(70, 50);
        path.lineTo(210, 50);
        path.lineTo(120, 240);
        break;
    case 8:
        path.addEllipse(QPointF(140, 90), 50, 45);
        path.addEllipse(QPointF(140, 190), 60, 50);
        break;
    default:
        path.addEllipse(QPointF(135, 90), 55, 50);
        path.moveTo(190, 95);
        path.lineTo(170, 240);
        break;
    }
    p.drawPath(path);
    return img;
}

} // namespace

TEST(Recognition, DigitsDrawnOnThePad)
{
    samples::Sample lenet = samples::makeSample("lenet");
    int right = 0, total = 0;
    std::string wrong;
    for (qreal pen : { 14.0, 24.0, 34.0 })
        for (qreal slant : { -0.15, 0.0, 0.2 })
            for (int d = 0; d < 10; ++d) {
                const int got = predict(lenet, drawn(d, pen, slant));
                ++total;
                if (got == d)
                    ++right;
                else
                    wrong += " pen " + std::to_string(int(pen)) + " slant " + std::to_string(slant).substr(0, 5) + " "
                        + std::to_string(d) + "->" + std::to_string(got);
            }
    std::printf("drawn digits: %d of %d right;%s\n", right, total, wrong.c_str());
    EXPECT_GE(right, total * 9 / 10) << wrong;
}
