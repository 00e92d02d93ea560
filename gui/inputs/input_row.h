#pragma once

#include "gui/inputs/input_source.h"

#include <QFrame>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QToolButton;

namespace opscope::gui {

/// One model input in the inputs panel: its name and shape, a combo of the sources that fit it,
/// the chosen source's parameters and a status line. A .npy or image file dropped on the row
/// becomes its source.
class InputRow : public QFrame {
    Q_OBJECT

public:
    explicit InputRow(const InputSpec& spec, QWidget* parent = nullptr);

    const InputSpec& spec() const { return m_spec; }
    /// True when `kind` is offered for this input (Default needs a default value, Drawing a single
    /// one-channel image shape).
    bool offers(InputSource::Kind kind) const;
    /// The source this input starts with: Default when the model has one, else Ones.
    InputSource::Kind initialKind() const;

    InputSource source() const { return m_source; }
    /// Shows `source` (a kind this input does not offer falls back to initialKind()). Does not emit
    /// sourceChanged().
    void setSource(const InputSource& source);

    void setStatus(const QString& text, bool error);
    QString statusText() const { return m_statusText; }
    bool hasError() const { return m_statusError; }

    /// True for a local .npy or image file.
    static bool acceptsFile(const QString& path);
    /// Makes `path` the source (.npy file or image file) and emits sourceChanged().
    void useFile(const QString& path);

signals:
    /// The user changed the source or one of its parameters.
    void sourceChanged();

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragLeaveEvent(QDragLeaveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    void buildUi();
    void showSource();
    void updateVisibility();
    void edited();
    void browse();
    void applyPreset(double mean, double std);
    void applyPreset3(const std::array<double, 3>& mean, const std::array<double, 3>& std);

    InputSpec m_spec;
    InputSource m_source;
    QString m_statusText;
    bool m_statusError = false;
    bool m_dropActive = false;
    bool m_updating = false;

    QFormLayout* m_form = nullptr;
    QComboBox* m_kindCombo = nullptr;
    QWidget* m_rangeRow = nullptr;
    QDoubleSpinBox* m_lo = nullptr;
    QDoubleSpinBox* m_hi = nullptr;
    QWidget* m_gaussRow = nullptr;
    QDoubleSpinBox* m_mean = nullptr;
    QDoubleSpinBox* m_std = nullptr;
    QWidget* m_seedRow = nullptr;
    QSpinBox* m_seed = nullptr;
    QWidget* m_fileRow = nullptr;
    QLineEdit* m_file = nullptr;
    QComboBox* m_channels = nullptr;
    QWidget* m_imageOptions = nullptr;
    QCheckBox* m_invert = nullptr;
    QCheckBox* m_normalize = nullptr;
    QWidget* m_imgMeanRow = nullptr;
    QWidget* m_imgStdRow = nullptr;
    std::array<QDoubleSpinBox*, 3> m_imgMean {};
    std::array<QDoubleSpinBox*, 3> m_imgStd {};
    QToolButton* m_presets = nullptr;
    QLabel* m_statusIcon = nullptr;
    QLabel* m_status = nullptr;
};

} // namespace opscope::gui
