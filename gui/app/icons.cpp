#include "gui/app/icons.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace opscope::gui {

namespace {

const QColor kGreen(46, 160, 67);
const QColor kBlue(40, 110, 200);
const QColor kRed(210, 45, 45);
const QColor kGrey(90, 96, 105);
const QColor kAmber(230, 150, 20);

// Paints on a 32×32 design grid; the pixmap is scaled from it.
void paint(QPainter& p, IconKind kind)
{
    p.setRenderHint(QPainter::Antialiasing);
    QPen pen(kGrey, 2.6, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
    auto arrow = [&](QPointF from, QPointF to, QColor c) {
        pen.setColor(c);
        p.setPen(pen);
        p.drawLine(from, to);
        const QPointF d = (to - from) / std::hypot(to.x() - from.x(), to.y() - from.y());
        const QPointF n(-d.y(), d.x());
        QPainterPath head;
        head.moveTo(to + d * 3);
        head.lineTo(to - d * 5 + n * 5);
        head.lineTo(to - d * 5 - n * 5);
        head.closeSubpath();
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawPath(head);
    };
    auto dot = [&](QPointF c, qreal r, QColor col) {
        p.setPen(Qt::NoPen);
        p.setBrush(col);
        p.drawEllipse(c, r, r);
    };
    switch (kind) {
    case IconKind::Run:
    case IconKind::Continue: {
        QPainterPath tri;
        tri.moveTo(9, 6);
        tri.lineTo(26, 16);
        tri.lineTo(9, 26);
        tri.closeSubpath();
        p.setPen(Qt::NoPen);
        p.setBrush(kGreen);
        p.drawPath(tri);
        if (kind == IconKind::Continue) {
            p.setBrush(kGreen.darker(120));
            p.drawRect(QRectF(4, 6, 3, 20));
        }
        break;
    }
    case IconKind::Pause:
        p.setPen(Qt::NoPen);
        p.setBrush(kBlue);
        p.drawRoundedRect(QRectF(8, 6, 6, 20), 1.5, 1.5);
        p.drawRoundedRect(QRectF(18, 6, 6, 20), 1.5, 1.5);
        break;
    case IconKind::Stop:
        p.setPen(Qt::NoPen);
        p.setBrush(kRed);
        p.drawRoundedRect(QRectF(7, 7, 18, 18), 2.5, 2.5);
        break;
    case IconKind::StepOver: {
        pen.setColor(kBlue);
        p.setPen(pen);
        p.setBrush(Qt::NoBrush);
        QPainterPath arc;
        arc.moveTo(6, 17);
        arc.cubicTo(7, 4, 24, 4, 25, 14);
        p.drawPath(arc);
        arrow(QPointF(25, 10), QPointF(25.5, 16), kBlue);
        dot(QPointF(16, 25), 3.2, kGrey);
        break;
    }
    case IconKind::StepInto:
        arrow(QPointF(16, 4), QPointF(16, 18), kBlue);
        dot(QPointF(16, 26), 3.2, kGrey);
        break;
    case IconKind::StepOut:
        arrow(QPointF(16, 20), QPointF(16, 7), kBlue);
        dot(QPointF(16, 26), 3.2, kGrey);
        break;
    case IconKind::RunTo:
        arrow(QPointF(4, 16), QPointF(19, 16), kGreen);
        pen.setColor(kGrey);
        p.setPen(pen);
        p.drawLine(QPointF(26, 7), QPointF(26, 25));
        break;
    case IconKind::Breakpoint:
        dot(QPointF(16, 16), 9, kRed);
        break;
    case IconKind::BreakNan:
        dot(QPointF(16, 16), 11, kRed);
        p.setPen(Qt::white);
        {
            QFont f = p.font();
            f.setPixelSize(10);
            f.setBold(true);
            p.setFont(f);
        }
        p.drawText(QRectF(4, 4, 24, 24), Qt::AlignCenter, QStringLiteral("NaN"));
        break;
    case IconKind::Open: {
        p.setPen(QPen(kAmber.darker(130), 1.5));
        p.setBrush(kAmber);
        QPainterPath folder;
        folder.moveTo(4, 9);
        folder.lineTo(12, 9);
        folder.lineTo(14, 12);
        folder.lineTo(28, 12);
        folder.lineTo(28, 26);
        folder.lineTo(4, 26);
        folder.closeSubpath();
        p.drawPath(folder);
        break;
    }
    case IconKind::Fit:
        pen.setColor(kGrey);
        p.setPen(pen);
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(9, 9, 14, 14));
        for (QPointF c : { QPointF(4, 4), QPointF(28, 4), QPointF(4, 28), QPointF(28, 28) }) {
            const QPointF in(c.x() < 16 ? c.x() + 4 : c.x() - 4, c.y() < 16 ? c.y() + 4 : c.y() - 4);
            p.drawLine(c, in);
        }
        break;
    case IconKind::App: {
        // Three layers of a network with a breakpoint on the middle one.
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(38, 50, 72));
        p.drawRoundedRect(QRectF(1, 1, 30, 30), 6, 6);
        pen.setColor(QColor(150, 170, 200));
        pen.setWidthF(1.4);
        p.setPen(pen);
        const QPointF a(8, 9), b(8, 23), c(16, 16), d(24, 9), e(24, 23);
        for (QPointF from : { a, b })
            p.drawLine(from, c);
        for (QPointF to : { d, e })
            p.drawLine(c, to);
        for (QPointF n : { a, b, d, e })
            dot(n, 3, QColor(120, 190, 255));
        dot(c, 4.5, kRed);
        break;
    }
    }
}

} // namespace

QIcon makeIcon(IconKind kind)
{
    QIcon icon;
    for (int size : { 16, 24, 32, 48, 64, 128 }) {
        QPixmap pm(size, size);
        pm.fill(Qt::transparent);
        QPainter p(&pm);
        p.scale(size / 32.0, size / 32.0);
        paint(p, kind);
        p.end();
        icon.addPixmap(pm);
        if (kind != IconKind::App) {
            // A greyed variant for disabled actions.
            QPixmap grey(pm.size());
            grey.fill(Qt::transparent);
            QPainter g(&grey);
            g.setOpacity(0.3);
            g.drawPixmap(0, 0, pm);
            g.end();
            icon.addPixmap(grey, QIcon::Disabled);
        }
    }
    return icon;
}

} // namespace opscope::gui
