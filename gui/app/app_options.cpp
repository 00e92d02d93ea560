#include "gui/app/app_options.h"

#include "debug/condition.h"
#include "debug/explain.h"
#include "gui/compare/compare_dialog.h"

namespace opscope::gui {

QString appUsage()
{
    return QStringLiteral(
        "Usage: opscope [MODEL|sample:NAME] [options]\n"
        "\n"
        "A debugger for neural networks: the model's graph, breakpoints on its nodes, and the tensors\n"
        "where a run pauses. MODEL is an ONNX .onnx file, an MXNet <prefix>-symbol.json (its .params found beside it) or\n"
        "sample:NAME (mlp, lenet, fashion, mini-resnet, tiny-transformer, nan-demo). Without a model the last\n"
        "one opens, or sample:lenet with a breakpoint set.\n"
        "\n"
        "Options:\n"
        "  --break NODE[:before|:after]  a breakpoint on NODE (before it runs by default); repeatable\n"
        "  --break-on COND               a watchpoint on every op: nan, inf, naninf, \"max>1e3\", …; repeatable\n"
        "  --run                         start the run at once\n"
        "  --train-step                  run one training step (mlp, lenet) in the debugger instead: forward,\n"
        "                                loss, backward (break on NODE_backward too), then the update\n"
        "  --screenshot FILE.png         save the window after the first pause (or at the end of the run)\n"
        "  --compare SPEC                compare the model with run B: KEY=VALUE,... with model, params,\n"
        "                                saved (a --dump folder or .npz), map, kernels, half, bf16 (a node,\n"
        "                                an operator or all), rtol, atol\n"
        "  --explain METHOD              when the run pauses or ends, explain its prediction in the Explain\n"
        "                                dock: saliency, gradient-x-input, gradcam or occlusion\n"
        "  --present LAYER               when the run pauses or ends, open View > Presentation at LAYER\n"
        "                                (1 is the first operator); the screenshot is of it\n"
        "  --attach HOST:PORT            debug the engine of a server (opscope-server, or a program that\n"
        "                                serves its session) instead of opening a model\n"
        "  --token-file F                the server's token (the file opscope-server wrote)\n"
        "  --tls-ca F                    a TLS server: the certificate (PEM) to trust\n"
        "  --watch                       attach without taking control (another client holds it)\n"
        "  --fetch-limit MB              a server's tensors above MB (default 16) stay there: statistics,\n"
        "                                histogram and the value table's windows are read as shown\n"
        "  --quit                        exit after the screenshot, or once the run pauses or ends\n"
        "  --fresh                       ignore the saved window layout, breakpoints and inputs\n"
        "  --tab histogram|values|image  the inspector's tab when the run pauses\n"
        "  --input NAME=SOURCE           an input's values: ones, zeros, uniform, normal, FILE.npy (its\n"
        "                                shape is the input's when the model does not record one),\n"
        "                                SHAPE[:ones|zeros|uniform|normal] (SHAPE like 1x3x32x32),\n"
        "                                IMAGE (png, jpg, bmp, pgm; IMAGE:invert for dark ink on white)\n"
        "                                or draw:IMAGE (the picture drawn on the 28x28 pad); repeatable\n"
        "  -h, --help                    this text\n"
        "  --version                     the version\n"
        "\n"
        "An input only a loss reads (SoftmaxOutput's label) is not asked for: a run gives it zeros.\n"
        "\n"
        "Exit status: 0 ok, 1 the screenshot could not be written, 2 bad arguments (an input without a\n"
        "shape or value), 3 the model or an input file did not load, 4 the run failed (an input of a\n"
        "shape the model cannot take), 5 the server refused the connection or its token.\n");
}

bool parseAppOptions(const QStringList& arguments, AppOptions* o, QString* error)
{
    *o = AppOptions();
    auto value = [&](int& i, const QString& name, QString* out) {
        const QString a = arguments[i];
        if (a.startsWith(name + QLatin1Char('='))) {
            *out = a.mid(name.size() + 1);
            return true;
        }
        if (i + 1 >= arguments.size()) {
            *error = name + QStringLiteral(": a value is needed");
            return false;
        }
        *out = arguments[++i];
        return true;
    };
    auto is = [&](const QString& a, const char* name) {
        return a == QLatin1String(name) || a.startsWith(QLatin1String(name) + QLatin1Char('='));
    };
    for (int i = 0; i < arguments.size(); ++i) {
        const QString a = arguments[i];
        QString v;
        try {
            if (is(a, "--break")) {
                if (!value(i, QStringLiteral("--break"), &v)) return false;
                o->breakpoints.push_back(debug::parseBreakSpec(v.toStdString()));
            } else if (is(a, "--break-on")) {
                if (!value(i, QStringLiteral("--break-on"), &v)) return false;
                o->breakpoints.push_back(debug::Breakpoint::watch(debug::Condition::parse(v.toStdString())));
            } else if (is(a, "--screenshot")) {
                if (!value(i, QStringLiteral("--screenshot"), &v)) return false;
                if (v.isEmpty()) {
                    *error = QStringLiteral("--screenshot: a file name is needed");
                    return false;
                }
                o->screenshot = v;
            } else if (is(a, "--compare")) {
                if (!value(i, QStringLiteral("--compare"), &v)) return false;
                CompareSpec spec;
                if (!parseCompareSpec(v, &spec, error)) return false;
                o->compare = v;
            } else if (is(a, "--explain")) {
                if (!value(i, QStringLiteral("--explain"), &v)) return false;
                try {
                    debug::parseMethod(v.toStdString());
                } catch (const std::exception& e) {
                    *error = QStringLiteral("--explain: %1").arg(QString::fromStdString(e.what()));
                    return false;
                }
                o->explain = v;
            } else if (is(a, "--present")) {
                if (!value(i, QStringLiteral("--present"), &v)) return false;
                bool ok = false;
                const int layer = v.toInt(&ok);
                if (!ok || layer < 1) {
                    *error = QStringLiteral("--present %1: expected a layer number from 1").arg(v);
                    return false;
                }
                o->present = layer;
            } else if (is(a, "--attach") || is(a, "--token-file") || is(a, "--tls-ca")) {
                const QString name = a.section(QLatin1Char('='), 0, 0);
                if (!value(i, name, &v)) return false;
                if (v.isEmpty()) {
                    *error = name + QStringLiteral(": a value is needed");
                    return false;
                }
                if (name == QLatin1String("--attach")) {
                    const int colon = v.lastIndexOf(QLatin1Char(':'));
                    bool ok = false;
                    const int port = colon > 0 ? v.mid(colon + 1).toInt(&ok) : 0;
                    if (!ok || port < 1 || port > 65535) {
                        *error = QStringLiteral("--attach %1: expected HOST:PORT (a port from 1 to 65535)").arg(v);
                        return false;
                    }
                    o->attach = v;
                } else {
                    (name == QLatin1String("--token-file") ? o->tokenFile : o->tlsCa) = v;
                }
            } else if (a == QLatin1String("--watch")) {
                o->watch = true;
            } else if (is(a, "--fetch-limit")) {
                if (!value(i, QStringLiteral("--fetch-limit"), &v)) return false;
                bool ok = false;
                const double mb = v.toDouble(&ok);
                if (!ok || !(mb >= 0) || mb > 1e6) {
                    *error = QStringLiteral("--fetch-limit %1: expected megabytes from 0 to 1000000").arg(v);
                    return false;
                }
                o->fetchLimitBytes = static_cast<qint64>(mb * 1024 * 1024);
            } else if (is(a, "--tab")) {
                if (!value(i, QStringLiteral("--tab"), &v)) return false;
                if (v != QLatin1String("histogram") && v != QLatin1String("values") && v != QLatin1String("image")) {
                    *error = QStringLiteral("--tab %1: expected histogram, values or image").arg(v);
                    return false;
                }
                o->tab = v;
            } else if (is(a, "--input")) {
                if (!value(i, QStringLiteral("--input"), &v)) return false;
                if (v.indexOf(QLatin1Char('=')) <= 0 || v.endsWith(QLatin1Char('='))) {
                    *error = QStringLiteral("--input %1: expected NAME=SOURCE").arg(v);
                    return false;
                }
                o->inputs << v;
            } else if (a == QLatin1String("--run")) {
                o->run = true;
            } else if (a == QLatin1String("--train-step")) {
                o->trainStep = true;
            } else if (a == QLatin1String("--quit")) {
                o->quit = true;
            } else if (a == QLatin1String("--fresh")) {
                o->fresh = true;
            } else if (a.startsWith(QLatin1Char('-')) && a.size() > 1) {
                *error = QStringLiteral("unknown option %1").arg(a);
                return false;
            } else if (o->model.isEmpty()) {
                o->model = a;
            } else {
                *error = QStringLiteral("only one model may be given (%1 and %2)").arg(o->model, a);
                return false;
            }
        } catch (const std::exception& e) {
            *error = QString::fromStdString(e.what());
            return false;
        }
    }
    if (!o->attach.isEmpty()) {
        const char* local = !o->model.isEmpty() ? "a model"
            : o->trainStep                      ? "--train-step"
            : !o->compare.isEmpty()             ? "--compare"
            : !o->explain.isEmpty()             ? "--explain"
            : o->present > 0                    ? "--present"
            : !o->inputs.isEmpty()              ? "--input"
                                                : nullptr;
        if (local) {
            *error = QStringLiteral("--attach: %1 is for a model of this process; the server has its own")
                         .arg(QLatin1String(local));
            return false;
        }
    } else if (!o->tokenFile.isEmpty() || !o->tlsCa.isEmpty() || o->watch || o->fetchLimitBytes >= 0) {
        *error = QStringLiteral("--token-file, --tls-ca, --watch and --fetch-limit go with --attach HOST:PORT");
        return false;
    }
    if (!o->trainStep && o->attach.isEmpty()) // a server may run training steps (opscope-server --train)
        for (const debug::Breakpoint& b : o->breakpoints)
            if (b.condition.gradientsOnly) {
                *error = QStringLiteral("--break-on '%1': gradient conditions test a training step's backward pass; "
                                        "add --train-step")
                             .arg(QString::fromStdString(b.condition.str()));
                return false;
            }
    return true;
}

bool wantsHelpOrVersion(int argc, char** argv, QString* text)
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "-h" || a == "--help") {
            *text = appUsage();
            return true;
        }
        if (a == "--version") {
            *text = QStringLiteral("opscope %1\n").arg(QStringLiteral(OPSCOPE_VERSION));
            return true;
        }
    }
    return false;
}

int exitStatusOf(InputProblem problem)
{
    switch (problem) {
    case InputProblem::BadFile:
        return kExitLoadFailed;
    case InputProblem::WrongShape:
        return kExitRunFailed;
    default:
        return kExitUsage;
    }
}

} // namespace opscope::gui
