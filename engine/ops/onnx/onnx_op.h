#pragma once

// What every ONNX operator shares: its registry name, the attributes the importer writes
// (engine/io/onnx_model.cpp), its input and output slots, type checks and NumPy broadcasting.
//
// An ONNX node in the engine's Graph keeps its op type as Node::op ("Reshape") and carries the
// hidden attribute `__domain__` = "ai.onnx"; the registry holds it as "onnx::Reshape", apart from
// MXNet's operator of the same name. Attributes arrive as strings:
//   INT "5"; FLOAT "%.9g"; STRING as is; INTS and FLOATS "[1, 2]";
// and the importer adds hidden ones:
//   __opset__      the opset version of the node's domain in the model ("13");
//   __ninputs__    how many inputs the node has in the engine (absent optional inputs left out);
//   __inputs__     the ONNX input slot of each of them, "[0, 2]", written only when an optional
//                  input before the last one is absent;
//   __noutputs__   how many outputs it has (trailing unused optional outputs left out);
//   __in<k>__      the value of ONNX input slot k when it is known before the run (an initializer,
//                  a Constant or a folded subgraph) and is a scalar or 1-D tensor of at most
//                  kMaxInlineValues numbers, "[1, -1]": what Reshape's shape, Slice's starts or
//                  Resize's scales need at shape inference.
// Input slots are named "input<k>" and outputs "output<k>" (k: the ONNX slot), so op hooks report
// "<node>_output0" as documented.

#include "core/error.h"
#include "ops/attrs.h"
#include "ops/op.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opscope {
class OpRegistry;
}

namespace opscope::onnx_ops {

inline constexpr std::string_view kPrefix = "onnx::";
inline constexpr size_t kMaxInlineValues = 1024;

/// "onnx::" + opType.
std::string registryName(std::string_view opType);

/// The parsed attributes every ONNX operator's parameters start from.
struct OnnxParams : OpParams {
    int opset = 0;
    int numInputs = 0;
    int numOutputs = 1;
    std::vector<int> slots; ///< ONNX input slot of each engine input (0, 1, … when none is absent)
    /// Engine input index of ONNX slot `slot`, or -1 when the node lacks it.
    int inputIndex(int slot) const;
    bool hasInput(int slot) const { return inputIndex(slot) >= 0; }
};

/// Reads an ONNX node's attributes (see the file comment). Errors are AttributeErrors naming the
/// operator, the attribute and the value.
class OnnxAttrs {
public:
    OnnxAttrs(const AttrMap& attrs, std::string_view opType);

    /// Fills the OnnxParams part of `p` from the hidden attributes; `minInputs`/`maxInputs` bound
    /// the node's input count, `maxOutputs` its outputs (AttributeError outside).
    void fillBase(OnnxParams& p, int minInputs, int maxInputs, int maxOutputs = 1) const;

    bool has(std::string_view key) const { return m_reader.has(key); }
    int64_t getInt(std::string_view key) const;
    int64_t getInt(std::string_view key, int64_t fallback) const;
    double getFloat(std::string_view key, double fallback) const;
    std::string getString(std::string_view key, std::string_view fallback) const;
    std::vector<int64_t> getInts(std::string_view key, const std::vector<int64_t>& fallback) const;
    std::vector<double> getFloats(std::string_view key, const std::vector<double>& fallback) const;

    /// The value of ONNX input slot `slot` when known before the run (`__in<slot>__`), else nullopt.
    std::optional<std::vector<int64_t>> inputInts(int slot) const;
    std::optional<std::vector<double>> inputFloats(int slot) const;
    /// The same, but an AttributeError "input 1 ('shape') must be known before the run …" when not.
    std::vector<int64_t> requireInputInts(int slot, std::string_view what) const;

    [[noreturn]] void fail(std::string_view key, std::string_view why) const { m_reader.fail(key, why); }
    const std::string& opType() const { return m_op; }

private:
    const AttrMap& m_attrs;
    AttrReader m_reader;
    std::string m_op;
};

/// An OpDef for ONNX operator `opType` with what all share filled in: the registry name, ONNX's
/// shape rule (a 0 dimension is empty), inputs/outputs counted from OnnxParams and named
/// input<k>/output<k>. The caller sets parse (returning a subclass of OnnxParams), inferShape,
/// inferType and reference.
OpDef onnxOp(std::string_view opType);
/// Registers it (OpRegistry::add).
void addOnnxOp(OpRegistry& r, OpDef def);

/// Type sets for requireType.
inline constexpr DType kFloatTypes[] = { DType::Float32, DType::Float64, DType::Float16 };
inline constexpr DType kNumericTypes[] = { DType::Float32, DType::Float64, DType::Float16, DType::Int64,
    DType::Int32, DType::Int8, DType::UInt8 };
inline constexpr DType kIntegerTypes[] = { DType::Int64, DType::Int32, DType::Int8, DType::UInt8 };
inline constexpr DType kAllTypes[] = { DType::Float32, DType::Float64, DType::Float16, DType::Int64, DType::Int32,
    DType::Int8, DType::UInt8, DType::Bool };

/// Throws TypeError "input 0 is int64; Relu takes float32, float64 or float16" unless `t` is allowed.
void requireType(DType t, std::span<const DType> allowed, std::string_view opType, int slot);
/// Throws TypeError unless inputs a and b have the same type ("input 1 is float64, input 0 float32;
/// Add takes both of one type").
void requireSameType(std::span<const DType> in, int a, int b, std::string_view opType);

/// NumPy (multidirectional) broadcasting of two shapes; ShapeError naming both when they do not
/// broadcast. Scalars take part as rank 0.
Shape broadcastShapes(const Shape& a, const Shape& b);
/// Element strides of `in` as read at each index of `out` (0 along broadcast dimensions), with
/// `in` right-aligned to out's rank; out.ndim() entries.
std::vector<int64_t> broadcastStrides(const Shape& in, const Shape& out);
/// Row-major element strides of a shape.
std::vector<int64_t> stridesOf(const Shape& s);
/// Normalises an axis in [-rank, rank) to [0, rank); AttributeError-like ShapeError naming the op
/// otherwise.
int normalizeAxis(int64_t axis, int rank, std::string_view opType);

} // namespace opscope::onnx_ops
