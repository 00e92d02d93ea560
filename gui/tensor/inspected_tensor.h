#pragma once

#include "tensor/tensor.h"

#include <cstdint>
#include <memory>

#include <QString>

namespace opscope::gui {

class TensorSource;

/// One tensor of a paused node as the inspector lists it: its values here, or (`source` set,
/// `values` undefined) held where the engine runs and read as the views need them.
struct InspectedTensor {
    InspectedTensor() = default;
    InspectedTensor(QString name, QString role, opscope::Tensor values = {})
        : name(std::move(name))
        , role(std::move(role))
        , values(std::move(values))
    {
    }
    /// A tensor read where it is, through `source`.
    InspectedTensor(QString name, QString role, std::shared_ptr<const TensorSource> source, opscope::Shape shape, opscope::DType dtype)
        : name(std::move(name))
        , role(std::move(role))
        , source(std::move(source))
        , shape(std::move(shape))
        , dtype(dtype)
    {
    }

    QString name;
    QString role; ///< "input", "weight", "output", "aux" or "record"
    opscope::Tensor values;
    std::shared_ptr<const TensorSource> source;
    opscope::Shape shape; ///< with a source: the tensor's shape and element type
    opscope::DType dtype = opscope::DType::Float32;

    bool remote() const { return !values.defined() && source != nullptr; }
    bool hasValues() const { return values.defined() || source != nullptr; }
    const opscope::Shape& shapeOf() const { return values.defined() ? values.shape() : shape; }
    int64_t byteSize() const
    {
        return shapeOf().size() * static_cast<int64_t>(opscope::dtypeSize(values.defined() ? values.dtype() : dtype));
    }
};

} // namespace opscope::gui
