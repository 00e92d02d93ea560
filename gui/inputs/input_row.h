#pragma once

#include "gui/inputs/input_source.h"

#include <optional>

#include <QFrame>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTimer;
class QToolButton;

namespace opscope::gui {

/// One model input in the inputs panel: its name, an editor of its shape, a combo of the sources
/// that fit the shape, the chosen source's parameters and a status line. A .npy or image file
/// dropped on the row becomes its source.
class InputRow : public QFrame {
    Q_OBJECT

public:
    explicit InputRow(const InputSpec& spec, QWidget* parent = nullptr);

    /// The input as the model describes it (spec().shape is the model's shape).
    const InputSpec& spec() const { return m_spec; }
    /// True when `kind` is offered for this input's current shape (Default needs a default value
    /// that fits the shape, Image file an image shape, Drawing a single one-channel image shape).
    bool offers(InputSource::Kind kind) const;
    /// The source this input starts with: Default when it is offered, else Ones.
    InputSource::Kind initialKind() const;

    InputSource source() const { return m_source; }
    /// Shows `source`. A kind this input does not offer falls back to initialKind() and comes back
    /// when a later shape offers it (see waitingKind()). Does not emit sourceChanged(); a .npy file
    /// that gives an input of unknown shape its shape emits shapeEdited(true).
    void setSource(const InputSource& source);
    /// A kind set earlier that the current shape does not offer; the row returns to it once the shape
    /// allows. Cleared when the user picks a kind.
    std::optional<InputSource::Kind> waitingKind() const { return m_waitingKind; }

    /// The input's current (effective) shape: the model's until the user gives another (or a .npy
    /// file gives one to an input whose shape the model does not record). May be unknown
    /// (Shape::known() false).
    const opscope::Shape& shape() const { return m_shape; }
    /// Shows `shape` as the input's shape (a shape that is not known() goes back to the model's) and
    /// re-evaluates the sources offered. Emits neither shapeEdited() nor sourceChanged().
    void setShape(const opscope::Shape& shape);
    /// Goes back to the model's shape, as the reset button does (emits like a user edit).
    void resetShape();
    /// The problem with the shape the user typed ("shape '1x0': dimension 2 is 0; …"), or empty.
    QString shapeError() const { return m_shapeError; }
    /// The shape for a run started now: also a shape typed but not applied yet. Sets `*error` when the
    /// typed text does not parse (returning shape()).
    opscope::Shape currentShape(QString* error = nullptr) const;

    void setStatus(const QString& text, bool error);
    QString statusText() const { return m_statusText; }
    bool hasError() const { return m_statusError; }

    /// True for a local .npy or image file.
    static bool acceptsFile(const QString& path);
    /// Makes `path` the source (.npy file or image file) and emits sourceChanged().
    void useFile(const QString& path);

signals:
    /// The user changed the source or one of its parameters (also when a new shape changed it).
    void sourceChanged();
    /// The user typed a shape, reset it, or a .npy file gave it. `changed`: shape() is another shape
    /// (false when the text did not parse, see shapeError()).
    void shapeEdited(bool changed);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragLeaveEvent(QDragLeaveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    void buildUi();
    void rebuildKinds();
    bool applyShape(const opscope::Shape& shape);
    void applyShapeText(bool normalize);
    bool adoptFileShape();
    void showShape(bool rewrite = true);
    void showSource();
    void updateVisibility();
    void edited();
    void browse();
    void applyPreset(double mean, double std);
    void applyPreset3(const std::array<double, 3>& mean, const std::array<double, 3>& std);

    InputSpec m_spec;
    InputSource m_source;
    std::optional<InputSource::Kind> m_waitingKind;
    opscope::Shape m_shape;
    QString m_shapeError;
    QString m_shownShapeText; // the editor's text when the shape was last applied or shown
    bool m_shapeFromFile = false;
    QString m_statusText;
    bool m_statusError = false;
    bool m_dropActive = false;
    bool m_updating = false;

    QLineEdit* m_shapeEdit = nullptr;
    QToolButton* m_resetShape = nullptr;
    QTimer* m_shapeTimer = nullptr;
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
