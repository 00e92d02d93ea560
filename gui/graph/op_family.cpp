#include "gui/graph/op_family.h"

#include <algorithm>

#include <QHash>
#include <QRegularExpression>
#include <QStringList>

namespace opscope::gui {

namespace {

QHash<QString, QString> buildExactFamilies()
{
    QHash<QString, QString> f;
    auto add = [&f](const QString& family, const QStringList& ops) {
        for (const QString& op : ops)
            f.insert(op, family);
    };
    add("conv", { "Convolution", "Deconvolution", "Convolution_v1", "_npx_convolution", "_npx_deconvolution" });
    add("dense",
        { "FullyConnected", "_sparse_FullyConnected", "dot", "batch_dot", "_sparse_dot", "linalg_gemm", "linalg_gemm2",
            "_npx_fully_connected", "_np_dot", "RNN" });
    add("activation",
        { "Activation", "relu", "sigmoid", "tanh", "LeakyReLU", "softmax", "log_softmax", "softmin",
            "SoftmaxActivation", "SoftmaxOutput", "Softmax", "softsign", "hard_sigmoid", "elu", "selu", "gelu",
            "_npx_relu", "_npx_sigmoid", "_npx_activation", "_npx_leaky_relu", "_npx_softmax", "_npx_log_softmax",
            "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput", "SVMOutput" });
    add("pool", { "Pooling", "Pooling_v1", "_npx_pooling", "ROIPooling", "UpSampling", "BilinearResize2D" });
    add("norm",
        { "BatchNorm", "BatchNorm_v1", "LayerNorm", "InstanceNorm", "GroupNorm", "L2Normalization", "LRN",
            "SyncBatchNorm", "_npx_batch_norm", "_npx_layer_norm", "_contrib_SyncBatchNorm" });
    add("shape",
        { "Flatten", "flatten", "Reshape", "reshape", "reshape_like", "transpose", "expand_dims", "squeeze", "Concat",
            "concat", "stack", "SliceChannel", "split", "slice", "slice_axis", "slice_like", "crop", "Crop", "tile",
            "repeat", "pad", "Pad", "SwapAxis", "swapaxes", "broadcast_to", "broadcast_like", "broadcast_axis", "take",
            "pick", "gather_nd", "one_hot", "where", "_copy", "identity", "BlockGrad", "stop_gradient", "Cast", "cast",
            "zeros_like", "ones_like", "shape_array", "size_array", "space_to_depth", "depth_to_space", "SequenceMask",
            "SequenceLast", "SequenceReverse" });
    add("reduce",
        { "sum", "mean", "max", "min", "prod", "nansum", "nanprod", "norm", "argmax", "argmin", "sum_axis", "max_axis",
            "min_axis", "topk", "sort", "argsort" });
    add("embedding", { "Embedding", "_npx_embedding", "_contrib_SparseEmbedding" });
    add("dropout", { "Dropout", "_npx_dropout" });
    add("elemwise",
        { "abs", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "cbrt", "square", "negative",
            "reciprocal", "sign", "round", "floor", "ceil", "trunc", "fix", "clip", "sin", "cos", "tan", "arcsin",
            "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "erf", "gamma", "gammaln", "add_n",
            "ElementWiseSum", "maximum", "minimum", "_add", "_sub", "_mul", "_div", "_plus", "_minus", "_mod", "_power",
            "_maximum", "_minimum", "_grad_add" });
    return f;
}

const QHash<QString, QString>& exactFamilies()
{
    static const QHash<QString, QString> families = buildExactFamilies();
    return families;
}

// "(5, 5)" gives "5×5"; "[2]" gives "2".
QString tupleText(const std::string& raw)
{
    static const QRegularExpression noise(QStringLiteral("[\\(\\)\\[\\]\\s]"));
    return QString::fromStdString(raw).remove(noise).split(QLatin1Char(','), Qt::SkipEmptyParts).join(QChar(0x00d7));
}

bool truthy(const std::string& raw)
{
    return raw == "True" || raw == "true" || raw == "1";
}

const std::string* attr(const Node& node, const char* key)
{
    const auto it = node.attrs.find(key);
    return it == node.attrs.end() ? nullptr : &it->second;
}

} // namespace

QString opFamily(const QString& op)
{
    if (op.isEmpty() || op == QLatin1String("null")) return QStringLiteral("input");
    const auto it = exactFamilies().constFind(op);
    if (it != exactFamilies().constEnd()) return it.value();
    if (op.startsWith(QLatin1String("elemwise_")) || op.startsWith(QLatin1String("broadcast_"))
        || op.endsWith(QLatin1String("_scalar")) || op.endsWith(QLatin1String("Scalar"))
        || op.startsWith(QLatin1String("_np_")) || op.startsWith(QLatin1String("_npi_")))
        return QStringLiteral("elemwise");
    const QString lower = op.toLower();
    if (lower.contains(QLatin1String("conv"))) return QStringLiteral("conv");
    if (lower.contains(QLatin1String("norm"))) return QStringLiteral("norm");
    if (lower.contains(QLatin1String("pool"))) return QStringLiteral("pool");
    if (lower.contains(QLatin1String("softmax")) || lower.contains(QLatin1String("relu")))
        return QStringLiteral("activation");
    return QStringLiteral("other");
}

QColor familyColor(const QString& family)
{
    static const QHash<QString, QColor> colors {
        { "conv", QColor(0x3f, 0x6f, 0xb0) },
        { "dense", QColor(0x55, 0x5f, 0xb0) },
        { "activation", QColor(0xb0, 0x55, 0x40) },
        { "pool", QColor(0x4a, 0x86, 0x4a) },
        { "norm", QColor(0x3b, 0x87, 0x78) },
        { "shape", QColor(0x8c, 0x6d, 0x4c) },
        { "elemwise", QColor(0x76, 0x5c, 0xa6) },
        { "reduce", QColor(0xa6, 0x7c, 0x2e) },
        { "embedding", QColor(0xa6, 0x4c, 0x7c) },
        { "dropout", QColor(0x6a, 0x70, 0x84) },
        { "input", QColor(0x5f, 0x66, 0x6d) },
        { "parameter", QColor(0x9a, 0x9f, 0xa5) },
        { "block", QColor(0x7d, 0x77, 0x66) },
    };
    return colors.value(family, QColor(0x80, 0x80, 0x80));
}

QColor familyFill(const QString& family)
{
    const QColor accent = familyColor(family);
    // Mix with white: 18% accent keeps the hue readable behind dark text.
    constexpr double kAccentShare = 0.18;
    auto mix = [](int c) { return static_cast<int>(255 - (255 - c) * kAccentShare); };
    return QColor(mix(accent.red()), mix(accent.green()), mix(accent.blue()));
}

QString opSummary(const Node& node)
{
    const std::string& op = node.op;
    if (op == "Activation" || op == "LeakyReLU") {
        const std::string* type = attr(node, "act_type");
        return type ? QString::fromStdString(*type) : (op == "LeakyReLU" ? QStringLiteral("leaky") : QString());
    }
    if (op == "Pooling") {
        const std::string* type = attr(node, "pool_type");
        const QString kind = type ? QString::fromStdString(*type) : QStringLiteral("max");
        const std::string* global = attr(node, "global_pool");
        if (global && truthy(*global)) return QStringLiteral("global ") + kind;
        const std::string* kernel = attr(node, "kernel");
        return kernel ? kind + QLatin1Char(' ') + tupleText(*kernel) : kind;
    }
    if (op == "Convolution" || op == "Deconvolution") {
        const std::string* kernel = attr(node, "kernel");
        QString text = kernel ? tupleText(*kernel) : QString();
        if (const std::string* stride = attr(node, "stride")) {
            const QStringList parts = tupleText(*stride).split(QChar(0x00d7));
            const bool unit = std::all_of(parts.begin(), parts.end(), [](const QString& p) { return p == "1"; });
            if (!parts.isEmpty() && !unit)
                text += QStringLiteral(" /")
                    + (parts.count(parts.first()) == parts.size() ? parts.first() : parts.join(QChar(0x00d7)));
        }
        return text;
    }
    if (op == "Dropout") {
        const std::string* p = attr(node, "p");
        return p ? QStringLiteral("p=") + QString::fromStdString(*p) : QString();
    }
    if (QString::fromStdString(op).endsWith(QLatin1String("_scalar"))) {
        const std::string* scalar = attr(node, "scalar");
        return scalar ? QString::fromStdString(*scalar) : QString();
    }
    return {};
}

} // namespace opscope::gui
