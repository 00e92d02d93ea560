#include "gui/inputs/input_panel.h"

#include "gui/inputs/drawing_pad.h"
#include "gui/inputs/input_row.h"

#include <algorithm>
#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMimeData>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {

using Kind = InputSource::Kind;

constexpr int kPreviewSide = 112;
constexpr int kStatusDelayMs = 150;
// Beyond this many values the status line does not scan the tensor for its range.
constexpr int64_t kMaxRangeScan = int64_t(1) << 24;

QString valueRange(const Tensor& t)
{
    if (!t.defined() || t.size() == 0 || t.size() > kMaxRangeScan) return QString();
    double lo = INFINITY, hi = -INFINITY;
    bool nan = false;
    const TensorView view = t.view();
    for (int64_t i = 0; i < t.size(); ++i) {
        const double v = view.valueAt(i);
        if (std::isnan(v)) {
            nan = true;
            continue;
        }
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    QString text = lo <= hi ? QStringLiteral("values %1 to %2").arg(lo, 0, 'g', 4).arg(hi, 0, 'g', 4)
                            : QStringLiteral("no finite values");
    if (nan) text += QStringLiteral(", NaN");
    return text;
}

bool needsShape(Kind kind)
{
    return kind == Kind::Ones || kind == Kind::Zeros || kind == Kind::Uniform || kind == Kind::Normal;
}

// An example of a complete shape: the known dimensions of `shape` with 1 for the unknown ones.
QString shapeExample(const Shape& shape)
{
    if (shape.ndim() == 0) return QStringLiteral("1x1x28x28");
    Shape example = shape;
    for (int i = 0; i < example.ndim(); ++i)
        if (example[i] <= 0) example[i] = 1;
    return QString::fromStdString(shapeToX(example));
}

// Unknown (0) dimensions of `want` match any size.
bool fitsShape(const Shape& have, const Shape& want)
{
    if (have.ndim() != want.ndim()) return false;
    for (int i = 0; i < want.ndim(); ++i)
        if (want[i] > 0 && have[i] != want[i]) return false;
    return true;
}

QString singleLocalFile(const QMimeData* mime)
{
    const QList<QUrl> urls = mime->urls();
    if (urls.size() != 1 || !urls.first().isLocalFile()) return QString();
    return urls.first().toLocalFile();
}

} // namespace

InputPanel::InputPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);

    auto* content = new QWidget;
    auto* column = new QVBoxLayout(content);
    column->addWidget(buildModelGroup());

    m_inputsGroup = new QGroupBox(tr("Inputs"), content);
    m_rowsLayout = new QVBoxLayout(m_inputsGroup);
    m_rowsLayout->setContentsMargins(4, 4, 4, 4);
    m_rowsLayout->setSpacing(0);
    m_noInputs = new QLabel(tr("No model loaded."), m_inputsGroup);
    m_noInputs->setForegroundRole(QPalette::PlaceholderText);
    m_noInputs->setMargin(6);
    m_rowsLayout->addWidget(m_noInputs);
    column->addWidget(m_inputsGroup);

    column->addWidget(buildDrawingGroup());
    column->addStretch(1);

    m_scroll = new QScrollArea(this);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_scroll->setWidget(content);
    outer->addWidget(m_scroll);

    m_statusTimer = new QTimer(this);
    m_statusTimer->setSingleShot(true);
    m_statusTimer->setInterval(kStatusDelayMs);
    connect(m_statusTimer, &QTimer::timeout, this, &InputPanel::refreshStatus);

    setAcceptDrops(true);
    updateDrawingGroup();
    updatePreview();
}

