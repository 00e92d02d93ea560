#pragma once

#include "graph/graph.h"
#include "tensor/tensor.h"

namespace opscope::gluon {

class Tracer;

/// What a HybridBlock's forward computes on: a tensor (F runs ops now, MXNet's `nd`) or a symbol,
/// an output of a node being recorded by a Tracer (MXNet's `sym`). Cheap to copy.
class Value {
public:
    Value() = default;
    Value(Tensor t)
        : m_tensor(std::move(t))
    {
    }
    Value(Tracer* tracer, NodeEntry entry)
        : m_tracer(tracer)
        , m_entry(entry)
    {
    }

    bool isSymbol() const { return m_tracer != nullptr; }
    bool defined() const { return m_tracer || m_tensor.defined(); }
    /// The tensor of an eager value; UsageError for a symbol (a symbol has no values while tracing).
    const Tensor& tensor() const;
    Tracer* tracer() const { return m_tracer; }
    NodeEntry entry() const { return m_entry; }

private:
    Tensor m_tensor;
    Tracer* m_tracer = nullptr;
    NodeEntry m_entry;
};

} // namespace opscope::gluon
