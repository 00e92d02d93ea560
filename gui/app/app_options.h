#pragma once

#include "debug/breakpoint.h"
#include "gui/inputs/input_source.h"

#include <vector>

#include <QString>
#include <QStringList>

namespace opscope::gui {

/// Exit statuses of `opscope`, as opscope-cli's where they mean the same.
enum ExitStatus { kExitOk = 0, kExitScreenshotFailed = 1, kExitUsage = 2, kExitLoadFailed = 3, kExitRunFailed = 4, kExitRefused = 5 };

/// The exit status of a scripted start whose inputs could not be made (as opscope-cli's).
int exitStatusOf(InputProblem problem);

/// The command line: `opscope [MODEL|sample:NAME] [--break NODE[:before|:after]]… [--break-on COND]…
/// [--run | --train-step] [--screenshot FILE.png] [--quit] [--fresh] [--tab histogram|values|image]
/// [--input NAME=ones|zeros|uniform|normal|FILE.npy|IMAGE[:invert]|draw:IMAGE]… [--compare SPEC]
/// [--explain saliency|gradient-x-input|gradcam|occlusion] [--present LAYER]`, or
/// `opscope --attach HOST:PORT [--token-file F] [--tls-ca F] [--watch]` with the breakpoint, run and
/// screenshot options.
struct AppOptions {
    QString model; ///< empty: the saved last model, else the default sample
    std::vector<debug::Breakpoint> breakpoints; ///< from --break and --break-on
    bool run = false;
    /// Run one training step (forward, loss, backward, update) of a sample with training data in the
    /// debugger, instead of a forward run; --break may name `<node>_backward` nodes.
    bool trainStep = false;
    QString screenshot;
    bool quit = false;
    bool fresh = false; ///< ignore saved layout, breakpoints and inputs
    QStringList inputs; ///< --input NAME=SOURCE, applied to the first model
    QString tab; ///< the inspector's tab at a pause: "histogram", "values" or "image" (empty: as left)
    /// --compare KEY=VALUE,…: compare the first model with run B (gui/compare/compare_dialog.h) once
    /// it is loaded; the screenshot waits for the comparison.
    QString compare;
    /// --explain METHOD: when the run pauses or ends, the Explain dock is raised with this method;
    /// the screenshot waits for the explanation.
    QString explain;
    /// --present LAYER: when the run pauses or ends, View ▸ Presentation opens at this layer (1-based);
    /// the screenshot is of the presentation. 0: not.
    int present = 0;
    /// --attach HOST:PORT: debug the engine of that server (opscope-server, a program that serves
    /// its session) instead of opening a model; --token-file F its token, --tls-ca F the certificate
    /// to trust, --watch to attach without taking control.
    QString attach;
    QString tokenFile;
    QString tlsCa;
    bool watch = false;
    /// --fetch-limit MB: a server's tensors above this stay there (read as shown); -1: the default.
    qint64 fetchLimitBytes = -1;
    bool explicitBreakpoints() const { return !breakpoints.empty(); }
};

/// The default sample opened when no model is given, and its default breakpoint (after the first
/// convolution's activation: the first F5 pauses there and shows a histogram of its feature maps).
inline constexpr const char* kDefaultSample = "sample:lenet";
inline constexpr const char* kDefaultBreakpoint = "hybridsequential0_conv0_tanh_fwd:after";

/// Parses the arguments (without the program name). On error returns false with `error` set.
bool parseAppOptions(const QStringList& arguments, AppOptions* options, QString* error);
/// The --help text.
QString appUsage();
/// True when the raw command line asks for --help (-h) or --version, with the text to print. Needs
/// no QApplication, so it works without a display.
bool wantsHelpOrVersion(int argc, char** argv, QString* text);

} // namespace opscope::gui