QWidget* InputPanel::buildModelGroup()
{
    m_modelGroup = new QGroupBox(tr("Model"));
    auto* v = new QVBoxLayout(m_modelGroup);

    m_sampleCombo = new QComboBox(m_modelGroup);
    m_sampleCombo->setPlaceholderText(tr("Built-in sample…"));
    m_sampleCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_sampleCombo->setMinimumContentsLength(6);
    m_sampleCombo->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_sampleCombo->setToolTip(tr("Load a built-in sample model"));
    m_openButton = new QPushButton(tr("Open…"), m_modelGroup);
    m_openButton->setToolTip(tr("Open a model: an MXNet -symbol.json (its .params beside it) or an ONNX .onnx file"));
    auto* chooser = new QHBoxLayout;
    chooser->addWidget(m_sampleCombo, 1);
    chooser->addWidget(m_openButton);
    v->addLayout(chooser);

    m_modelTitle = new QLabel(m_modelGroup);
    QFont bold = m_modelTitle->font();
    bold.setBold(true);
    m_modelTitle->setFont(bold);
    m_modelTitle->setWordWrap(true);
    m_modelTitle->setTextFormat(Qt::PlainText);
    m_modelTitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_modelDetails = new QLabel(m_modelGroup);
    m_modelDetails->setWordWrap(true);
    m_modelDetails->setTextFormat(Qt::PlainText);
    m_modelDetails->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_modelDetails->setForegroundRole(QPalette::PlaceholderText);
    v->addWidget(m_modelTitle);
    v->addWidget(m_modelDetails);
    m_modelTitle->hide();
    m_modelDetails->hide();

    connect(m_sampleCombo, &QComboBox::activated, this, [this](int index) {
        if (index >= 0) emit sampleRequested(m_sampleCombo->itemText(index));
    });
    connect(m_openButton, &QPushButton::clicked, this, &InputPanel::openRequested);
    return m_modelGroup;
}

QWidget* InputPanel::buildDrawingGroup()
{
    m_drawingGroup = new QGroupBox(tr("Drawing pad"));
    auto* v = new QVBoxLayout(m_drawingGroup);

    m_pad = new DrawingPad(m_drawingGroup);
    m_pad->setMaximumSize(400, 400);
    auto* padLine = new QHBoxLayout;
    padLine->addStretch(1);
    padLine->addWidget(m_pad, 100);
    padLine->addStretch(1);
    v->addLayout(padLine);

    m_preview = new QLabel(m_drawingGroup);
    m_preview->setFixedSize(kPreviewSide + 2, kPreviewSide + 2);
    m_preview->setAlignment(Qt::AlignCenter);
    m_preview->setFrameShape(QFrame::Box);
    m_preview->setForegroundRole(QPalette::Mid);
    m_preview->setToolTip(tr("What the model receives: the drawing cropped, scaled and centred as in MNIST"));
    auto* previewCaption = new QLabel(tr("Model input"), m_drawingGroup);
    previewCaption->setForegroundRole(QPalette::PlaceholderText);
    previewCaption->setAlignment(Qt::AlignHCenter);
    auto* previewColumn = new QVBoxLayout;
    previewColumn->setSpacing(2);
    previewColumn->addWidget(m_preview);
    previewColumn->addWidget(previewCaption);
    previewColumn->addStretch(1);

    auto* clear = new QPushButton(tr("Clear"), m_drawingGroup);
    clear->setToolTip(tr("Erase the whole drawing"));
    m_penSlider = new QSlider(Qt::Horizontal, m_drawingGroup);
    m_penSlider->setRange(6, 48);
    m_penSlider->setValue(m_pad->penWidth());
    m_penSlider->setToolTip(tr("Pen width"));
    auto* penLine = new QHBoxLayout;
    penLine->addWidget(new QLabel(tr("Pen"), m_drawingGroup));
    penLine->addWidget(m_penSlider, 1);
    m_runOnRelease = new QCheckBox(tr("Run on release"), m_drawingGroup);
    m_runOnRelease->setChecked(true);
    m_runOnRelease->setToolTip(tr("Run the model each time a stroke ends"));
    auto* controls = new QVBoxLayout;
    controls->addWidget(clear);
    controls->addLayout(penLine);
    controls->addStretch(1);

    auto* bottom = new QHBoxLayout;
    bottom->addLayout(previewColumn);
    bottom->addSpacing(6);
    bottom->addLayout(controls, 1);
    v->addLayout(bottom);
    v->addWidget(m_runOnRelease);

    connect(clear, &QPushButton::clicked, m_pad, &DrawingPad::clear);
    connect(m_penSlider, &QSlider::valueChanged, m_pad, &DrawingPad::setPenWidth);
    connect(m_pad, &DrawingPad::canvasChanged, this, &InputPanel::updatePreview);
    connect(m_pad, &DrawingPad::drawingChanged, this, &InputPanel::drawingFinished);
    return m_drawingGroup;
}

