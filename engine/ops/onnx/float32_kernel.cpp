#include "ops/onnx/float32_kernel.h"

#include "core/error.h"
#include "tensor/tensor.h"

namespace opscope {

Float32Kernel::Float32Kernel(std::string op, std::unique_ptr<Kernel> fast, std::unique_ptr<Kernel> slow, FusedInto fusedInto)
    : m_op(std::move(op))
    , m_fast(std::move(fast))
    , m_slow(std::move(slow))
    , m_fusedInto(fusedInto)
{
}

void Float32Kernel::run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx)
{
    const DType type = in[0]->dtype();
    if (type == DType::Float32) {
        floatKernel().run(in, out, ctx);
        return;
    }
    if (m_fused && m_fusedInto == FusedInto::Fast)
        throw UsageError(m_op + " fused with the ops after it runs on float32 only, not " + dtypeName(type));
    m_slow->run(in, out, ctx);
}

bool Float32Kernel::setPostOps(std::span<const PostOp> ops)
{
    const bool taken = (m_fusedInto == FusedInto::Fast ? m_fast : m_slow)->setPostOps(ops);
    m_fused = taken && !ops.empty();
    return taken;
}

} // namespace opscope
