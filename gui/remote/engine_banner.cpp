#include "gui/remote/engine_banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace opscope::gui {

EngineBanner::EngineBanner(QWidget* parent)
    : QFrame(parent)
    , m_text(new QLabel(this))
    , m_reconnect(new QPushButton(tr("&Reconnect"), this))
    , m_detach(new QPushButton(tr("&Detach"), this))
{
    setObjectName(QStringLiteral("engineBanner"));
    setFrameShape(QFrame::StyledPanel);
    setStyleSheet(QStringLiteral("#engineBanner { background: #fbe3e0; border: 1px solid #d9534f; }"
                                 "#engineBanner QLabel { color: #7a1c17; font-weight: 600; }"));
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_reconnect->setToolTip(tr("Attach to the same server again (its breakpoints and pause are kept there)"));
    m_detach->setToolTip(tr("Go back to this process's engine and its model"));
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(10, 6, 10, 6);
    row->addWidget(m_text, 1);
    row->addWidget(m_reconnect);
    row->addWidget(m_detach);
    connect(m_reconnect, &QPushButton::clicked, this, &EngineBanner::reconnectRequested);
    connect(m_detach, &QPushButton::clicked, this, &EngineBanner::detachRequested);
    hide();
}

void EngineBanner::showLost(const QString& text)
{
    m_text->setText(text);
    m_reconnect->setEnabled(true);
    m_detach->setEnabled(true);
    show();
}

void EngineBanner::showReconnecting(const QString& where)
{
    m_text->setText(tr("Reconnecting to %1…").arg(where));
    m_reconnect->setEnabled(false);
    show();
}

QString EngineBanner::text() const
{
    return m_text->text();
}

} // namespace opscope::gui