void InputPanel::setSamples(const QStringList& names, const QStringList& descriptions)
{
    const QString current = currentSample();
    m_sampleCombo->clear();
    for (qsizetype i = 0; i < names.size(); ++i) {
        m_sampleCombo->addItem(names[i]);
        if (i < descriptions.size()) m_sampleCombo->setItemData(int(i), descriptions[i], Qt::ToolTipRole);
    }
    setCurrentSample(current);
}

void InputPanel::setCurrentSample(const QString& name)
{
    const int index = name.isEmpty() ? -1 : m_sampleCombo->findText(name);
    m_sampleCombo->setCurrentIndex(index);
    const QString tip = index >= 0 ? m_sampleCombo->itemData(index, Qt::ToolTipRole).toString() : QString();
    m_sampleCombo->setToolTip(tip.isEmpty() ? tr("Load a built-in sample model") : tip);
}

QString InputPanel::currentSample() const
{
    return m_sampleCombo->currentIndex() >= 0 ? m_sampleCombo->currentText() : QString();
}

void InputPanel::setModelInfo(const QString& title, const QString& details)
{
    m_modelTitle->setText(title);
    m_modelTitle->setToolTip(title);
    m_modelTitle->setVisible(!title.isEmpty());
    m_modelDetails->setText(details);
    m_modelDetails->setVisible(!details.isEmpty());
    m_noInputs->setText(title.isEmpty() ? tr("No model loaded.") : tr("The model has no inputs."));
}

void InputPanel::setInputs(const std::vector<InputSpec>& inputs)
{
    // Rows may be the sender of the signal that led here: detach them now, delete them later. Hiding
    // a row may end an edit in it; that edit belongs to the old model and reports nothing.
    for (InputRow* row : m_rows)
        disconnect(row, nullptr, this, nullptr);
    for (QLayoutItem* item = nullptr; m_rowsLayout->count() > 1;) {
        item = m_rowsLayout->takeAt(1);
        if (QWidget* w = item->widget()) {
            w->hide();
            w->setParent(nullptr);
            w->deleteLater();
        }
        delete item;
    }
    m_rows.clear();
    m_specs = inputs;
    for (size_t i = 0; i < m_specs.size(); ++i) {
        if (i > 0) {
            auto* line = new QFrame(m_inputsGroup);
            line->setFrameShape(QFrame::HLine);
            line->setFrameShadow(QFrame::Sunken);
            m_rowsLayout->addWidget(line);
        }
        auto* row = new InputRow(m_specs[i], m_inputsGroup);
        m_rowsLayout->addWidget(row);
        m_rows.push_back(row);
        connect(row, &InputRow::sourceChanged, this, [this, row] { rowEdited(row); });
        connect(row, &InputRow::shapeEdited, this, [this, row](bool changed) { rowShapeEdited(row, changed); });
    }
    m_noInputs->setText(m_modelTitle->text().isEmpty() ? tr("No model loaded.") : tr("The model has no inputs."));
    m_noInputs->setVisible(m_specs.empty());
    updateDrawingGroup();
    refreshStatus();
}

void InputPanel::setInputsElsewhere(const QString& text)
{
    setInputs({});
    m_noInputs->setWordWrap(true);
    m_noInputs->setText(text);
}

std::vector<InputSource> InputPanel::sources() const
{
    std::vector<InputSource> out;
    out.reserve(m_rows.size());
    for (const InputRow* row : m_rows)
        out.push_back(row->source());
    return out;
}

std::vector<Shape> InputPanel::shapes() const
{
    std::vector<Shape> out;
    out.reserve(m_rows.size());
    for (const InputRow* row : m_rows)
        out.push_back(row->shape());
    return out;
}

void InputPanel::setShapes(const std::vector<Shape>& shapes)
{
    for (size_t i = 0; i < std::min(shapes.size(), m_rows.size()); ++i)
        m_rows[i]->setShape(shapes[i]);
    updateDrawingGroup();
    refreshStatus();
}

void InputPanel::setSources(const std::vector<InputSource>& sources)
{
    for (size_t i = 0; i < std::min(sources.size(), m_rows.size()); ++i)
        m_rows[i]->setSource(sources[i]);
    updateDrawingGroup();
    refreshStatus();
}

