#pragma once

#include "gui/tensor/color_map.h"

#include <cstdint>

#include <QWidget>

namespace opscope::gui {

/// Legend of the feature-map colours: the gradient with the value range under it, a caption
/// saying which range it is, and swatches for NaN and ±Inf when the maps contain them.
class ColorBar : public QWidget {
    Q_OBJECT

public:
    explicit ColorBar(QWidget* parent = nullptr);

    void setColorMap(ColorMap map);
    /// The range spread over the gradient; an empty or NaN range shows the gradient alone.
    void setRange(double lo, double hi, const QString& caption);
    void setSpecialCounts(int64_t nan, int64_t posInf, int64_t negInf);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    ColorMap m_map = ColorMap::Viridis;
    double m_lo = 0;
    double m_hi = 0;
    bool m_hasRange = false;
    QString m_caption;
    int64_t m_nan = 0;
    int64_t m_posInf = 0;
    int64_t m_negInf = 0;
};

} // namespace opscope::gui
