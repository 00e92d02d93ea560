#include "gui/inputs/input_row.h"

#include <limits>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QImageReader>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QPainter>
#include <QRandomGenerator>
#include <QSpinBox>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {

using Kind = InputSource::Kind;

constexpr Kind kAllKinds[] = { Kind::Default, Kind::Ones, Kind::Zeros, Kind::Uniform, Kind::Normal, Kind::NpyFile,
    Kind::ImageFile, Kind::Drawing };

// A typed shape applies after this pause in typing, or at once on Enter or leaving the field.
constexpr int kShapeDelayMs = 500;

const QColor kErrorColor(0xd3, 0x2f, 0x2f);

// Unknown (0) dimensions of `want` match any size.
bool fitsShape(const opscope::Shape& have, const opscope::Shape& want)
{
    if (have.ndim() != want.ndim()) return false;
    for (int i = 0; i < want.ndim(); ++i)
        if (want[i] > 0 && have[i] != want[i]) return false;
    return true;
}

// Shared by every row, so Browse… opens where the last file was found.
QString& lastDirectory()
{
    static QString dir = QDir::homePath();
    return dir;
}

QString kindToolTip(Kind kind)
{
    switch (kind) {
    case Kind::Default:
        return QStringLiteral("The value the model comes with");
    case Kind::Ones:
        return QStringLiteral("Every value 1");
    case Kind::Zeros:
        return QStringLiteral("Every value 0");
    case Kind::Uniform:
        return QStringLiteral("Uniform random values in [low, high) from a seed");
    case Kind::Normal:
        return QStringLiteral("Normal random values from a seed");
    case Kind::NpyFile:
        return QStringLiteral("A NumPy array of the input's shape");
    case Kind::ImageFile:
        return QStringLiteral("A picture, resized to the input's height and width");
    case Kind::Drawing:
        return QStringLiteral("A digit drawn with the mouse, preprocessed like MNIST");
    }
    return QString();
}

QDoubleSpinBox* makeSpin(double lo, double hi, int decimals, QWidget* parent)
{
    auto* spin = new QDoubleSpinBox(parent);
    spin->setRange(lo, hi);
    spin->setDecimals(decimals);
    spin->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    spin->setKeyboardTracking(false);
    spin->setAccelerated(true);
    return spin;
}

QWidget* hbox(QWidget* parent, std::initializer_list<QWidget*> widgets, bool stretch = false)
{
    auto* w = new QWidget(parent);
    auto* l = new QHBoxLayout(w);
    l->setContentsMargins(0, 0, 0, 0);
    for (QWidget* child : widgets)
        l->addWidget(child);
    if (stretch) l->addStretch(1);
    return w;
}

bool isNpyFileName(const QString& path)
{
    return QFileInfo(path).suffix().compare(QLatin1String("npy"), Qt::CaseInsensitive) == 0;
}

QString imageFilter()
{
    QStringList patterns;
    for (const QByteArray& f : QImageReader::supportedImageFormats())
        patterns << QStringLiteral("*.") + QString::fromLatin1(f);
    return QStringLiteral("Images (%1);;All files (*)").arg(patterns.join(QLatin1Char(' ')));
}

} // namespace

InputRow::InputRow(const InputSpec& spec, QWidget* parent)
    : QFrame(parent)
    , m_spec(spec)
    , m_shape(spec.shape)
{
    setAcceptDrops(true);
    m_source.kind = initialKind();
    const ImageLayout l = imageLayout(m_shape);
    if (l.valid && l.c == 3) m_source.grayscale = false;
    buildUi();
    showShape();
    showSource();
}

bool InputRow::offers(Kind kind) const
{
    switch (kind) {
    case Kind::Default:
        // The default value is one tensor: it serves the model's shape and shapes it fits.
        return m_spec.hasDefault
            && (m_shape == m_spec.shape
                || (m_spec.defaultTensor.defined() && fitsShape(m_spec.defaultTensor.shape(), m_shape)));
    case Kind::ImageFile:
        return imageLayout(m_shape).valid;
    case Kind::Drawing:
        return drawingFits(m_shape);
    default:
        return true;
    }
}

Kind InputRow::initialKind() const
{
    return offers(Kind::Default) ? Kind::Default : Kind::Ones;
}

