#pragma once

#include <stdexcept>
#include <string>

namespace opscope {

/// Base of every error the engine throws. The message always says what failed and where.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A shape that contradicts the graph or an operator's rules; names the node and both shapes.
class ShapeError : public Error {
public:
    using Error::Error;
};

/// A malformed or unsupported attribute value (names the attribute, its value and the operator).
class AttributeError : public Error {
public:
    using Error::Error;
};

/// An element type an operator, a file or a conversion does not take; names the types and where.
class TypeError : public Error {
public:
    using Error::Error;
};

/// A structural graph defect: cycle, dangling input, unknown operator.
class GraphError : public Error {
public:
    using Error::Error;
};

/// A file that cannot be read or written; names the file and, where known, the byte offset.
class FileError : public Error {
public:
    using Error::Error;
};

/// A tensor or a plan that needs more memory than the engine may use (memoryLimit()), or a size
/// that 64-bit arithmetic cannot hold; names what asked for it, the shape and the bytes.
class ResourceError : public Error {
public:
    using Error::Error;
};

/// Misuse of an API: wrong flags, wrong number of inputs, calls in the wrong state.
class UsageError : public Error {
public:
    using Error::Error;
};

} // namespace opscope
