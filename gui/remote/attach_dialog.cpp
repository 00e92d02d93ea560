#include "gui/remote/attach_dialog.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {
    const QString kRecentKey = QStringLiteral("servers/recent");

    // A line edit with a Browse… button that picks a file into it.
    QWidget* withBrowse(QWidget* parent, QLineEdit* edit, const QString& title, const QString& filter)
    {
        auto* row = new QWidget(parent);
        auto* layout = new QHBoxLayout(row);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->addWidget(edit, 1);
        auto* browse = new QPushButton(QObject::tr("Browse…"), row);
        layout->addWidget(browse);
        QObject::connect(browse, &QPushButton::clicked, row, [row, edit, title, filter] {
            const QString path = QFileDialog::getOpenFileName(row, title, edit->text(), filter);
            if (!path.isEmpty()) edit->setText(path);
        });
        return row;
    }
}

QList<ServerEntry> recentServers()
{
    QList<ServerEntry> out;
    for (const QVariant& v : QSettings().value(kRecentKey).toList()) {
        const QVariantMap m = v.toMap();
        ServerEntry e { m.value(QStringLiteral("address")).toString(), m.value(QStringLiteral("tokenFile")).toString(),
            m.value(QStringLiteral("tlsCa")).toString() };
        if (isServerAddress(e.address)) out << e;
    }
    return out;
}

void rememberServer(const ServerEntry& server)
{
    QList<ServerEntry> recent = recentServers();
    recent.erase(std::remove_if(recent.begin(), recent.end(), [&](const ServerEntry& e) { return e.address == server.address; }),
        recent.end());
    recent.prepend(server);
    QVariantList list;
    for (int i = 0; i < recent.size() && i < 10; ++i)
        list << QVariantMap { { QStringLiteral("address"), recent[i].address },
            { QStringLiteral("tokenFile"), recent[i].tokenFile }, { QStringLiteral("tlsCa"), recent[i].tlsCa } };
    QSettings().setValue(kRecentKey, list);
}

bool isServerAddress(const QString& address)
{
    const int colon = address.lastIndexOf(QLatin1Char(':'));
    bool ok = false;
    const int port = colon > 0 ? address.mid(colon + 1).toInt(&ok) : 0;
    return ok && port >= 1 && port <= 65535;
}

AttachDialog::AttachDialog(QWidget* parent)
    : QDialog(parent)
    , m_address(new QComboBox(this))
    , m_tokenFile(new QLineEdit(this))
    , m_token(new QLineEdit(this))
    , m_tlsCa(new QLineEdit(this))
    , m_watch(new QCheckBox(tr("Only watch (another client keeps control)"), this))
    , m_recent(recentServers())
{
    setWindowTitle(tr("Attach to Server"));
    m_address->setEditable(true);
    m_address->setMinimumWidth(320);
    for (const ServerEntry& e : m_recent)
        m_address->addItem(e.address);
    m_address->lineEdit()->setPlaceholderText(QStringLiteral("127.0.0.1:50051"));
    m_tokenFile->setPlaceholderText(tr("the file opscope-server wrote (needed off loopback)"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("or the token itself (not remembered)"));
    m_tlsCa->setPlaceholderText(tr("a TLS server's certificate (PEM)"));

    auto* form = new QFormLayout;
    form->addRow(tr("&Server:"), m_address);
    form->addRow(tr("Token &file:"), withBrowse(this, m_tokenFile, tr("Token File"), tr("All files (*)")));
    form->addRow(tr("&Token:"), m_token);
    form->addRow(tr("TLS &certificate:"), withBrowse(this, m_tlsCa, tr("Certificate"), tr("PEM files (*.pem *.crt);;All files (*)")));
    form->addRow(QString(), m_watch);
    auto* note = new QLabel(tr("Start a server with <tt>opscope-server MODEL</tt>: it prints the address it "
                               "listens on. Detaching leaves it running with its breakpoints and pause."),
        this);
    note->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_ok = buttons->button(QDialogButtonBox::Ok);
    m_ok->setText(tr("Attach"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_address, &QComboBox::currentIndexChanged, this, &AttachDialog::fillFromRecent);
    connect(m_address, &QComboBox::editTextChanged, this, &AttachDialog::validate);
    if (!m_recent.isEmpty()) fillFromRecent(0);
    validate();
}

void AttachDialog::fillFromRecent(int index)
{
    if (index < 0 || index >= m_recent.size()) return;
    m_tokenFile->setText(m_recent[index].tokenFile);
    m_tlsCa->setText(m_recent[index].tlsCa);
    validate();
}

void AttachDialog::validate()
{
    const bool ok = isServerAddress(m_address->currentText().trimmed());
    m_ok->setEnabled(ok);
    m_ok->setToolTip(ok ? QString() : tr("HOST:PORT, the address opscope-server printed"));
}

ServerEntry AttachDialog::server() const
{
    return { m_address->currentText().trimmed(), m_tokenFile->text().trimmed(), m_tlsCa->text().trimmed() };
}

QString AttachDialog::typedToken() const
{
    return m_token->text().trimmed();
}

bool AttachDialog::watchOnly() const
{
    return m_watch->isChecked();
}

void AttachDialog::setServer(const ServerEntry& server)
{
    m_address->setEditText(server.address);
    m_tokenFile->setText(server.tokenFile);
    m_tlsCa->setText(server.tlsCa);
    validate();
}

} // namespace opscope::gui
