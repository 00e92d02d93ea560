// InputRow's widgets and their connections (the row's behaviour is in input_row.cpp).

#include "gui/inputs/input_row.h"

#include <limits>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QRandomGenerator>
#include <QSpinBox>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {

using Kind = InputSource::Kind;

// A typed shape applies after this pause in typing, or at once on Enter or leaving the field.
constexpr int kShapeDelayMs = 500;

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

} // namespace

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

} // namespace opscope::gui