void InputRow::buildUi()
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    outer->setSpacing(4);

    auto* name = new QLabel(m_spec.name.toHtmlEscaped(), this);
    QFont bold = name->font();
    bold.setBold(true);
    name->setFont(bold);
    name->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_shapeEdit = new QLineEdit(this);
    m_shapeEdit->setObjectName(QStringLiteral("shapeEdit"));
    m_shapeEdit->setMaxLength(80);
    m_shapeEdit->setFixedWidth(m_shapeEdit->fontMetrics().horizontalAdvance(QStringLiteral("e.g. 1x1x28x28")) + 16);
    m_resetShape = new QToolButton(this);
    m_resetShape->setObjectName(QStringLiteral("resetShape"));
    m_resetShape->setText(tr("Reset"));
    m_resetShape->setAutoRaise(true);
    m_resetShape->setToolTip(tr("Back to the model's shape %1").arg(shapeEditText(m_spec.shape)));
    m_shapeTimer = new QTimer(this);
    m_shapeTimer->setSingleShot(true);
    m_shapeTimer->setInterval(kShapeDelayMs);
    auto* header = new QHBoxLayout;
    header->setSpacing(2);
    header->addWidget(name);
    header->addStretch(1);
    header->addWidget(m_shapeEdit);
    header->addWidget(m_resetShape);
    outer->addLayout(header);

    m_form = new QFormLayout;
    m_form->setContentsMargins(0, 0, 0, 0);
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_form->setLabelAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    outer->addLayout(m_form);

    m_kindCombo = new QComboBox(this);
    rebuildKinds();
    m_form->addRow(tr("Source"), m_kindCombo);

    m_lo = makeSpin(-1e6, 1e6, 3, this);
    m_hi = makeSpin(-1e6, 1e6, 3, this);
    m_rangeRow = hbox(this, { m_lo, new QLabel(tr("to"), this), m_hi });
    m_form->addRow(tr("Range"), m_rangeRow);

    m_mean = makeSpin(-1e6, 1e6, 3, this);
    m_std = makeSpin(0, 1e6, 3, this);
    m_gaussRow = hbox(this, { m_mean, new QLabel(tr("std"), this), m_std });
    m_form->addRow(tr("Mean"), m_gaussRow);

    m_seed = new QSpinBox(this);
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setKeyboardTracking(false);
    auto* reseed = new QToolButton(this);
    reseed->setText(tr("New"));
    reseed->setToolTip(tr("Draw a new random seed"));
    m_seedRow = hbox(this, { m_seed, reseed });
    m_form->addRow(tr("Seed"), m_seedRow);

    m_file = new QLineEdit(this);
    m_file->setPlaceholderText(tr("Drop a file here or browse"));
    m_file->setClearButtonEnabled(true);
    auto* browse = new QToolButton(this);
    browse->setText(tr("Browse…"));
    m_fileRow = hbox(this, { m_file, browse });
    m_form->addRow(tr("File"), m_fileRow);

    m_channels = new QComboBox(this);
    m_channels->addItem(tr("Grayscale (1 channel)"));
    m_channels->addItem(tr("RGB (3 channels)"));
    m_form->addRow(tr("Channels"), m_channels);

    m_invert = new QCheckBox(tr("Invert"), this);
    m_invert->setToolTip(tr("1 − x: a dark digit on white paper becomes a light digit on black, as in MNIST"));
    m_normalize = new QCheckBox(tr("Normalize"), this);
    m_normalize->setToolTip(tr("(x − mean) / std per channel, after scaling to [0, 1]"));
    m_imageOptions = hbox(this, { m_invert, m_normalize }, true);
    m_form->addRow(QString(), m_imageOptions);

    m_presets = new QToolButton(this);
    m_presets->setText(tr("Presets"));
    m_presets->setPopupMode(QToolButton::InstantPopup);
    auto* menu = new QMenu(m_presets);
    menu->addAction(tr("ImageNet"), this, [this] { applyPreset3({ 0.485, 0.456, 0.406 }, { 0.229, 0.224, 0.225 }); });
    menu->addAction(tr("MNIST (0.1307, 0.3081)"), this, [this] { applyPreset(0.1307, 0.3081); });
    menu->addAction(tr("To [−1, 1] (0.5, 0.5)"), this, [this] { applyPreset(0.5, 0.5); });
    m_presets->setMenu(menu);
    for (size_t c = 0; c < 3; ++c) {
        m_imgMean[c] = makeSpin(-100, 100, 4, this);
        m_imgStd[c] = makeSpin(0.0001, 100, 4, this);
        // Three spins share a narrow dock: the text needs the room more than the arrows.
        m_imgMean[c]->setButtonSymbols(QAbstractSpinBox::NoButtons);
        m_imgStd[c]->setButtonSymbols(QAbstractSpinBox::NoButtons);
    }
    m_imgMeanRow = hbox(this, { m_imgMean[0], m_imgMean[1], m_imgMean[2], m_presets });
    m_imgStdRow = hbox(this, { m_imgStd[0], m_imgStd[1], m_imgStd[2], new QWidget(this) });
    // Keeps the std spins aligned under the mean spins.
    m_imgStdRow->layout()->itemAt(3)->widget()->setFixedWidth(m_presets->sizeHint().width());
    m_form->addRow(tr("Mean"), m_imgMeanRow);
    m_form->addRow(tr("Std"), m_imgStdRow);

    m_statusIcon = new QLabel(this);
    const int iconSize = style()->pixelMetric(QStyle::PM_SmallIconSize);
    m_statusIcon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(iconSize, iconSize));
    m_statusIcon->setAlignment(Qt::AlignTop);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto* statusLine = new QHBoxLayout;
    statusLine->setSpacing(4);
    statusLine->addWidget(m_statusIcon, 0, Qt::AlignTop);
    statusLine->addWidget(m_status, 1);
    outer->addLayout(statusLine);

    // Field edits write into m_source; programmatic updates (showSource) are ignored.
    auto guarded = [this](auto apply) {
        return [this, apply](auto value) {
            if (m_updating) return;
            apply(value);
            edited();
        };
    };
    connect(m_shapeEdit, &QLineEdit::textEdited, m_shapeTimer, qOverload<>(&QTimer::start));
    connect(m_shapeTimer, &QTimer::timeout, this, [this] { applyShapeText(false); });
    connect(m_shapeEdit, &QLineEdit::editingFinished, this, [this] { applyShapeText(true); });
    connect(m_resetShape, &QToolButton::clicked, this, &InputRow::resetShape);
    connect(m_kindCombo, &QComboBox::currentIndexChanged, this, guarded([this](int index) {
        const auto kind = Kind(m_kindCombo->itemData(index).toInt());
        m_waitingKind.reset();
        if (kind == Kind::NpyFile && !isNpyFileName(m_source.file)) m_source.file.clear();
        if (kind == Kind::ImageFile && !isImageFileName(m_source.file)) m_source.file.clear();
        if (kind == Kind::ImageFile && m_source.kind != Kind::ImageFile) {
            const ImageLayout l = imageLayout(m_shape);
            if (l.c == 1 || l.c == 3) m_source.grayscale = l.c == 1;
        }
        m_source.kind = kind;
        showSource();
    }));
    connect(m_lo, &QDoubleSpinBox::valueChanged, this, guarded([this](double v) { m_source.lo = v; }));
    connect(m_hi, &QDoubleSpinBox::valueChanged, this, guarded([this](double v) { m_source.hi = v; }));
    connect(m_mean, &QDoubleSpinBox::valueChanged, this, guarded([this](double v) { m_source.mean = v; }));
    connect(m_std, &QDoubleSpinBox::valueChanged, this, guarded([this](double v) { m_source.std = v; }));
    connect(m_seed, &QSpinBox::valueChanged, this, guarded([this](int v) { m_source.seed = uint64_t(v); }));
    connect(reseed, &QToolButton::clicked, this,
        [this] { m_seed->setValue(int(QRandomGenerator::global()->bounded(100000))); });
    connect(m_file, &QLineEdit::editingFinished, this, [this] {
        const QString path = m_file->text().trimmed();
        if (m_updating || path == m_source.file) return;
        m_source.file = path;
        adoptFileShape();
        edited();
    });
    connect(browse, &QToolButton::clicked, this, &InputRow::browse);
    connect(m_channels, &QComboBox::currentIndexChanged, this, guarded([this](int index) {
        m_source.grayscale = index == 0;
        updateVisibility();
    }));
    connect(m_invert, &QCheckBox::toggled, this, guarded([this](bool on) { m_source.invert = on; }));
    connect(m_normalize, &QCheckBox::toggled, this, guarded([this](bool on) { m_source.normalize = on; }));
    for (size_t c = 0; c < 3; ++c) {
        connect(m_imgMean[c], &QDoubleSpinBox::valueChanged, this,
            guarded([this, c](double v) { m_source.imgMean[c] = v; }));
        connect(
            m_imgStd[c], &QDoubleSpinBox::valueChanged, this, guarded([this, c](double v) { m_source.imgStd[c] = v; }));
    }
}

