#include "gui/compare/compare_dialog.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {
QWidget* withBrowse(QLineEdit* edit, const std::function<QString()>& browse)
{
    auto* w = new QWidget(edit->parentWidget());
    auto* row = new QHBoxLayout(w);
    row->setContentsMargins(0, 0, 0, 0);
    auto* button = new QToolButton(w);
    button->setText(QStringLiteral("…"));
    QObject::connect(button, &QToolButton::clicked, edit, [edit, browse] {
        const QString path = browse();
        if (!path.isEmpty()) edit->setText(path);
    });
    row->addWidget(edit, 1);
    row->addWidget(button);
    return w;
}

std::vector<PrecisionRule> rulesOf(int precision, const QString& targets)
{
    std::vector<PrecisionRule> rules;
    if (precision == 0) return rules;
    const Precision p = precision == 1 ? Precision::Float16 : Precision::BFloat16;
    for (const QString& t : targets.split(QLatin1Char(','), Qt::SkipEmptyParts))
        rules.push_back({ t.trimmed().toStdString(), p });
    return rules;
}
}

CompareDialog::CompareDialog(const CompareSpec& spec, const QStringList& operators, QWidget* parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Compare Two Runs"));
    auto* layout = new QVBoxLayout(this);
    m_intro = new QLabel(tr("Run A is the loaded model on the Model panel's inputs. Choose run B; both are "
                            "recorded and every tensor is compared, node by node."),
        this);
    m_intro->setWordWrap(true);
    layout->addWidget(m_intro);

    m_source = new QButtonGroup(this);
    const QString sources[3] = { tr("The same model, computed otherwise (kernels, precision, a checkpoint)"),
        tr("Another model file (nodes matched by name)"), tr("A saved run: a folder of .npy files or an .npz archive") };
    for (int i = 0; i < 3; ++i) {
        auto* radio = new QRadioButton(sources[i], this);
        m_source->addButton(radio, i);
        layout->addWidget(radio);
    }
    auto* form = new QFormLayout;
    m_model = new QLineEdit(spec.modelB, this);
    form->addRow(tr("Model B"), withBrowse(m_model, [this] {
        return QFileDialog::getOpenFileName(
            this, tr("Model B"), {}, tr("Models (*.onnx *-symbol.json *.json);;All files (*)"));
    }));
    m_saved = new QLineEdit(spec.savedB, this);
    form->addRow(tr("Saved run"), withBrowse(m_saved, [this] {
        const QString npz
            = QFileDialog::getOpenFileName(this, tr("Saved run (.npz), or cancel to pick a folder"), {}, tr("NumPy archives (*.npz)"));
        return npz.isEmpty() ? QFileDialog::getExistingDirectory(this, tr("Folder of .npy files")) : npz;
    }));
    m_params = new QLineEdit(spec.paramsB, this);
    m_params->setPlaceholderText(tr("the model's own parameters"));
    form->addRow(tr("Parameters of B"), withBrowse(m_params, [this] {
        return QFileDialog::getOpenFileName(this, tr("Parameters of B"), {}, tr("Parameters (*.params);;All files (*)"));
    }));
    m_kernels = new QComboBox(this);
    m_kernels->addItems({ tr("auto (oneDNN where it pays)"), tr("reference"), tr("oneDNN") });
    m_kernels->setCurrentIndex(spec.kernelsB == KernelKind::Reference ? 1 : spec.kernelsB == KernelKind::Dnnl ? 2 : 0);
    form->addRow(tr("Kernels of B"), m_kernels);
    m_mode = new QComboBox(this);
    m_mode->addItems({ tr("eager (op by op)"), tr("hybrid"), tr("static_alloc"), tr("static_shape") });
    m_mode->setCurrentIndex(static_cast<int>(spec.modeB));
    m_mode->setToolTip(tr("How B executes (A runs hybridized); a loaded model always runs its graph"));
    form->addRow(tr("Mode of B"), m_mode);
    m_inputs = new QLineEdit(spec.inputsB.join(QLatin1Char(' ')), this);
    m_inputs->setPlaceholderText(tr("A's inputs; or NAME=FILE.npy, NAME=SHAPE:uniform … (space-separated)"));
    form->addRow(tr("Inputs of B"), m_inputs);
    auto* precisionRow = new QWidget(this);
    auto* pr = new QHBoxLayout(precisionRow);
    pr->setContentsMargins(0, 0, 0, 0);
    m_precision = new QComboBox(precisionRow);
    m_precision->addItems({ tr("float32"), tr("float16 (emulated)"), tr("bfloat16 (emulated)") });
    m_targets = new QLineEdit(precisionRow);
    m_targets->setPlaceholderText(tr("all, an operator (Convolution) or node names, comma-separated"));
    QStringList targets;
    for (const PrecisionRule& r : spec.precisionB)
        targets << QString::fromStdString(r.target);
    m_targets->setText(targets.isEmpty() ? QStringLiteral("all") : targets.join(QStringLiteral(", ")));
    m_precision->setCurrentIndex(spec.precisionB.empty() ? 0 : spec.precisionB.front().precision == Precision::Float16 ? 1 : 2);
    m_targets->setToolTip(tr("Operators here: %1").arg(operators.join(QStringLiteral(", "))));
    pr->addWidget(m_precision);
    pr->addWidget(new QLabel(tr("on"), precisionRow));
    pr->addWidget(m_targets, 1);
    form->addRow(tr("Precision of B"), precisionRow);
    m_map = new QLineEdit(spec.mapFile, this);
    m_map->setPlaceholderText(tr("optional: a JSON object from B's names to A's"));
    form->addRow(tr("Name map"), withBrowse(m_map, [this] {
        return QFileDialog::getOpenFileName(this, tr("Name map"), {}, tr("JSON (*.json)"));
    }));
    auto* tolRow = new QWidget(this);
    auto* tr_ = new QHBoxLayout(tolRow);
    tr_->setContentsMargins(0, 0, 0, 0);
    m_rtol = new QDoubleSpinBox(tolRow);
    m_atol = new QDoubleSpinBox(tolRow);
    for (QDoubleSpinBox* s : { m_rtol, m_atol }) {
        s->setDecimals(8);
        s->setRange(0, 1e6);
        s->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    }
    m_rtol->setValue(spec.tol.rtol);
    m_atol->setValue(spec.tol.atol);
    tr_->addWidget(new QLabel(tr("rtol"), tolRow));
    tr_->addWidget(m_rtol);
    tr_->addWidget(new QLabel(tr("atol"), tolRow));
    tr_->addWidget(m_atol);
    form->addRow(tr("Tolerance"), tolRow);
    layout->addLayout(form);
    m_problem = new QLabel(this);
    m_problem->setStyleSheet(QStringLiteral("color: #c62828;"));
    layout->addWidget(m_problem);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Compare"));
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (problem().isEmpty()) accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    m_source->button(static_cast<int>(spec.source))->setChecked(true);
    connect(m_source, &QButtonGroup::idClicked, this, [this] { updateEnabled(); });
    for (QLineEdit* e : { m_model, m_saved, m_params, m_map })
        connect(e, &QLineEdit::textChanged, this, [this] { updateEnabled(); });
    updateEnabled();
}

