#pragma once

#include "gluon/block.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opscope::gluon {

/// MXNet's gluon.SymbolBlock: a block made from a given graph (typically an exported
/// `-symbol.json`) instead of a hybrid_forward. Variables named as inputs are the block's inputs, in
/// that order; every other variable is a Parameter named exactly as the variable (auxiliary
/// states with grad_req "null"), its shape taken from the variable's `__shape__` where it has one.
/// The block always runs as a cached graph, so op hooks report MXNet's `<node>_<slot>` names.
/// Inside a parent being hybridized it replays its graph into the parent's, keeping every node's
/// exact name. Used by one thread at a time, like every block.
class SymbolBlock : public HybridBlock {
public:
    /// MXNet's `SymbolBlock.imports(symbol_file, input_names, param_file)`: loads the graph, then
    /// the parameters when `param_file` is given (see load_parameters).
    static std::shared_ptr<SymbolBlock> imports(const std::string& symbol_file,
        const std::vector<std::string>& input_names, const std::string& param_file = {});

    /// MXNet's `SymbolBlock(outputs, inputs)`. The graph must be finalized; UsageError when an input
    /// name is not a variable of it. MXNet gives a SymbolBlock the empty prefix.
    SymbolBlock(Graph graph, std::vector<std::string> input_names, const std::optional<std::string>& prefix = "");

    /// Loads parameter values from a `.params` file (names may carry `arg:`/`aux:`). Every
    /// parameter the graph needs must be in the file unless `allow_missing` (UsageError naming
    /// all missing ones), and every array in the file must be one of them unless `ignore_extra`. A
    /// shape that contradicts the variable's `__shape__` is a ShapeError naming the parameter and
    /// both shapes; so is one that contradicts shape inference, checked here when the inputs'
    /// shapes are known from their `__shape__`, else at the first call. Nothing is changed when
    /// it throws.
    void load_parameters(const std::string& filename, bool allow_missing = false, bool ignore_extra = false);

    const Graph& symbol() const { return *m_symbol; }
    const std::vector<std::string>& input_names() const { return m_inputNames; }

    std::vector<Value> forward(const std::vector<Value>& inputs) override;
    /// Replays the graph's operators through F under their exact node names.
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& inputs) override;

private:
    /// Infers every shape from the inputs' shapes alone and throws ShapeError for a parameter
    /// value (in `values`) that contradicts it. Silent when the inputs do not determine the shapes.
    void checkShapes(const std::vector<Shape>& inputShapes, const std::map<std::string, Shape>& values,
        const std::string& loadingFile) const;

    std::shared_ptr<const Graph> m_symbol;
    std::vector<std::string> m_inputNames;
    std::vector<int> m_inputIndex; ///< per node id: input position of a variable, or -1
    std::map<std::string, std::string> m_loadedFrom; ///< parameter name → file it was loaded from
    std::vector<Shape> m_checkedShapes; ///< input and parameter shapes last checked at a call
};

} // namespace opscope::gluon
