#include "gui/panels/breakpoint_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace opscope::gui {

namespace {
enum Where { NodeBefore, NodeAfter, TensorName, EveryOpOutputs, EveryOpInputs };
}

BreakpointDialog::BreakpointDialog(QWidget* parent)
    : QDialog(parent)
    , m_where(new QComboBox(this))
    , m_location(new QLineEdit(this))
    , m_condition(new QLineEdit(this))
    , m_ignore(new QSpinBox(this))
    , m_message(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Breakpoint"));
    m_where->addItems({ tr("Node, before it runs (inputs)"), tr("Node, after it runs (outputs)"),
        tr("One tensor (node_slot)"), tr("Every op: outputs (watchpoint)"), tr("Every op: inputs (watchpoint)") });
    m_location->setPlaceholderText(tr("node name, e.g. hybridsequential0_conv0_fwd or, in training, …_fwd_backward"));
    m_condition->setPlaceholderText(
        tr("always; or nan, inf, naninf, zero, max>1e3, absmax>10, mean<0, zeros>0.9, norm>100; gradients only: "
           "grad naninf, grad norm>10"));
    m_ignore->setRange(0, 1000000);
    m_ignore->setToolTip(tr("Hits to let pass before pausing"));
    m_message->setStyleSheet(QStringLiteral("color: #c03030"));
    m_message->setWordWrap(true);
    auto* form = new QFormLayout(this);
    form->addRow(tr("Break at"), m_where);
    form->addRow(tr("Name"), m_location);
    form->addRow(tr("Condition"), m_condition);
    form->addRow(tr("Ignore count"), m_ignore);
    form->addRow(m_message);
    form->addRow(m_buttons);
    resize(520, sizeHint().height());
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_where, &QComboBox::currentIndexChanged, this, &BreakpointDialog::validate);
    connect(m_location, &QLineEdit::textChanged, this, &BreakpointDialog::validate);
    connect(m_condition, &QLineEdit::textChanged, this, &BreakpointDialog::validate);
    validate();
}

void BreakpointDialog::setNode(const QString& node)
{
    m_location->setText(node);
}

void BreakpointDialog::setPhase(OpPhase phase)
{
    m_where->setCurrentIndex(phase == OpPhase::Before ? NodeBefore : NodeAfter);
}

void BreakpointDialog::setCondition(const QString& text)
{
    m_condition->setText(text);
}

void BreakpointDialog::validate()
{
    const bool watch = m_where->currentIndex() >= EveryOpOutputs;
    m_location->setEnabled(!watch);
    QString problem;
    if (!watch && m_location->text().trimmed().isEmpty()) problem = tr("A name is needed.");
    const QString c = m_condition->text().trimmed();
    if (problem.isEmpty() && !c.isEmpty()) {
        try {
            debug::Condition::parse(c.toStdString());
        } catch (const std::exception& e) {
            problem = QString::fromStdString(e.what());
        }
    }
    if (problem.isEmpty() && watch && c.isEmpty()) problem = tr("A watchpoint needs a condition.");
    m_message->setText(problem);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

debug::Breakpoint BreakpointDialog::breakpoint() const
{
    const QString c = m_condition->text().trimmed();
    const debug::Condition cond = c.isEmpty() ? debug::Condition::always() : debug::Condition::parse(c.toStdString());
    const std::string name = m_location->text().trimmed().toStdString();
    debug::Breakpoint b;
    switch (m_where->currentIndex()) {
    case NodeBefore:
        b = debug::Breakpoint::onNode(name, OpPhase::Before, cond);
        break;
    case NodeAfter:
        b = debug::Breakpoint::onNode(name, OpPhase::After, cond);
        break;
    case TensorName:
        b = debug::Breakpoint::onTensor(name, cond);
        break;
    case EveryOpInputs:
        b = debug::Breakpoint::watch(cond, OpPhase::Before);
        break;
    default:
        b = debug::Breakpoint::watch(cond, OpPhase::After);
        break;
    }
    b.ignoreCount = m_ignore->value();
    return b;
}

} // namespace opscope::gui