CompareSpec CompareDialog::spec() const
{
    CompareSpec s;
    s.source = static_cast<CompareSpec::Source>(m_source->checkedId());
    s.modelB = m_model->text().trimmed();
    s.paramsB = m_params->text().trimmed();
    s.savedB = m_saved->text().trimmed();
    s.mapFile = m_map->text().trimmed();
    s.kernelsB = m_kernels->currentIndex() == 1 ? KernelKind::Reference
        : m_kernels->currentIndex() == 2        ? KernelKind::Dnnl
                                                : KernelKind::Auto;
    s.precisionB = rulesOf(m_precision->currentIndex(), m_targets->text());
    s.modeB = static_cast<debug::RunMode>(m_mode->currentIndex());
    s.inputsB = m_inputs->text().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    s.tol = { m_rtol->value(), m_atol->value() };
    return s;
}

void CompareDialog::setServer(const QString& server)
{
    m_server = server;
    m_intro->setText(tr("Run A is the model on %1, on its own inputs; both runs are recorded there and every "
                        "tensor is compared, node by node. Files are paths on that machine.")
                         .arg(server));
    for (QToolButton* browse : findChildren<QToolButton*>())
        browse->setVisible(server.isEmpty());
    m_problem->setText(problem());
}

QString CompareDialog::problem() const
{
    const CompareSpec s = spec();
    auto missing = [this](const QString& path) {
        return m_server.isEmpty() && !path.isEmpty() && !path.startsWith(QStringLiteral("sample:")) && !QFileInfo::exists(path);
    };
    if (s.source == CompareSpec::Source::OtherModel && s.modelB.isEmpty()) return tr("Choose model B's file.");
    if (s.source == CompareSpec::Source::Saved && s.savedB.isEmpty()) return tr("Choose the saved run.");
    if (s.modeB == debug::RunMode::Eager && !s.precisionB.empty())
        return tr("Reduced precision is emulated in a hybridized run: choose another mode.");
    for (const QString& i : s.inputsB)
        if (i.indexOf(QLatin1Char('=')) <= 0) return tr("%1: an input of B is NAME=SOURCE").arg(i);
    for (const QString& p : { s.modelB, s.paramsB, s.savedB, s.mapFile })
        if (missing(p)) return tr("%1: no such file or folder").arg(p);
    return {};
}

