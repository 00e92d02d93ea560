#pragma once

#include <QIcon>

namespace opscope::gui {

/// The toolbar's icons, drawn at run time (crisp at any device pixel ratio, no image files).
enum class IconKind {
    Run,
    Continue,
    Pause,
    Stop,
    StepOver,
    StepInto,
    StepOut,
    RunTo,
    Breakpoint,
    BreakNan,
    Open,
    Fit,
    App
};

QIcon makeIcon(IconKind kind);

} // namespace opscope::gui
