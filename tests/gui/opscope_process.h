#pragma once

// Runs the real `opscope` executable on the offscreen platform with settings of its own: its exit
// status and standard error (and output), for the tests of its command line.

#include "common/test_paths.h"

#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>

namespace opscope::gui::test {

struct Result {
    int status = -1; ///< -1: killed after the timeout (a hang), -2: crashed
    QString err;
    QString out;
};

/// `env` entries "NAME=value" are set; "NAME=" (empty value) removes NAME.
inline Result runOpscope(const QStringList& args, const QStringList& env = {})
{
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    QTemporaryDir home; // settings of their own
    e.insert(QStringLiteral("XDG_CONFIG_HOME"), home.path());
    for (const QString& kv : env) {
        const int eq = kv.indexOf(QLatin1Char('='));
        if (kv.mid(eq + 1).isEmpty())
            e.remove(kv.left(eq));
        else
            e.insert(kv.left(eq), kv.mid(eq + 1));
    }
    p.setProcessEnvironment(e);
    p.start(QString::fromStdString(opscope::test::binary("opscope")), args);
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return {};
    }
    return { p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
        QString::fromLocal8Bit(p.readAllStandardError()), QString::fromLocal8Bit(p.readAllStandardOutput()) };
}

} // namespace opscope::gui::test