void InputPanel::setSource(int index, const InputSource& source)
{
    if (index < 0 || size_t(index) >= m_rows.size()) return;
    m_rows[size_t(index)]->setSource(source);
    updateDrawingGroup();
    updateStatus(m_rows[size_t(index)]);
}

InputPanel::Built InputPanel::buildInputs() const
{
    Built built;
    built.tensors.reserve(m_rows.size());
    for (const InputRow* row : m_rows) {
        const InputSpec& spec = row->spec();
        if (row->source().kind == Kind::Default && !spec.defaultElsewhere.isEmpty()) {
            built.tensors.emplace_back(); // the engine's own
            continue;
        }
        QString shapeError;
        const Shape shape = row->currentShape(&shapeError);
        InputResult r = shapeError.isEmpty()
            ? tensorFor(row, shape, true)
            : InputResult { Tensor(), tr("input '%1': %2").arg(spec.name, shapeError) };
        if (!r.ok()) {
            built.tensors.clear();
            built.error = r.error.isEmpty() ? tr("input '%1': no value").arg(spec.name) : r.error;
            built.problem = r.problem == InputProblem::None ? InputProblem::NoValue : r.problem;
            return built;
        }
        built.tensors.push_back(r.tensor);
    }
    return built;
}

QString InputPanel::statusText(int index) const
{
    return index >= 0 && size_t(index) < m_rows.size() ? m_rows[size_t(index)]->statusText() : QString();
}

bool InputPanel::statusIsError(int index) const
{
    return index >= 0 && size_t(index) < m_rows.size() && m_rows[size_t(index)]->hasError();
}

void InputPanel::refreshStatus()
{
    m_statusTimer->stop();
    for (InputRow* row : m_rows)
        updateStatus(row);
}

bool InputPanel::runOnRelease() const
{
    return m_runOnRelease->isChecked();
}

void InputPanel::setRunOnRelease(bool on)
{
    m_runOnRelease->setChecked(on);
}

void InputPanel::setBusy(bool busy)
{
    m_busy = busy;
    m_modelGroup->setEnabled(!busy);
    m_inputsGroup->setEnabled(!busy);
    if (busy || !m_runPending) return;
    m_runPending = false;
    // Queued: the caller is usually in the middle of handling the end of the previous run.
    QTimer::singleShot(0, this, [this] {
        if (!m_busy && usesDrawing() && !m_pad->isEmpty()) emit runRequested();
    });
}

void InputPanel::rowEdited(InputRow* row)
{
    const bool wasShown = m_drawingGroup->isVisibleTo(this);
    updateDrawingGroup();
    if (!wasShown && m_drawingGroup->isVisibleTo(this))
        QTimer::singleShot(0, this, [this] { m_scroll->ensureWidgetVisible(m_drawingGroup); });
    scheduleStatus();
    emit sourcesChanged();
}

void InputPanel::rowShapeEdited(InputRow* row, bool changed)
{
    const bool wasShown = m_drawingGroup->isVisibleTo(this);
    updateDrawingGroup();
    if (!wasShown && m_drawingGroup->isVisibleTo(this))
        QTimer::singleShot(0, this, [this] { m_scroll->ensureWidgetVisible(m_drawingGroup); });
    scheduleStatus();
    if (changed) emit shapesChanged();
}

// The tensor of `row` for `shape`; `named` errors name the input.
InputResult InputPanel::tensorFor(const InputRow* row, const Shape& shape, bool named) const
{
    const InputSpec& spec = row->spec();
    const InputSource source = row->source();
    const QString prefix = named ? tr("input '%1': ").arg(spec.name) : QString();
    if (!shape.known() && needsShape(source.kind)) {
        const QString example
            = shape.ndim() == 0 && !spec.shapeExample.isEmpty() ? spec.shapeExample : shapeExample(shape);
        const QString which = shape.ndim() == 0 ? tr("its shape") : tr("its shape %1").arg(shapeText(shape));
        const QString why = spec.shapeHint.isEmpty() ? QString() : tr(" (%1)").arg(spec.shapeHint);
        return { Tensor(),
            named ? prefix + tr("%1 is not known; give it in the inputs panel, e.g. %2%3").arg(which, example, why)
                  : tr("Give this input's shape, e.g. %1%2").arg(example, why),
            InputProblem::NoValue };
    }
    // The default value is one tensor: a shape it does not fit needs another source.
    if (source.kind == Kind::Default && spec.defaultTensor.defined() && shape != spec.shape
        && !fitsShape(spec.defaultTensor.shape(), shape))
        return { Tensor(),
            prefix
                + tr("the model's default value has shape %1, not %2; choose another source or reset the shape")
                      .arg(shapeText(spec.defaultTensor.shape()), shapeText(shape)),
            InputProblem::WrongShape };
    InputResult r
        = makeInputTensor(source, shape, spec.defaultTensor, drawingTensorFor(shape), named ? spec.name : QString(), spec.dtype);
    if (r.tensor.defined() && r.tensor.dtype() != spec.dtype) r.tensor = r.tensor.astype(spec.dtype);
    return r;
}

