#pragma once

#include "debug/unit_anatomy.h"

#include <QWidget>

class QLabel;
class QScrollArea;
class QTableWidget;

namespace opscope::gui {

class ConvTermsCanvas;

/// How one output value is computed (debug/unit_anatomy.h). A convolution: for every input channel
/// the patch under the kernel, the kernel's weights and their products, each as a grid of numbers
/// coloured blue-white-red, with the channel's partial sum; then Σ + bias, the value the tensor holds
/// and the activation that follows. A fully connected unit: its inputs by the size of their
/// contribution (value, weight, product, share).
class UnitAnatomyView : public QWidget {
    Q_OBJECT
public:
    explicit UnitAnatomyView(QWidget* parent = nullptr);
    void setAnatomy(const debug::UnitAnatomy& anatomy);
    const debug::UnitAnatomy& anatomy() const { return m_anatomy; }
    /// The summary line(s) as plain text (tests).
    QString summaryText() const;
    QSize sizeHint() const override;

private:
    debug::UnitAnatomy m_anatomy;
    QLabel* m_summary;
    QScrollArea* m_scroll;
    ConvTermsCanvas* m_canvas;
    QTableWidget* m_table;
};

} // namespace opscope::gui
