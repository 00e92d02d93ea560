#pragma once

#include "tensor/shape.h"
#include "tensor/tensor.h"

#include <array>
#include <cstdint>
#include <optional>

#include <QImage>
#include <QString>
#include <QVariantMap>

namespace opscope::gui {

/// Where the values of one model input come from: the model's default, a fill, a file or the
/// drawing pad. A plain value: copy it, compare it, persist it with toVariant().
struct InputSource {
    enum class Kind { Default, Ones, Zeros, Uniform, Normal, NpyFile, ImageFile, Drawing };

    Kind kind = Kind::Default; // Default: the model's own default input (samples have one)
    uint64_t seed = 0; // Uniform, Normal
    double lo = 0, hi = 1; // Uniform
    double mean = 0, std = 1; // Normal
    QString file; // NpyFile, ImageFile
    bool grayscale = true; // ImageFile: 1 channel, else RGB (3)
    bool normalize = false; // ImageFile: (x - mean) / std per channel after scaling to [0, 1]
    std::array<double, 3> imgMean { 0.485, 0.456, 0.406 }, imgStd { 0.229, 0.224, 0.225 };
    bool invert = false; // ImageFile: 1 - x (a dark digit on white paper becomes MNIST style)

    /// One line for a status bar: "uniform [0, 1], seed 7", "image digit.png (grayscale, 28×28)".
    /// With a known `shape` image and drawing descriptions include the size the picture becomes.
    QString describe(const opscope::Shape& shape = opscope::Shape()) const;

    friend bool operator==(const InputSource&, const InputSource&) = default;
};

/// One model input as the model describes it: its name, its shape (0 for an unknown dimension, no
/// dimensions when the model does not record it) and the model's default value when it has one. The
/// panel lets the user give another shape (InputRow::shape(), InputPanel::shapes()).
struct InputSpec {
    QString name;
    opscope::Shape shape;
    bool hasDefault = false;
    opscope::Tensor defaultTensor;
    /// For a shape the model does not record, what its first layer's weights suggest:
    /// "(N, 3, H, W) from Convolution 'conv0'", and a shape to type ("1x3x28x28"). Empty otherwise.
    QString shapeHint;
    QString shapeExample;
    /// The element type the input takes (an ONNX model's int64 ids, bool masks): what any source
    /// makes is converted to it.
    opscope::DType dtype = opscope::DType::Float32;
    /// The default value is the engine's own where it runs (a server's input), not a tensor here:
    /// how the panel names it ("the server's own input, on 127.0.0.1:5000"). Empty for a model of this process.
    QString defaultElsewhere;
};

/// What kind of problem stopped an input from being made; a scripted start exits with the matching
/// status (opscope-cli's): no shape or value 2, a file that cannot be read 3, a shape the model
/// cannot take 4.
enum class InputProblem { None, NoValue, BadFile, WrongShape };

/// A tensor made from an InputSource, or the reason it could not be made.
struct InputResult {
    opscope::Tensor tensor;
    QString error;
    InputProblem problem = InputProblem::None;

    bool ok() const { return error.isEmpty() && tensor.defined(); }
};

/// The name shown in the source combo: "Default", "Ones", ".npy file", "Drawing pad"…
QString kindLabel(InputSource::Kind kind);
/// Stable lower-case key used in settings: "default", "ones", "npy", "image", "drawing"…
QString kindKey(InputSource::Kind kind);
std::optional<InputSource::Kind> kindFromKey(const QString& key);

/// A shape as the panel shows it: "(1, 1, 28, 28)", unknown dimensions as "?".
QString shapeText(const opscope::Shape& shape);
/// The shape editor's spelling: "1x1x28x28", unknown dimensions as "?" ("?x1x28x28"); empty for a
/// shape of no dimensions.
QString shapeEditText(const opscope::Shape& shape);

/// Parses a shape the user typed: "1x1x28x28", "(1, 1, 28, 28)", "[1, 28]", "(5,)" or "28". Every
/// dimension must be a whole number of at least 1, and there are at most Shape::kMaxDims of them. On
/// failure returns std::nullopt and sets `*error` naming the text and the problem:
/// "shape '1x0x28': dimension 2 is 0; every dimension must be at least 1".
std::optional<opscope::Shape> parseShapeText(const QString& text, QString* error = nullptr);

/// The shape of the array in a .npy file, read from its header alone (a 0-d array is (1,), as
/// readNpy reads it). On failure returns std::nullopt and sets `*error` ("digit.npy: not a .npy file").
std::optional<opscope::Shape> readNpyShape(const QString& path, QString* error = nullptr);

/// The layout of an image-like input shape: (N, C, H, W), (C, H, W) or (H, W). Unknown dimensions
/// are 0. `valid` is false for any other number of dimensions.
struct ImageLayout {
    bool valid = false;
    int64_t n = 1, c = 1, h = 0, w = 0;
};
ImageLayout imageLayout(const opscope::Shape& shape);

/// True when the drawing pad can feed an input of this shape: a single one-channel image
/// (1, 1, H, W), (1, H, W) or (H, W) with H and W from 8 to 280 (MNIST: 28×28).
bool drawingFits(const opscope::Shape& shape);

/// Makes the tensor of one input. `defaultTensor` is the model's default (used by Kind::Default)
/// and `drawing` the drawing pad's tensor (Kind::Drawing). Never throws: on failure the result
/// carries a message naming the file and what is wrong. With `inputName` messages also name the
/// input: "digit.npy: shape (1, 28, 28) but input 'data' needs (1, 1, 28, 28)". A `.npy` file of
/// another element type than `dtype` (the input's) is converted to it, as NumPy's astype does.
InputResult makeInputTensor(const InputSource& source, const opscope::Shape& shape,
    const opscope::Tensor& defaultTensor, const opscope::Tensor& drawing, const QString& inputName = QString(),
    opscope::DType dtype = opscope::DType::Float32);

/// Converts a picture to an input tensor of `shape` ((N, C, H, W), (C, H, W) or (H, W)): the image
/// is composited over white, converted to grayscale by luminance (qGray) or to RGB, resized
/// smoothly to H×W, scaled to [0, 1], then optionally inverted (1 - x) and normalized
/// ((x - mean[c]) / std[c]; channel 0 for grayscale). C must be 1 for grayscale and 3 for RGB; the
/// N images are copies. Unknown dimensions take the image's own: N 1, C from `grayscale`, H×W of
/// the picture. On failure returns an undefined tensor and sets `*error` (when given).
opscope::Tensor imageToTensor(const QImage& image, const opscope::Shape& shape, bool grayscale, bool normalize,
    const std::array<double, 3>& mean, const std::array<double, 3>& std, bool invert, QString* error = nullptr);

/// Reads an image file with QImageReader (applying its orientation tag). Returns a null image and
/// sets `*error` ("photo.jpg: cannot read image: …") on failure.
QImage readImageFile(const QString& path, QString* error = nullptr);

/// True for a file name the image source can read (by its suffix: png, jpg, bmp, pgm…).
bool isImageFileName(const QString& path);
/// True for a `.npy` file name (any case).
bool isNpyFileName(const QString& path);

QVariantMap toVariant(const InputSource& source);
/// The inverse of toVariant(); missing or malformed entries keep their defaults.
InputSource inputSourceFromVariant(const QVariantMap& map);

} // namespace opscope::gui
