#pragma once

#include "gui/inputs/input_source.h"

#include <vector>

#include <QWidget>

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QSlider;
class QTimer;
class QVBoxLayout;

namespace opscope::gui {

class DrawingPad;
class InputRow;

/// Content of the "Model" dock: the model chooser (built-in samples, Open…, what is loaded) and one
/// row per model input choosing where its values come from, with the drawing pad below when an
/// input draws from it. buildInputs() makes the tensors the next run uses.
class InputPanel : public QWidget {
    Q_OBJECT

public:
    /// The tensors of every input in order, or the first error (naming the input and the problem).
    struct Built {
        /// An undefined tensor: the engine's own input (InputSpec::defaultElsewhere, chosen as Default).
        std::vector<opscope::Tensor> tensors;
        QString error;
        InputProblem problem = InputProblem::None;

        bool ok() const { return error.isEmpty(); }
    };

    explicit InputPanel(QWidget* parent = nullptr);

    /// Fills the sample combo; `descriptions` (same order) become the items' tool tips.
    void setSamples(const QStringList& names, const QStringList& descriptions);
    /// Selects `name` in the sample combo without emitting sampleRequested(); an unknown or empty
    /// name (a model from a file) shows the combo's placeholder.
    void setCurrentSample(const QString& name);
    QString currentSample() const;
    /// `title`: the model's name and where it comes from; `details`: a one-line summary.
    void setModelInfo(const QString& title, const QString& details);
    /// No rows: the model's inputs are not this panel's (a server runs it with its own); `text` says so.
    void setInputsElsewhere(const QString& text);

    /// Replaces the input rows. Every input starts from its default (Ones when it has none) and the
    /// model's shape; the drawing is kept.
    void setInputs(const std::vector<InputSpec>& inputs);
    /// The inputs as the model describes them (with the model's shapes; see shapes()).
    const std::vector<InputSpec>& inputs() const { return m_specs; }

    /// The current (effective) shape of every input in order: the model's unless the user gave
    /// another (or a .npy file gave one to an input of unknown shape). An input whose shape is still
    /// not known has an unknown shape (Shape::known() false).
    std::vector<opscope::Shape> shapes() const;
    /// Applies shapes restored from settings, by position (extra entries are ignored; a shape that is
    /// not known() keeps the model's). Sources that fit the new shapes are re-evaluated. Does not emit
    /// shapesChanged() or sourcesChanged().
    void setShapes(const std::vector<opscope::Shape>& shapes);

    std::vector<InputSource> sources() const;
    /// Applies sources restored from settings, by position (extra entries are ignored; a kind an
    /// input does not offer falls back to its default, and returns when setShapes() gives a shape
    /// that offers it). Does not emit sourcesChanged().
    void setSources(const std::vector<InputSource>& sources);
    void setSource(int index, const InputSource& source);

    /// Uses the current shapes (also one being typed); an input whose shape is unknown or does not
    /// parse is an error.
    Built buildInputs() const;

    /// Status line of input `index`: the source's description or its error. Current after
    /// refreshStatus() (statuses otherwise follow edits after a short delay).
    QString statusText(int index) const;
    bool statusIsError(int index) const;
    void refreshStatus();

    DrawingPad* drawingPad() const { return m_pad; }
    bool runOnRelease() const;
    void setRunOnRelease(bool on);

    /// While busy, the model and the inputs cannot be edited. The drawing pad stays usable: a drawing
    /// finished during a run asks for one more run when the panel stops being busy.
    void setBusy(bool busy);
    bool isBusy() const { return m_busy; }

signals:
    /// The user changed an input's source or one of its parameters.
    void sourcesChanged();
    /// The user changed an input's shape (after it parses), reset it, or a .npy file gave it.
    void shapesChanged();
    void sampleRequested(const QString& name);
    void openRequested();
    /// A finished drawing asks for a run (with "Run on release" checked).
    void runRequested();

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    QWidget* buildModelGroup();
    QWidget* buildDrawingGroup();
    void rowEdited(InputRow* row);
    void rowShapeEdited(InputRow* row, bool changed);
    InputResult tensorFor(const InputRow* row, const opscope::Shape& shape, bool named) const;
    void drawingFinished();
    void updateDrawingGroup();
    void updatePreview();
    void scheduleStatus();
    void updateStatus(InputRow* row) const;
    opscope::Tensor drawingTensorFor(const opscope::Shape& shape) const;
    bool usesDrawing() const;

    std::vector<InputSpec> m_specs;
    std::vector<InputRow*> m_rows;
    bool m_busy = false;
    bool m_runPending = false;

    QScrollArea* m_scroll = nullptr;
    QComboBox* m_sampleCombo = nullptr;
    QPushButton* m_openButton = nullptr;
    QLabel* m_modelTitle = nullptr;
    QLabel* m_modelDetails = nullptr;
    QGroupBox* m_modelGroup = nullptr;
    QGroupBox* m_inputsGroup = nullptr;
    QVBoxLayout* m_rowsLayout = nullptr;
    QLabel* m_noInputs = nullptr;
    QGroupBox* m_drawingGroup = nullptr;
    DrawingPad* m_pad = nullptr;
    QLabel* m_preview = nullptr;
    QSlider* m_penSlider = nullptr;
    QCheckBox* m_runOnRelease = nullptr;
    QTimer* m_statusTimer = nullptr;
};

} // namespace opscope::gui