void InputRow::setSource(const InputSource& source)
{
    m_source = source;
    m_waitingKind.reset();
    if (!offers(m_source.kind)) {
        const Kind k = m_source.kind;
        // Only kinds that a shape can make available are worth waiting for.
        if (k == Kind::ImageFile || k == Kind::Drawing || (k == Kind::Default && m_spec.hasDefault)) m_waitingKind = k;
        m_source.kind = initialKind();
    }
    showSource();
}

void InputRow::rebuildKinds()
{
    QList<int> offered;
    for (Kind k : kAllKinds)
        if (offers(k)) offered << int(k);
    QList<int> shown;
    for (int i = 0; i < m_kindCombo->count(); ++i)
        shown << m_kindCombo->itemData(i).toInt();
    if (offered == shown) return;
    const bool wasUpdating = m_updating;
    m_updating = true;
    m_kindCombo->clear();
    for (int k : offered) {
        m_kindCombo->addItem(kindLabel(Kind(k)), k);
        m_kindCombo->setItemData(m_kindCombo->count() - 1, kindToolTip(Kind(k)), Qt::ToolTipRole);
    }
    m_updating = wasUpdating;
}

// Makes `shape` the current shape and fits the source to it: the image channels follow the shape, a
// kind the shape no longer offers waits (initialKind() meanwhile), a waiting kind it offers returns.
// True when the source changed.
bool InputRow::applyShape(const opscope::Shape& shape)
{
    const InputSource before = m_source;
    m_shape = shape;
    const ImageLayout l = imageLayout(m_shape);
    if (l.valid && (l.c == 1 || l.c == 3)) m_source.grayscale = l.c == 1;
    if (m_waitingKind && offers(*m_waitingKind)) {
        m_source.kind = *m_waitingKind;
        m_waitingKind.reset();
    } else if (!offers(m_source.kind)) {
        if (!m_waitingKind) m_waitingKind = m_source.kind;
        m_source.kind = initialKind();
    }
    rebuildKinds();
    showSource();
    return !(m_source == before);
}

