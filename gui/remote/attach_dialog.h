#pragma once

#include <QDialog>
#include <QList>
#include <QString>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QPushButton;

namespace opscope::gui {

/// A server attached to before, as remembered (never a typed token: only the file that holds it).
struct ServerEntry {
    QString address; ///< HOST:PORT
    QString tokenFile;
    QString tlsCa;
};

/// The servers attached to, newest first (at most 10), and remembering one (QSettings
/// "servers/recent").
QList<ServerEntry> recentServers();
void rememberServer(const ServerEntry& server);
/// Whether `address` is HOST:PORT with a port from 1 to 65535.
bool isServerAddress(const QString& address);

/// File ▸ Attach to Server…: the address (recent servers offered), the token (a file, or typed),
/// the certificate of a TLS server, and whether to only watch.
class AttachDialog : public QDialog {
    Q_OBJECT
public:
    explicit AttachDialog(QWidget* parent = nullptr);

    ServerEntry server() const;
    QString typedToken() const;
    bool watchOnly() const;
    void setServer(const ServerEntry& server);

private:
    void fillFromRecent(int index);
    void validate();

    QComboBox* m_address;
    QLineEdit* m_tokenFile;
    QLineEdit* m_token;
    QLineEdit* m_tlsCa;
    QCheckBox* m_watch;
    QPushButton* m_ok = nullptr;
    QList<ServerEntry> m_recent;
};

} // namespace opscope::gui
