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
    adoptFileShape(); // a .npy file gives an input of unknown shape its shape (emits shapeEdited)
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
    m_shapeEdit->setPlaceholderText(m_spec.shape.ndim() == 0
            ? tr("e.g. %1").arg(m_spec.shapeExample.isEmpty() ? QStringLiteral("1x1x28x28") : m_spec.shapeExample)
            : shapeEditText(m_spec.shape));

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