void InputRow::setShape(const opscope::Shape& shape)
{
    m_shapeTimer->stop();
    m_shapeError.clear();
    m_shapeFromFile = false;
    applyShape(shape.known() ? shape : m_spec.shape);
    showShape();
}

void InputRow::resetShape()
{
    m_shapeTimer->stop();
    m_shapeError.clear();
    m_shapeFromFile = false;
    const bool changed = m_shape != m_spec.shape;
    const bool sourceChanged = changed && applyShape(m_spec.shape);
    showShape();
    emit shapeEdited(changed);
    if (sourceChanged) edited();
}

opscope::Shape InputRow::currentShape(QString* error) const
{
    const QString text = m_shapeEdit->text().trimmed();
    if (text != m_shownShapeText) {
        if (text.isEmpty()) return m_spec.shape;
        if (const std::optional<opscope::Shape> typed = parseShapeText(text, error)) return *typed;
        return m_shape;
    }
    if (error && !m_shapeError.isEmpty()) *error = m_shapeError;
    return m_shape;
}

// Applies the text of the shape editor; `normalize` also rewrites a shape that parses in the x form.
void InputRow::applyShapeText(bool normalize)
{
    m_shapeTimer->stop();
    const QString text = m_shapeEdit->text().trimmed();
    if (text != m_shownShapeText) {
        m_shownShapeText = text;
        opscope::Shape shape = m_spec.shape; // an emptied field means the model's shape
        if (!text.isEmpty()) {
            QString error;
            const std::optional<opscope::Shape> typed = parseShapeText(text, &error);
            if (!typed) {
                m_shapeError = error;
                showShape();
                emit shapeEdited(false);
                return;
            }
            shape = *typed;
        }
        m_shapeError.clear();
        m_shapeFromFile = false;
        const bool changed = shape != m_shape;
        const bool sourceChanged = changed && applyShape(shape);
        showShape(false);
        emit shapeEdited(changed);
        if (sourceChanged) edited();
    }
    if (normalize && m_shapeError.isEmpty()) showShape();
}

