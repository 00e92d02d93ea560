#pragma once

#include "debug/session.h"
#include "debug/tensor_slice.h"

#include <QString>

namespace opscope::gui {

/// The values of a tensor that stays where its engine runs (a server), read in the pieces a view
/// shows: statistics and a histogram computed there, 2-D windows for the value table. Calls block
/// (a round trip) and are made off the GUI thread; each throws an exception naming the tensor and
/// what went wrong (gone from the pause, server unreachable).
class TensorSource {
public:
    virtual ~TensorSource() = default;
    virtual debug::Session::TensorSummary summary(
        int bins, debug::HistogramScale scale, double lo, double hi) const = 0;
    /// The window `request` names; rows and columns are the tensor's last two axes.
    virtual debug::TensorSlice slice(const debug::SliceRequest& request) const = 0;
    /// Where the values are ("127.0.0.1:5555"), for messages.
    virtual QString where() const = 0;
};

} // namespace opscope::gui
