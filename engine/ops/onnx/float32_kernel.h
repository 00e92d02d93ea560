#pragma once

#include "ops/op.h"

#include <memory>
#include <string>

namespace opscope {

/// Which of a Float32Kernel's two kernels takes the post-ops the executor fuses into its op.
enum class FusedInto {
    Fast, ///< the float32 kernel (oneDNN post-ops): another type cannot then run fused
    Slow, ///< the kernel for every type: once fused, the op always runs on it
};

/// An ONNX op whose float32 case runs on one of the engine's kernels (oneDNN's where it applies,
/// in that kernel's layouts) and every other type on the op's own loop: ONNX ops take types the
/// engine's kernels do not, and a tensor's type is known only when it runs, so the choice is made
/// at each call. Layout questions go to the kernel that float32 runs on.
class Float32Kernel final : public Kernel {
public:
    Float32Kernel(std::string op, std::unique_ptr<Kernel> fast, std::unique_ptr<Kernel> slow, FusedInto fusedInto);

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override;
    const char* backend() const override { return floatKernel().backend(); }
    bool setPostOps(std::span<const PostOp> ops) override;
    NativeLayout nativeOutput() const override { return floatKernel().nativeOutput(); }
    NativeLayout nativeInput(size_t index) const override { return floatKernel().nativeInput(index); }
    void setNative(std::span<const bool> inputs, bool output) override { floatKernel().setNative(inputs, output); }
    std::vector<NativeLayout> nativeChoices() const override { return floatKernel().nativeChoices(); }
    void chooseNative(int input, int output) override { floatKernel().chooseNative(input, output); }
    bool outputIn(const NativeLayout& layout) override { return floatKernel().outputIn(layout); }
    bool favoursBlocked() const override { return floatKernel().favoursBlocked(); }
    void computeBlocked(bool on) override { floatKernel().computeBlocked(on); }
    std::optional<PostOp> asPostOp() const override { return m_fast->asPostOp(); }

private:
    Kernel& floatKernel() const { return m_fused && m_fusedInto == FusedInto::Slow ? *m_slow : *m_fast; }

    std::string m_op;
    std::unique_ptr<Kernel> m_fast, m_slow;
    FusedInto m_fusedInto;
    bool m_fused = false; // post-ops taken (setPostOps)
};

} // namespace opscope
