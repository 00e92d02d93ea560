#pragma once

#include "graph/graph.h"

#include <QColor>
#include <QString>

namespace opscope::gui {

/// Family of an MXNet operator for colouring the graph: "conv", "dense", "activation", "pool", "norm",
/// "shape", "elemwise", "reduce", "embedding", "dropout", "input" (variables, op "null") or "other".
QString opFamily(const QString& op);

/// Accent colour of a family (a calm, Netron-like palette); also used for "block" and "parameter".
/// Unknown families get a neutral grey.
QColor familyColor(const QString& family);

/// Light fill for boxes of a family, derived from familyColor().
QColor familyFill(const QString& family);

/// A few words on an op's main attributes for its box ("relu", "max 2×2", "3×3 /2", "p=0.5"); often "".
QString opSummary(const Node& node);

} // namespace opscope::gui
