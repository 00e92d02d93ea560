#pragma once

#include <QFrame>

class QLabel;
class QPushButton;

namespace opscope::gui {

/// The strip above the graph that says the attached engine is gone (its server died or the network
/// went), with Reconnect and Detach; hidden otherwise. The model stays drawn under it.
class EngineBanner : public QFrame {
    Q_OBJECT
public:
    explicit EngineBanner(QWidget* parent = nullptr);

    /// Shows `text` (what happened, where) with the two buttons.
    void showLost(const QString& text);
    /// Shows that a reconnect is under way (the buttons wait).
    void showReconnecting(const QString& where);
    QString text() const;
    QPushButton* reconnectButton() const { return m_reconnect; }

Q_SIGNALS:
    void reconnectRequested();
    void detachRequested();

private:
    QLabel* m_text;
    QPushButton* m_reconnect;
    QPushButton* m_detach;
};

} // namespace opscope::gui