void InputPanel::drawingFinished()
{
    for (InputRow* row : m_rows)
        if (row->source().kind == Kind::Drawing) updateStatus(row);
    if (!m_runOnRelease->isChecked() || !usesDrawing() || m_pad->isEmpty()) return;
    if (m_busy)
        m_runPending = true;
    else
        emit runRequested();
}

void InputPanel::updateDrawingGroup()
{
    m_drawingGroup->setVisible(usesDrawing());
    for (const InputRow* row : m_rows)
        if (row->source().kind == Kind::Drawing) {
            m_pad->setPreviewShape(row->shape());
            break;
        }
}

void InputPanel::updatePreview()
{
    const QImage image = m_pad->preview();
    const int factor = std::max(1, kPreviewSide / std::max(image.width(), image.height()));
    m_preview->setPixmap(QPixmap::fromImage(
        image.scaled(image.width() * factor, image.height() * factor, Qt::IgnoreAspectRatio, Qt::FastTransformation)));
    m_preview->setToolTip(tr("What the model receives (%1×%2): the drawing cropped, scaled and centred as in MNIST")
                              .arg(image.height())
                              .arg(image.width()));
}

void InputPanel::scheduleStatus()
{
    m_statusTimer->start();
}

void InputPanel::updateStatus(InputRow* row) const
{
    if (!row->shapeError().isEmpty()) {
        row->setStatus(row->shapeError(), true);
        return;
    }
    const Shape shape = row->shape();
    const InputSource source = row->source();
    if (source.kind == Kind::Default && !row->spec().defaultElsewhere.isEmpty()) {
        row->setStatus(row->spec().defaultElsewhere, false);
        return;
    }
    const InputResult r = tensorFor(row, shape, false);
    if (!r.ok()) {
        row->setStatus(r.error.isEmpty() ? tr("no value") : r.error, true);
        return;
    }
    QStringList parts { source.describe(shape) };
    if (source.kind == Kind::Drawing && m_pad->isEmpty()) {
        parts << tr("empty: draw a digit below");
    } else {
        if (source.kind == Kind::NpyFile || !shape.known()) parts << shapeText(r.tensor.shape());
        if (const QString range = valueRange(r.tensor); !range.isEmpty()) parts << range;
    }
    if (const std::optional<Kind> waiting = row->waitingKind())
        parts << tr("%1 does not fit shape %2").arg(kindLabel(*waiting), shapeText(shape));
    row->setStatus(parts.join(QStringLiteral(" · ")), false);
}

Tensor InputPanel::drawingTensorFor(const Shape& shape) const
{
    return drawingFits(shape) ? m_pad->toTensor(shape) : Tensor();
}

bool InputPanel::usesDrawing() const
{
    return std::any_of(
        m_rows.begin(), m_rows.end(), [](const InputRow* r) { return r->source().kind == Kind::Drawing; });
}

void InputPanel::dragEnterEvent(QDragEnterEvent* event)
{
    // Drops on a row go to that row; elsewhere on the panel only a single-input model is unambiguous.
    const QString path = singleLocalFile(event->mimeData());
    if (m_busy || m_rows.size() != 1 || path.isEmpty() || !InputRow::acceptsFile(path)) return;
    if (isImageFileName(path) && !m_rows.front()->offers(Kind::ImageFile)) return;
    event->acceptProposedAction();
}

void InputPanel::dropEvent(QDropEvent* event)
{
    const QString path = singleLocalFile(event->mimeData());
    if (m_rows.size() != 1 || path.isEmpty()) return;
    m_rows.front()->useFile(path);
    event->acceptProposedAction();
}

} // namespace opscope::gui
