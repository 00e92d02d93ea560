#pragma once

// The window's weights copied for a helper's own model instance (an explanation, a channel profile,
// the presentation): the model on disk may no longer be what the window holds once the Train dock
// has trained it.

#include "gluon/block.h"

#include <string>
#include <utility>
#include <vector>

#include <QString>

namespace opscope::gui {

using ParameterSnapshot = std::vector<std::pair<std::string, Tensor>>;

/// Copies every initialised parameter of `block`. Call on the GUI thread while no run or training
/// uses the block (at a pause or after a run: the session's worker is parked then).
ParameterSnapshot snapshotParameters(const gluon::HybridBlock& block);
/// Sets `block`'s parameters of the same names and shapes from the snapshot (others stay).
void applyParameters(gluon::HybridBlock& block, const ParameterSnapshot& snapshot);
/// A short fingerprint of the values (FNV-1a over names and bytes), for caches.
QString fingerprint(const ParameterSnapshot& snapshot);

} // namespace opscope::gui
