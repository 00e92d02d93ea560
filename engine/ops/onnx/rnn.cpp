// ONNX's recurrent layers: RNN, GRU (linear_before_reset) and LSTM (peepholes, input_forget),
// forward, reverse or bidirectional, with sequence_lens, initial states, clip, the activations
// attribute (and their alpha/beta) and both layouts. Inputs X=0, W=1, R=2, B=3, sequence_lens=4,
// initial_h=5, initial_c=6, P=7; outputs Y, Y_h, Y_c, each optional. Computed in double.

#include "ops/onnx/onnx_kernels.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

#include <cmath>
#include <functional>

namespace opscope {

using namespace onnx_ops;

namespace {

enum class Cell { Rnn, Gru, Lstm };

using Activation = std::function<double(double)>;

struct RnnParams : OnnxParams {
    Cell cell = Cell::Rnn;
    int64_t hidden = 0;
    int dirs = 1;
    bool reverse = false; // direction "reverse"
    std::vector<std::string> activations;
    std::vector<double> alphas, betas;
    double clip = 0;
    bool inputForget = false, linearBeforeReset = false;
    int64_t layout = 0;
    int gates() const { return cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1; }
    int functionsPerDirection() const { return cell == Cell::Lstm ? 3 : cell == Cell::Gru ? 2 : 1; }
};

// The activation functions of each direction, their alpha/beta taken in order as ONNX Runtime does.
std::vector<Activation> activationsOf(const RnnParams& p)
{
    std::vector<std::string> names = p.activations;
    if (names.empty()) {
        const std::vector<std::string> one = p.cell == Cell::Lstm ? std::vector<std::string> { "Sigmoid", "Tanh", "Tanh" }
            : p.cell == Cell::Gru                                 ? std::vector<std::string> { "Sigmoid", "Tanh" }
                                                                  : std::vector<std::string> { "Tanh" };
        for (int d = 0; d < p.dirs; ++d)
            names.insert(names.end(), one.begin(), one.end());
    }
    size_t ai = 0, bi = 0;
    auto alpha = [&](double fallback) { return ai < p.alphas.size() ? p.alphas[ai++] : fallback; };
    auto beta = [&](double fallback) { return bi < p.betas.size() ? p.betas[bi++] : fallback; };
    std::vector<Activation> out;
    for (std::string n : names) {
        for (char& c : n)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (n == "relu") out.push_back([](double x) { return x > 0 ? x : 0; });
        else if (n == "tanh") out.push_back([](double x) { return std::tanh(x); });
        else if (n == "sigmoid") out.push_back([](double x) { return 1 / (1 + std::exp(-x)); });
        else if (n == "affine") {
            const double a = alpha(1), b = beta(0);
            out.push_back([a, b](double x) { return a * x + b; });
        } else if (n == "leakyrelu") {
            const double a = alpha(0.01);
            out.push_back([a](double x) { return x >= 0 ? x : a * x; });
        } else if (n == "thresholdedrelu") {
            const double a = alpha(1);
            out.push_back([a](double x) { return x > a ? x : 0; });
        } else if (n == "scaledtanh") {
            const double a = alpha(1), b = beta(1);
            out.push_back([a, b](double x) { return a * std::tanh(b * x); });
        } else if (n == "hardsigmoid") {
            const double a = alpha(0.2), b = beta(0.5);
            out.push_back([a, b](double x) { return std::max(0.0, std::min(1.0, a * x + b)); });
        } else if (n == "elu") {
            const double a = alpha(1);
            out.push_back([a](double x) { return x >= 0 ? x : a * (std::exp(x) - 1); });
        } else if (n == "softsign") out.push_back([](double x) { return x / (1 + std::fabs(x)); });
        else if (n == "softplus") out.push_back([](double x) { return std::log1p(std::exp(x)); });
        else throw AttributeError("activation '" + n + "' is not one of ONNX's");
    }
    if (static_cast<int>(out.size()) != p.functionsPerDirection() * p.dirs)
        throw AttributeError(std::to_string(out.size()) + " activations for " + std::to_string(p.dirs) + " direction(s); "
            + std::to_string(p.functionsPerDirection()) + " each are needed");
    return out;
}

void inferRnn(const OpParams& params, std::vector<Shape>& in, std::vector<Shape>& out, const char* op)
{
    const auto& p = paramsAs<RnnParams>(params);
    const Shape& x = in[0];
    if (x.ndim() != 3) throw ShapeError(std::string(op) + ": X " + x.str() + " must be 3-D");
    const int64_t seq = p.layout ? x[1] : x[0], batch = p.layout ? x[0] : x[1], inputSize = x[2];
    const int64_t G = p.gates(), H = p.hidden;
    const Shape w({ p.dirs, G * H, inputSize }), r({ p.dirs, G * H, H });
    if (in[1] != w) shapeMismatch(std::string(op) + " W", w, in[1]);
    if (in[2] != r) shapeMismatch(std::string(op) + " R", r, in[2]);
    const Shape state = p.layout ? Shape({ batch, p.dirs, H }) : Shape({ p.dirs, batch, H });
    const auto check = [&](int slot, const Shape& want, const char* what) {
        const int k = p.inputIndex(slot);
        if (k >= 0 && in[static_cast<size_t>(k)] != want) shapeMismatch(std::string(op) + " " + what, want, in[static_cast<size_t>(k)]);
    };
    check(3, Shape({ p.dirs, 2 * G * H }), "B");
    check(4, Shape({ batch }), "sequence_lens");
    check(5, state, "initial_h");
    check(6, state, "initial_c");
    check(7, Shape({ p.dirs, 3 * H }), "P");
    out[0] = p.layout ? Shape({ batch, seq, p.dirs, H }) : Shape({ seq, p.dirs, batch, H });
    for (size_t k = 1; k < out.size(); ++k)
        out[k] = state;
}

void runRnn(const RnnParams& p, std::span<const Tensor* const> in, std::span<Tensor* const> out)
{
    const std::vector<Activation> acts = activationsOf(p);
    const Shape& xs = in[0]->shape();
    const int64_t seq = p.layout ? xs[1] : xs[0], batch = p.layout ? xs[0] : xs[1], I = xs[2];
    const int64_t H = p.hidden, G = p.gates();
    const TensorView X = in[0]->view(), W = in[1]->view(), R = in[2]->view();
    auto opt = [&](int slot) -> const Tensor* {
        const int k = p.inputIndex(slot);
        return k >= 0 ? in[static_cast<size_t>(k)] : nullptr;
    };
    const Tensor *B = opt(3), *lens = opt(4), *h0 = opt(5), *c0 = opt(6), *P = opt(7);
    auto xAt = [&](int64_t t, int64_t b, int64_t i) { return X.valueAt(p.layout ? (b * seq + t) * I + i : (t * batch + b) * I + i); };
    auto stateIndex = [&](int d, int64_t b, int64_t h) { return p.layout ? (b * p.dirs + d) * H + h : (d * batch + b) * H + h; };
    std::vector<double> Y(static_cast<size_t>(seq * p.dirs * batch * H), 0.0);
    std::vector<double> Yh(static_cast<size_t>(p.dirs * batch * H), 0.0), Yc(Yh.size(), 0.0);
    const double clip = p.clip;
    auto clipped = [clip](double v) { return clip > 0 ? std::max(-clip, std::min(clip, v)) : v; };
    for (int d = 0; d < p.dirs; ++d) {
        const bool backward = p.dirs == 2 ? d == 1 : p.reverse;
        const Activation& f = acts[static_cast<size_t>(d * p.functionsPerDirection())];
        const Activation& g = p.functionsPerDirection() > 1 ? acts[static_cast<size_t>(d * p.functionsPerDirection() + 1)] : f;
        const Activation& h = p.functionsPerDirection() > 2 ? acts[static_cast<size_t>(d * p.functionsPerDirection() + 2)] : f;
        auto w = [&](int64_t row, int64_t col) { return W.valueAt((d * G * H + row) * I + col); };
        auto r = [&](int64_t row, int64_t col) { return R.valueAt((d * G * H + row) * H + col); };
        auto wb = [&](int64_t row) { return B ? B->view().valueAt(d * 2 * G * H + row) : 0.0; };
        auto rb = [&](int64_t row) { return B ? B->view().valueAt(d * 2 * G * H + G * H + row) : 0.0; };
        auto peep = [&](int k, int64_t j) { return P ? P->view().valueAt(d * 3 * H + k * H + j) : 0.0; };
        for (int64_t b = 0; b < batch; ++b) {
            const int64_t len = lens ? static_cast<int64_t>(lens->view().valueAt(b)) : seq;
            std::vector<double> hs(static_cast<size_t>(H)), cs(static_cast<size_t>(H));
            for (int64_t j = 0; j < H; ++j) {
                hs[static_cast<size_t>(j)] = h0 ? h0->view().valueAt(stateIndex(d, b, j)) : 0.0;
                cs[static_cast<size_t>(j)] = c0 ? c0->view().valueAt(stateIndex(d, b, j)) : 0.0;
            }
            std::vector<double> xw(static_cast<size_t>(G * H)), hr(static_cast<size_t>(G * H)), next(static_cast<size_t>(H));
            for (int64_t s = 0; s < std::min(len, seq); ++s) {
                const int64_t t = backward ? len - 1 - s : s;
                for (int64_t row = 0; row < G * H; ++row) {
                    double a = wb(row), c = rb(row);
                    for (int64_t i = 0; i < I; ++i)
                        a += xAt(t, b, i) * w(row, i);
                    for (int64_t k = 0; k < H; ++k)
                        c += hs[static_cast<size_t>(k)] * r(row, k);
                    xw[static_cast<size_t>(row)] = a;
                    hr[static_cast<size_t>(row)] = c;
                }
                std::vector<double> resetGate;
                if (p.cell == Cell::Gru && !p.linearBeforeReset)
                    for (int64_t k = 0; k < H; ++k)
                        resetGate.push_back(f(clipped(xw[static_cast<size_t>(H + k)] + hr[static_cast<size_t>(H + k)])));
                for (int64_t j = 0; j < H; ++j) {
                    const size_t u = static_cast<size_t>(j);
                    if (p.cell == Cell::Rnn) {
                        next[u] = f(clipped(xw[u] + hr[u]));
                    } else if (p.cell == Cell::Gru) { // gates z, r, h
                        const double z = f(clipped(xw[u] + hr[u]));
                        const double rr = f(clipped(xw[static_cast<size_t>(H + j)] + hr[static_cast<size_t>(H + j)]));
                        double cand;
                        if (p.linearBeforeReset) {
                            cand = g(clipped(xw[static_cast<size_t>(2 * H + j)] + rr * hr[static_cast<size_t>(2 * H + j)]));
                        } else { // the reset gate scales the state before R_h multiplies it
                            double rh = rb(2 * H + j);
                            for (int64_t k = 0; k < H; ++k)
                                rh += resetGate[static_cast<size_t>(k)] * hs[static_cast<size_t>(k)] * r(2 * H + j, k);
                            cand = g(clipped(xw[static_cast<size_t>(2 * H + j)] + rh));
                        }
                        next[u] = (1 - z) * cand + z * hs[u];
                    } else { // gates i, o, f, c
                        const double c = cs[u];
                        const double ig = f(clipped(xw[u] + hr[u] + peep(0, j) * c));
                        const double fg = p.inputForget ? 1 - ig : f(clipped(xw[static_cast<size_t>(2 * H + j)] + hr[static_cast<size_t>(2 * H + j)] + peep(2, j) * c));
                        const double cand = g(clipped(xw[static_cast<size_t>(3 * H + j)] + hr[static_cast<size_t>(3 * H + j)]));
                        const double cNew = fg * c + ig * cand;
                        const double og = f(clipped(xw[static_cast<size_t>(H + j)] + hr[static_cast<size_t>(H + j)] + peep(1, j) * cNew));
                        cs[u] = cNew;
                        next[u] = og * h(cNew);
                    }
                }
                hs = next;
                for (int64_t j = 0; j < H; ++j) {
                    const int64_t at = p.layout ? ((b * seq + t) * p.dirs + d) * H + j : ((t * p.dirs + d) * batch + b) * H + j;
                    Y[static_cast<size_t>(at)] = hs[static_cast<size_t>(j)];
                }
            }
            for (int64_t j = 0; j < H; ++j) {
                Yh[static_cast<size_t>(stateIndex(d, b, j))] = hs[static_cast<size_t>(j)];
                Yc[static_cast<size_t>(stateIndex(d, b, j))] = cs[static_cast<size_t>(j)];
            }
        }
    }
    const std::vector<double>* results[] = { &Y, &Yh, &Yc };
    for (size_t k = 0; k < out.size() && k < 3; ++k)
        dispatchType(out[k]->dtype(), [&](auto tag) {
            using T = decltype(tag);
            T* o = out[k]->dataAs<T>();
            for (size_t i = 0; i < results[k]->size(); ++i)
                o[i] = fromDouble<T>((*results[k])[i]);
        });
}

void addRnn(OpRegistry& r, const char* name, Cell cell)
{
    OpDef def = onnxOp(name);
    const std::string op = name;
    def.parse = [op, cell](const AttrMap& attrs) {
        auto p = std::make_shared<RnnParams>();
        OnnxAttrs a(attrs, op);
        a.fillBase(*p, 3, cell == Cell::Lstm ? 8 : 6, cell == Cell::Lstm ? 3 : 2);
        p->cell = cell;
        p->hidden = a.getInt("hidden_size");
        if (p->hidden < 1) a.fail("hidden_size", "must be positive");
        const std::string dir = a.getString("direction", "forward");
        if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
            a.fail("direction", "expected forward, reverse or bidirectional");
        p->dirs = dir == "bidirectional" ? 2 : 1;
        p->reverse = dir == "reverse";
        const std::string list = a.getString("activations", "");
        std::string item;
        for (char c : list) {
            if (c == '[' || c == ']' || c == ' ') continue;
            if (c == ',') {
                if (!item.empty()) p->activations.push_back(item);
                item.clear();
            } else {
                item += c;
            }
        }
        if (!item.empty()) p->activations.push_back(item);
        p->alphas = a.getFloats("activation_alpha", {});
        p->betas = a.getFloats("activation_beta", {});
        p->clip = a.getFloat("clip", 0);
        p->inputForget = a.getInt("input_forget", 0) != 0;
        p->linearBeforeReset = a.getInt("linear_before_reset", 0) != 0;
        p->layout = a.getInt("layout", 0);
        try {
            activationsOf(*p);
        } catch (const AttributeError& e) {
            a.fail("activations", e.what());
        }
        return p;
    };
    def.inferShape = [op](const OpParams& p, std::vector<Shape>& in, std::vector<Shape>& out) { inferRnn(p, in, out, op.c_str()); };
    def.inferType = [op](const OpParams& params, std::span<const DType> in, std::span<DType> out) {
        const auto& p = paramsAs<RnnParams>(params);
        requireType(in[0], kFloatTypes, op, 0);
        for (size_t k = 1; k < in.size(); ++k)
            if (static_cast<int>(k) != p.inputIndex(4)) requireSameType(in, 0, static_cast<int>(k), op);
        std::fill(out.begin(), out.end(), in[0]);
    };
    def.reference = [](const OpParams& p, std::span<const Shape>, std::span<const Shape>) {
        return lambdaKernel(paramsAs<RnnParams>(p),
            [](const RnnParams& q, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) { runRnn(q, in, out); });
    };
    addOnnxOp(r, std::move(def));
}

} // namespace

void registerOnnxRnn(OpRegistry& r)
{
    addRnn(r, "RNN", Cell::Rnn);
    addRnn(r, "GRU", Cell::Gru);
    addRnn(r, "LSTM", Cell::Lstm);
}

} // namespace opscope
