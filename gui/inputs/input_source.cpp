#include "gui/inputs/input_source.h"

#include "io/npy.h"
#include "tensor/random.h"

#include <algorithm>
#include <cmath>
#include <exception>

#include <QFile>
#include <QFileInfo>
#include <QImageReader>
#include <QPainter>
#include <QRegularExpression>

namespace opscope::gui {

namespace {

constexpr int kMaxImageSide = 16384;
constexpr int64_t kMaxImageElements = int64_t(1) << 28;
constexpr qlonglong kMaxDimension = qlonglong(1) << 31;
constexpr qint64 kMaxNpyHeader = qint64(1) << 20;

QString num(double v)
{
    return QString::number(v, 'g', 6);
}

QString channelsText(int64_t c)
{
    return c == 1 ? QStringLiteral("1 channel") : QStringLiteral("%1 channels").arg(c);
}

// Unknown (0) dimensions of `want` match any size.
bool shapeFits(const Shape& have, const Shape& want)
{
    if (have.ndim() != want.ndim()) return false;
    for (int i = 0; i < want.ndim(); ++i)
        if (want[i] > 0 && have[i] != want[i]) return false;
    return true;
}

// readNpy names the path it was given; the panel names files by their name alone.
QString shortenPath(const QString& message, const QString& path)
{
    if (!path.isEmpty() && message.startsWith(path)) return QFileInfo(path).fileName() + message.mid(path.size());
    return message;
}

QString sizeText(const Shape& shape)
{
    const ImageLayout l = imageLayout(shape);
    if (!l.valid || l.h <= 0 || l.w <= 0) return QString();
    return QStringLiteral("%1×%2").arg(l.h).arg(l.w);
}

} // namespace

QString kindLabel(InputSource::Kind kind)
{
    switch (kind) {
    case InputSource::Kind::Default:
        return QStringLiteral("Default");
    case InputSource::Kind::Ones:
        return QStringLiteral("Ones");
    case InputSource::Kind::Zeros:
        return QStringLiteral("Zeros");
    case InputSource::Kind::Uniform:
        return QStringLiteral("Uniform random");
    case InputSource::Kind::Normal:
        return QStringLiteral("Normal random");
    case InputSource::Kind::NpyFile:
        return QStringLiteral(".npy file");
    case InputSource::Kind::ImageFile:
        return QStringLiteral("Image file");
    case InputSource::Kind::Drawing:
        return QStringLiteral("Drawing pad");
    }
    return QString();
}

QString kindKey(InputSource::Kind kind)
{
    switch (kind) {
    case InputSource::Kind::Default:
        return QStringLiteral("default");
    case InputSource::Kind::Ones:
        return QStringLiteral("ones");
    case InputSource::Kind::Zeros:
        return QStringLiteral("zeros");
    case InputSource::Kind::Uniform:
        return QStringLiteral("uniform");
    case InputSource::Kind::Normal:
        return QStringLiteral("normal");
    case InputSource::Kind::NpyFile:
        return QStringLiteral("npy");
    case InputSource::Kind::ImageFile:
        return QStringLiteral("image");
    case InputSource::Kind::Drawing:
        return QStringLiteral("drawing");
    }
    return QString();
}

std::optional<InputSource::Kind> kindFromKey(const QString& key)
{
    using K = InputSource::Kind;
    for (K k : { K::Default, K::Ones, K::Zeros, K::Uniform, K::Normal, K::NpyFile, K::ImageFile, K::Drawing })
        if (kindKey(k) == key) return k;
    return std::nullopt;
}

QString shapeText(const Shape& shape)
{
    QString s = QStringLiteral("(");
    for (int i = 0; i < shape.ndim(); ++i) {
        if (i) s += QStringLiteral(", ");
        s += shape[i] > 0 ? QString::number(shape[i]) : QStringLiteral("?");
    }
    if (shape.ndim() == 1) s += QLatin1Char(',');
    return s + QLatin1Char(')');
}

QString shapeEditText(const Shape& shape)
{
    QStringList dims;
    for (int i = 0; i < shape.ndim(); ++i)
        dims << (shape[i] > 0 ? QString::number(shape[i]) : QStringLiteral("?"));
    return dims.join(QLatin1Char('x'));
}

std::optional<Shape> parseShapeText(const QString& text, QString* error)
{
    const QString trimmed = text.trimmed();
    auto fail = [&](const QString& why) -> std::optional<Shape> {
        if (error) *error = QStringLiteral("shape '%1': %2").arg(trimmed, why);
        return std::nullopt;
    };
    const QString example = QStringLiteral("write it like 1x1x28x28 or (1, 1, 28, 28)");
    QString body = trimmed;
    const bool open = body.startsWith(QLatin1Char('(')) || body.startsWith(QLatin1Char('['));
    const bool close = body.endsWith(QLatin1Char(')')) || body.endsWith(QLatin1Char(']'));
    if (open != close || (open && body.size() < 2)) return fail(QStringLiteral("unbalanced brackets; ") + example);
    if (open) body = body.mid(1, body.size() - 2).trimmed();
    if (body.isEmpty()) return fail(QStringLiteral("no dimensions; ") + example);

    static const QRegularExpression times(QStringLiteral("[xX\\x{00D7}*]"));
    static const QRegularExpression space(QStringLiteral("\\s+"));
    QStringList parts;
    if (body.contains(QLatin1Char(','))) {
        parts = body.split(QLatin1Char(','));
        // A one-dimensional Python tuple: "(5,)".
        if (parts.size() > 1 && parts.last().trimmed().isEmpty()) parts.removeLast();
    } else if (body.contains(times)) {
        parts = body.split(times);
    } else {
        parts = body.split(space, Qt::SkipEmptyParts);
    }
    if (parts.size() > Shape::kMaxDims)
        return fail(QStringLiteral("%1 dimensions; at most %2").arg(parts.size()).arg(Shape::kMaxDims));
    Shape shape;
    for (qsizetype i = 0; i < parts.size(); ++i) {
        const QString part = parts[i].trimmed();
        if (part.isEmpty()) return fail(QStringLiteral("dimension %1 is missing; ").arg(i + 1) + example);
        if (part == QLatin1String("?"))
            return fail(QStringLiteral("dimension %1 is not known; replace ? with its size").arg(i + 1));
        bool ok = false;
        const qlonglong d = part.toLongLong(&ok);
        if (!ok) return fail(QStringLiteral("'%1' is not a whole number; ").arg(part) + example);
        if (d <= 0)
            return fail(QStringLiteral("dimension %1 is %2; every dimension must be at least 1").arg(i + 1).arg(d));
        if (d > kMaxDimension) return fail(QStringLiteral("dimension %1 is %2, too large").arg(i + 1).arg(d));
        shape.push_back(d);
    }
    return shape;
}

std::optional<Shape> readNpyShape(const QString& path, QString* error)
{
    auto fail = [&](const QString& why) -> std::optional<Shape> {
        if (error) *error = QStringLiteral("%1: %2").arg(QFileInfo(path).fileName(), why);
        return std::nullopt;
    };
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return fail(file.errorString());
    const QByteArray magic = file.read(12);
    if (magic.size() < 10
        || !magic.startsWith("\x93"
                             "NUMPY"))
        return fail(QStringLiteral("not a .npy file"));
    const int major = uchar(magic[6]);
    qint64 length = 0;
    qint64 start = 0;
    if (major == 1) {
        length = qint64(uchar(magic[8])) | qint64(uchar(magic[9])) << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (magic.size() < 12) return fail(QStringLiteral("the header is cut short"));
        for (int i = 0; i < 4; ++i)
            length |= qint64(uchar(magic[8 + i])) << (8 * i);
        start = 12;
    } else {
        return fail(QStringLiteral("unsupported .npy version %1").arg(major));
    }
    if (length > kMaxNpyHeader) return fail(QStringLiteral("header of %1 bytes is too large").arg(length));
    if (!file.seek(start)) return fail(QStringLiteral("the header is cut short"));
    const QByteArray header = file.read(length);
    if (header.size() < length) return fail(QStringLiteral("the header is cut short"));

    qsizetype key = header.indexOf("'shape'");
    if (key < 0) key = header.indexOf("\"shape\"");
    const qsizetype from = key < 0 ? -1 : header.indexOf('(', key);
    const qsizetype to = from < 0 ? -1 : header.indexOf(')', from);
    if (to < 0) return fail(QStringLiteral("the header has no shape"));
    Shape shape;
    for (const QByteArray& part : header.mid(from + 1, to - from - 1).split(',')) {
        const QByteArray dim = part.trimmed();
        if (dim.isEmpty()) continue;
        bool ok = false;
        const qlonglong d = dim.toLongLong(&ok);
        if (!ok || d < 0) return fail(QStringLiteral("malformed shape in the header"));
        if (shape.ndim() == Shape::kMaxDims)
            return fail(QStringLiteral("the array has more than %1 dimensions").arg(Shape::kMaxDims));
        shape.push_back(d);
    }
    if (shape.ndim() == 0) shape.push_back(1);
    return shape;
}

ImageLayout imageLayout(const Shape& shape)
{
    ImageLayout l;
    switch (shape.ndim()) {
    case 4:
        l = { true, shape[0], shape[1], shape[2], shape[3] };
        break;
    case 3:
        l = { true, 1, shape[0], shape[1], shape[2] };
        break;
    case 2:
        l = { true, 1, 1, shape[0], shape[1] };
        break;
    default:
        break;
    }
    return l;
}

bool drawingFits(const Shape& shape)
{
    const ImageLayout l = imageLayout(shape);
    return l.valid && l.n <= 1 && l.c <= 1 && l.h >= 8 && l.h <= 280 && l.w >= 8 && l.w <= 280;
}

QString InputSource::describe(const Shape& shape) const
{
    switch (kind) {
    case Kind::Default:
        return QStringLiteral("the model's default input");
    case Kind::Ones:
        return QStringLiteral("ones");
    case Kind::Zeros:
        return QStringLiteral("zeros");
    case Kind::Uniform:
        return QStringLiteral("uniform [%1, %2], seed %3").arg(num(lo), num(hi)).arg(seed);
    case Kind::Normal:
        return QStringLiteral("normal, mean %1, std %2, seed %3").arg(num(mean), num(std)).arg(seed);
    case Kind::NpyFile:
        return file.isEmpty() ? QStringLiteral("no .npy file chosen") : QFileInfo(file).fileName();
    case Kind::ImageFile: {
        if (file.isEmpty()) return QStringLiteral("no image file chosen");
        QStringList traits { grayscale ? QStringLiteral("grayscale") : QStringLiteral("RGB") };
        if (const QString size = sizeText(shape); !size.isEmpty()) traits << size;
        if (invert) traits << QStringLiteral("inverted");
        if (normalize) traits << QStringLiteral("normalized");
        return QStringLiteral("image %1 (%2)").arg(QFileInfo(file).fileName(), traits.join(QStringLiteral(", ")));
    }
    case Kind::Drawing: {
        const QString size = sizeText(shape);
        return size.isEmpty() ? QStringLiteral("drawing pad") : QStringLiteral("drawing pad (%1)").arg(size);
    }
    }
    return QString();
}

QImage readImageFile(const QString& path, QString* error)
{
    const QString name = QFileInfo(path).fileName();
    auto fail = [&](const QString& why) {
        if (error) *error = QStringLiteral("%1: %2").arg(name, why);
        return QImage();
    };
    if (path.isEmpty()) return fail(QStringLiteral("no file name"));
    const QFileInfo info(path);
    if (!info.exists()) return fail(QStringLiteral("no such file"));
    if (!info.isFile()) return fail(QStringLiteral("not a file"));
    QImageReader reader(path);
    reader.setAutoTransform(true);
    const QSize size = reader.size();
    if (size.isValid() && (size.width() > kMaxImageSide || size.height() > kMaxImageSide))
        return fail(QStringLiteral("image of %1×%2 pixels is too large").arg(size.width()).arg(size.height()));
    QImage image = reader.read();
    if (image.isNull()) return fail(QStringLiteral("cannot read image: %1").arg(reader.errorString()));
    return image;
}

bool isImageFileName(const QString& path)
{
    const QByteArray suffix = QFileInfo(path).suffix().toLower().toLatin1();
    return !suffix.isEmpty() && QImageReader::supportedImageFormats().contains(suffix);
}

bool isNpyFileName(const QString& path)
{
    return QFileInfo(path).suffix().compare(QLatin1String("npy"), Qt::CaseInsensitive) == 0;
}

Tensor imageToTensor(const QImage& image, const Shape& shape, bool grayscale, bool normalize,
    const std::array<double, 3>& mean, const std::array<double, 3>& std, bool invert, QString* error)
{
    auto fail = [&](const QString& why) {
        if (error) *error = why;
        return Tensor();
    };
    if (image.isNull()) return fail(QStringLiteral("the image is empty"));
    const ImageLayout l = imageLayout(shape);
    if (!l.valid)
        return fail(QStringLiteral("shape %1 is not an image shape: expected (N, C, H, W), (C, H, W) or (H, W)")
                        .arg(shapeText(shape)));
    const int64_t wantC = grayscale ? 1 : 3;
    if (l.c > 0 && l.c != wantC) {
        QString fix;
        if (l.c == 1)
            fix = QStringLiteral("; choose grayscale");
        else if (l.c == 3)
            fix = QStringLiteral("; choose RGB");
        return fail(QStringLiteral("%1 (%2) does not fit shape %3, which has %4%5")
                        .arg(grayscale ? QStringLiteral("grayscale") : QStringLiteral("RGB"), channelsText(wantC),
                            shapeText(shape), channelsText(l.c), fix));
    }
    const int64_t n = l.n > 0 ? l.n : 1;
    const int64_t h = l.h > 0 ? l.h : image.height();
    const int64_t w = l.w > 0 ? l.w : image.width();
    if (h > kMaxImageSide || w > kMaxImageSide || n * wantC * h * w > kMaxImageElements)
        return fail(QStringLiteral("shape %1 is too large for an image").arg(shapeText(shape)));
    if (normalize)
        for (int64_t ch = 0; ch < wantC; ++ch)
            if (!(std[size_t(ch)] > 0) || !std::isfinite(std[size_t(ch)]) || !std::isfinite(mean[size_t(ch)]))
                return fail(QStringLiteral("normalize: channel %1 has mean %2 and std %3; std must be above 0")
                                .arg(ch)
                                .arg(num(mean[size_t(ch)]), num(std[size_t(ch)])));

    QImage rgb;
    if (image.hasAlphaChannel()) {
        rgb = QImage(image.size(), QImage::Format_RGB32);
        rgb.fill(Qt::white);
        QPainter p(&rgb);
        p.drawImage(0, 0, image);
    } else {
        rgb = image.convertToFormat(QImage::Format_RGB32);
    }
    if (rgb.width() != w || rgb.height() != h)
        rgb = rgb.scaled(int(w), int(h), Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    if (rgb.isNull() || rgb.width() != w || rgb.height() != h)
        return fail(QStringLiteral("cannot resize the image to %1×%2").arg(w).arg(h));

    Shape outShape = shape;
    switch (shape.ndim()) {
    case 4:
        outShape = Shape { n, wantC, h, w };
        break;
    case 3:
        outShape = Shape { wantC, h, w };
        break;
    default:
        outShape = Shape { h, w };
        break;
    }
    Tensor t;
    try {
        t = Tensor(outShape);
    } catch (const std::exception& e) {
        return fail(QStringLiteral("cannot allocate %1: %2").arg(shapeText(outShape), QString::fromUtf8(e.what())));
    }
    float* out = t.data();
    const int64_t plane = h * w;
    for (int64_t y = 0; y < h; ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(rgb.constScanLine(int(y)));
        for (int64_t x = 0; x < w; ++x) {
            const QRgb p = line[x];
            const int64_t at = y * w + x;
            if (grayscale) {
                out[at] = float(qGray(p)) / 255.0f;
            } else {
                out[at] = float(qRed(p)) / 255.0f;
                out[plane + at] = float(qGreen(p)) / 255.0f;
                out[2 * plane + at] = float(qBlue(p)) / 255.0f;
            }
        }
    }
    const int64_t imageSize = wantC * plane;
    for (int64_t ch = 0; ch < wantC; ++ch) {
        float* v = out + ch * plane;
        const float m = float(mean[size_t(ch)]);
        const float s = float(std[size_t(ch)]);
        for (int64_t i = 0; i < plane; ++i) {
            if (invert) v[i] = 1.0f - v[i];
            if (normalize) v[i] = (v[i] - m) / s;
        }
    }
    for (int64_t k = 1; k < n; ++k)
        std::copy(out, out + imageSize, out + k * imageSize);
    return t;
}

InputResult makeInputTensor(const InputSource& source, const Shape& shape, const Tensor& defaultTensor,
    const Tensor& drawing, const QString& inputName, DType dtype)
{
    using Kind = InputSource::Kind;
    auto fail = [&](const QString& why, InputProblem problem = InputProblem::NoValue) {
        return InputResult { Tensor(), inputName.isEmpty() ? why : QStringLiteral("input '%1': %2").arg(inputName, why),
            problem };
    };
    const QString needs
        = inputName.isEmpty() ? QStringLiteral("the input needs") : QStringLiteral("input '%1' needs").arg(inputName);
    const QString fileName = QFileInfo(source.file).fileName();

    try {
        switch (source.kind) {
        case Kind::Default:
            if (!defaultTensor.defined()) return fail(QStringLiteral("the model has no default value for this input"));
            return { defaultTensor, QString() };
        case Kind::Ones:
        case Kind::Zeros:
        case Kind::Uniform:
        case Kind::Normal: {
            if (!shape.known())
                return fail(
                    QStringLiteral("shape %1 is not fully known; choose a .npy or image file").arg(shapeText(shape)));
            if (shape.size() > kMaxImageElements)
                return fail(QStringLiteral("shape %1 is too large").arg(shapeText(shape)));
            if (source.kind == Kind::Ones) return { Tensor::ones(shape), QString() };
            if (source.kind == Kind::Zeros) return { Tensor::zeros(shape), QString() };
            Generator gen(source.seed);
            if (source.kind == Kind::Uniform) {
                if (!std::isfinite(source.lo) || !std::isfinite(source.hi) || source.lo > source.hi)
                    return fail(QStringLiteral("uniform: low %1 is above high %2").arg(num(source.lo), num(source.hi)));
                return { Tensor::uniform(shape, float(source.lo), float(source.hi), &gen), QString() };
            }
            if (!std::isfinite(source.mean) || !std::isfinite(source.std) || source.std < 0)
                return fail(QStringLiteral("normal: std %1 must be 0 or more").arg(num(source.std)));
            return { Tensor::normal(shape, float(source.mean), float(source.std), &gen), QString() };
        }
        case Kind::NpyFile: {
            if (source.file.isEmpty()) return fail(QStringLiteral("no .npy file chosen"));
            if (!QFileInfo::exists(source.file))
                return fail(QStringLiteral("%1: no such file").arg(fileName), InputProblem::BadFile);
            Tensor t;
            try {
                t = readNpy(QFile::encodeName(source.file).toStdString());
            } catch (const std::exception& e) {
                return fail(shortenPath(QString::fromUtf8(e.what()), source.file), InputProblem::BadFile);
            }
            // A model that does not record the input's shape takes the file's.
            if (shape.ndim() > 0 && !shapeFits(t.shape(), shape))
                return { Tensor(),
                    QStringLiteral("%1: shape %2 but %3 %4").arg(fileName, shapeText(t.shape()), needs, shapeText(shape)),
                    InputProblem::WrongShape };
            return { t.dtype() == dtype ? t : t.astype(dtype), QString() };
        }
        case Kind::ImageFile: {
            if (source.file.isEmpty()) return fail(QStringLiteral("no image file chosen"));
            QString error;
            const QImage image = readImageFile(source.file, &error);
            if (image.isNull()) return fail(error, InputProblem::BadFile);
            Tensor t = imageToTensor(
                image, shape, source.grayscale, source.normalize, source.imgMean, source.imgStd, source.invert, &error);
            if (!t.defined()) return fail(QStringLiteral("%1: %2").arg(fileName, error), InputProblem::WrongShape);
            return { t, QString() };
        }
        case Kind::Drawing: {
            if (!drawingFits(shape))
                return fail(QStringLiteral("the drawing pad needs a single one-channel image, not shape %1")
                                .arg(shapeText(shape)));
            if (!drawing.defined()) return fail(QStringLiteral("the drawing pad has no picture"));
            if (shapeFits(drawing.shape(), shape)) return { drawing, QString() };
            if (shape.known() && drawing.size() == shape.size()) return { drawing.reshape(shape), QString() };
            return { Tensor(),
                QStringLiteral("drawing pad: shape %1 but %2 %3")
                    .arg(shapeText(drawing.shape()), needs, shapeText(shape)) };
        }
        }
    } catch (const std::exception& e) {
        return fail(QString::fromUtf8(e.what()));
    }
    return fail(QStringLiteral("unknown input source"));
}

QVariantMap toVariant(const InputSource& s)
{
    auto list = [](const std::array<double, 3>& a) { return QVariantList { a[0], a[1], a[2] }; };
    return {
        { QStringLiteral("kind"), kindKey(s.kind) },
        { QStringLiteral("seed"), QString::number(s.seed) },
        { QStringLiteral("lo"), s.lo },
        { QStringLiteral("hi"), s.hi },
        { QStringLiteral("mean"), s.mean },
        { QStringLiteral("std"), s.std },
        { QStringLiteral("file"), s.file },
        { QStringLiteral("grayscale"), s.grayscale },
        { QStringLiteral("normalize"), s.normalize },
        { QStringLiteral("imgMean"), list(s.imgMean) },
        { QStringLiteral("imgStd"), list(s.imgStd) },
        { QStringLiteral("invert"), s.invert },
    };
}

InputSource inputSourceFromVariant(const QVariantMap& map)
{
    InputSource s;
    if (auto k = kindFromKey(map.value(QStringLiteral("kind")).toString())) s.kind = *k;
    bool ok = false;
    if (const qulonglong seed = map.value(QStringLiteral("seed")).toString().toULongLong(&ok); ok) s.seed = seed;
    auto readDouble = [&](const char* key, double& into) {
        bool good = false;
        const double v = map.value(QLatin1String(key)).toDouble(&good);
        if (good && std::isfinite(v)) into = v;
    };
    readDouble("lo", s.lo);
    readDouble("hi", s.hi);
    readDouble("mean", s.mean);
    readDouble("std", s.std);
    auto readBool = [&](const char* key, bool& into) {
        if (map.contains(QLatin1String(key))) into = map.value(QLatin1String(key)).toBool();
    };
    readBool("grayscale", s.grayscale);
    readBool("normalize", s.normalize);
    readBool("invert", s.invert);
    s.file = map.value(QStringLiteral("file")).toString();
    auto readTriple = [&](const char* key, std::array<double, 3>& into) {
        const QVariantList l = map.value(QLatin1String(key)).toList();
        if (l.size() != 3) return;
        std::array<double, 3> v {};
        for (size_t i = 0; i < 3; ++i) {
            bool good = false;
            v[i] = l[int(i)].toDouble(&good);
            if (!good || !std::isfinite(v[i])) return;
        }
        into = v;
    };
    readTriple("imgMean", s.imgMean);
    readTriple("imgStd", s.imgStd);
    return s;
}

} // namespace opscope::gui