void CompareDialog::updateEnabled()
{
    const int source = m_source->checkedId();
    m_model->parentWidget()->setEnabled(source == 1);
    m_saved->parentWidget()->setEnabled(source == 2);
    m_params->parentWidget()->setEnabled(source != 2);
    m_kernels->setEnabled(source != 2);
    m_mode->setEnabled(source != 2);
    m_inputs->setEnabled(source != 2);
    m_precision->parentWidget()->setEnabled(source != 2);
    m_problem->setText(problem());
}

bool parseCompareSpec(const QString& text, CompareSpec* spec, QString* error)
{
    CompareSpec s;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const int eq = part.indexOf(QLatin1Char('='));
        const QString key = part.left(eq).trimmed(), value = eq < 0 ? QString() : part.mid(eq + 1).trimmed();
        if (eq < 0 || value.isEmpty()) {
            *error = QStringLiteral("--compare: '%1' is not KEY=VALUE").arg(part);
            return false;
        }
        if (key == QLatin1String("model")) {
            s.source = CompareSpec::Source::OtherModel;
            s.modelB = value;
        } else if (key == QLatin1String("saved")) {
            s.source = CompareSpec::Source::Saved;
            s.savedB = value;
        } else if (key == QLatin1String("params")) {
            s.paramsB = value;
        } else if (key == QLatin1String("map")) {
            s.mapFile = value;
        } else if (key == QLatin1String("kernels")) {
            if (value == QLatin1String("reference")) s.kernelsB = KernelKind::Reference;
            else if (value == QLatin1String("onednn")) s.kernelsB = KernelKind::Dnnl;
            else if (value == QLatin1String("auto")) s.kernelsB = KernelKind::Auto;
            else {
                *error = QStringLiteral("--compare: kernels=%1: auto, reference or onednn").arg(value);
                return false;
            }
        } else if (key == QLatin1String("mode")) {
            const auto mode = debug::parseRunMode(value.toStdString());
            if (!mode) {
                *error = QStringLiteral("--compare: mode=%1: eager, hybrid, static_alloc or static_shape").arg(value);
                return false;
            }
            s.modeB = *mode;
        } else if (key == QLatin1String("input")) {
            if (value.indexOf(QLatin1Char('=')) <= 0) {
                *error = QStringLiteral("--compare: input=%1: expected input=NAME=SOURCE").arg(value);
                return false;
            }
            s.inputsB << value;
        } else if (key == QLatin1String("half") || key == QLatin1String("bf16")) {
            s.precisionB.push_back(
                { value.toStdString(), key == QLatin1String("half") ? Precision::Float16 : Precision::BFloat16 });
        } else if (key == QLatin1String("rtol") || key == QLatin1String("atol")) {
            bool ok = false;
            const double v = value.toDouble(&ok);
            if (!ok || v < 0) {
                *error = QStringLiteral("--compare: %1=%2 is not a tolerance").arg(key, value);
                return false;
            }
            (key == QLatin1String("rtol") ? s.tol.rtol : s.tol.atol) = v;
        } else {
            *error = QStringLiteral(
                "--compare: unknown key '%1' (model, params, saved, map, kernels, mode, input, half, bf16, rtol, atol)")
                         .arg(key);
            return false;
        }
    }
    *spec = s;
    return true;
}

} // namespace opscope::gui