// A .npy file chosen for an input whose shape is not known gives it its shape (also replacing the
// shape an earlier file gave). True when the shape changed.
bool InputRow::adoptFileShape()
{
    if (m_source.kind != Kind::NpyFile || !isNpyFileName(m_source.file)) return false;
    if (m_shape.known() && !m_shapeFromFile) return false;
    const std::optional<opscope::Shape> fileShape = readNpyShape(m_source.file);
    if (!fileShape || !fileShape->known() || *fileShape == m_shape) return false;
    if (m_spec.shape.ndim() > 0 && !fitsShape(*fileShape, m_spec.shape)) return false;
    m_shapeTimer->stop();
    m_shapeError.clear();
    m_shapeFromFile = true;
    applyShape(*fileShape);
    showShape();
    emit shapeEdited(true);
    return true;
}

// Shows shape() in the editor (with `rewrite`, unless the editor holds text that did not parse), its
// colour, tool tip and the reset button.
void InputRow::showShape(bool rewrite)
{
    const bool error = !m_shapeError.isEmpty();
    if (rewrite && !error) {
        const QString text = shapeEditText(m_shape);
        if (m_shapeEdit->text() != text) m_shapeEdit->setText(text);
        m_shownShapeText = text;
    }
    QPalette pal = m_shapeEdit->palette();
    pal.setColor(QPalette::Text, error ? kErrorColor : palette().color(QPalette::Text));
    m_shapeEdit->setPalette(pal);
    m_shapeEdit->setPlaceholderText(m_spec.shape.ndim() == 0 ? tr("e.g. 1x1x28x28") : shapeEditText(m_spec.shape));

    QStringList tip { tr("Shape of input '%1', like 1x1x28x28 or (1, 1, 28, 28)").arg(m_spec.name) };
    if (m_spec.shape.ndim() == 0)
        tip << tr("The model does not record this shape.");
    else if (!m_spec.shape.known())
        tip << tr("The model's shape is %1 (? is not known).").arg(shapeText(m_spec.shape));
    else
        tip << tr("The model's shape is %1.").arg(shapeText(m_spec.shape));
    if (m_shapeFromFile) tip << tr("This shape comes from the .npy file.");
    if (error) tip << m_shapeError;
    m_shapeEdit->setToolTip(tip.join(QLatin1Char('\n')));
    m_resetShape->setVisible(m_spec.shape.known() && (error || m_shape != m_spec.shape));
}

void InputRow::showSource()
{
    m_updating = true;
    m_kindCombo->setCurrentIndex(m_kindCombo->findData(int(m_source.kind)));
    m_lo->setValue(m_source.lo);
    m_hi->setValue(m_source.hi);
    m_mean->setValue(m_source.mean);
    m_std->setValue(m_source.std);
    m_seed->setValue(int(std::min<uint64_t>(m_source.seed, uint64_t(std::numeric_limits<int>::max()))));
    m_file->setText(m_source.file);
    m_file->setToolTip(QDir::toNativeSeparators(m_source.file));
    m_channels->setCurrentIndex(m_source.grayscale ? 0 : 1);
    m_invert->setChecked(m_source.invert);
    m_normalize->setChecked(m_source.normalize);
    for (size_t c = 0; c < 3; ++c) {
        m_imgMean[c]->setValue(m_source.imgMean[c]);
        m_imgStd[c]->setValue(m_source.imgStd[c]);
    }
    m_updating = false;
    updateVisibility();
}

void InputRow::updateVisibility()
{
    const Kind k = m_source.kind;
    const bool image = k == Kind::ImageFile;
    m_form->setRowVisible(m_rangeRow, k == Kind::Uniform);
    m_form->setRowVisible(m_gaussRow, k == Kind::Normal);
    m_form->setRowVisible(m_seedRow, k == Kind::Uniform || k == Kind::Normal);
    m_form->setRowVisible(m_fileRow, k == Kind::NpyFile || image);
    m_form->setRowVisible(m_channels, image);
    m_form->setRowVisible(m_imageOptions, image);
    m_form->setRowVisible(m_imgMeanRow, image && m_source.normalize);
    m_form->setRowVisible(m_imgStdRow, image && m_source.normalize);
    for (size_t c = 1; c < 3; ++c) {
        m_imgMean[c]->setVisible(!m_source.grayscale);
        m_imgStd[c]->setVisible(!m_source.grayscale);
    }
    const QString what = k == Kind::NpyFile ? tr("a .npy file") : tr("an image");
    m_file->setPlaceholderText(tr("Drop %1 here or browse").arg(what));
}

void InputRow::edited()
{
    updateVisibility();
    emit sourceChanged();
}

void InputRow::browse()
{
    const bool npy = m_source.kind == Kind::NpyFile;
    const QString dir = m_source.file.isEmpty() ? lastDirectory() : QFileInfo(m_source.file).absolutePath();
    const QString title = npy ? tr("Choose a .npy file for input '%1'").arg(m_spec.name)
                              : tr("Choose an image for input '%1'").arg(m_spec.name);
    const QString filter = npy ? tr("NumPy arrays (*.npy);;All files (*)") : imageFilter();
    const QString path = QFileDialog::getOpenFileName(this, title, dir, filter);
    if (path.isEmpty()) return;
    lastDirectory() = QFileInfo(path).absolutePath();
    m_source.file = path;
    adoptFileShape();
    showSource();
    edited();
}

void InputRow::applyPreset(double mean, double std)
{
    applyPreset3({ mean, mean, mean }, { std, std, std });
}

void InputRow::applyPreset3(const std::array<double, 3>& mean, const std::array<double, 3>& std)
{
    m_source.imgMean = mean;
    m_source.imgStd = std;
    showSource();
    edited();
}

void InputRow::setStatus(const QString& text, bool error)
{
    m_statusText = text;
    m_statusError = error;
    m_status->setText(text);
    m_status->setToolTip(text);
    QPalette pal = m_status->palette();
    pal.setColor(QPalette::WindowText, error ? kErrorColor : palette().color(QPalette::PlaceholderText));
    m_status->setPalette(pal);
    m_statusIcon->setVisible(error);
}

bool InputRow::acceptsFile(const QString& path)
{
    return QFileInfo(path).isFile() && (isNpyFileName(path) || isImageFileName(path));
}

void InputRow::useFile(const QString& path)
{
    m_waitingKind.reset();
    if (isNpyFileName(path)) {
        m_source.kind = Kind::NpyFile;
    } else {
        if (m_source.kind != Kind::ImageFile) {
            const ImageLayout l = imageLayout(m_shape);
            if (l.c == 1 || l.c == 3) m_source.grayscale = l.c == 1;
        }
        m_source.kind = Kind::ImageFile;
    }
    m_source.file = path;
    lastDirectory() = QFileInfo(path).absolutePath();
    adoptFileShape();
    showSource();
    edited();
}

void InputRow::dragEnterEvent(QDragEnterEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!isEnabled() || urls.size() != 1 || !urls.first().isLocalFile()) return;
    const QString path = urls.first().toLocalFile();
    if (!acceptsFile(path) || (!isNpyFileName(path) && !offers(Kind::ImageFile))) return;
    event->acceptProposedAction();
    m_dropActive = true;
    update();
}

void InputRow::dragLeaveEvent(QDragLeaveEvent* event)
{
    m_dropActive = false;
    update();
    QFrame::dragLeaveEvent(event);
}

void InputRow::dropEvent(QDropEvent* event)
{
    m_dropActive = false;
    update();
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() != 1 || !urls.first().isLocalFile()) return;
    useFile(urls.first().toLocalFile());
    event->acceptProposedAction();
}

void InputRow::paintEvent(QPaintEvent* event)
{
    QFrame::paintEvent(event);
    if (!m_dropActive) return;
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    QColor fill = palette().color(QPalette::Highlight);
    fill.setAlpha(40);
    p.setBrush(fill);
    p.setPen(QPen(palette().color(QPalette::Highlight), 2, Qt::DashLine));
    p.drawRoundedRect(QRectF(rect()).adjusted(1, 1, -1, -1), 4, 4);
}

} // namespace opscope::gui
