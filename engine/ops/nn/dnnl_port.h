#pragma once

// Private to the Convolution kernel's sources: a tensor as the user holds it and as a oneDNN
// primitive reads or writes it.

#include "ops/dnnl/dnnl_common.h"
#include "ops/nn/channels_last.h"
#include "tensor/allocator.h"

#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

namespace opscope::dnnlutil {

// One tensor as the user holds it (plain, its buffer bound on each run) and as the primitive reads
// or writes it: the same memory when the formats agree; else a buffer of our own, filled (or
// emptied) by our channels-last transposition when that is the format asked for, by a oneDNN
// reorder otherwise. A native port (Kernel::setNative) takes the user's buffer as already being in
// the primitive's format: the buffer is bound to the inner memory and nothing is converted. A
// buffer of its own is allocated at the first run, not when the kernel is made: a network's
// kernels are all made before the first runs, and most ports' buffers are dropped again when the
// executor keeps their tensors native.
class Port {
    using memory = dnnl::memory;

public:
    /// `target`: the primitive's memory to fill (another port's inner memory) instead of one of
    /// its own; only when the formats differ.
    Port(const memory::desc& plain, const memory::desc& wanted, bool intoPrimitive, const memory* target = nullptr,
        bool native = false)
        : m_user(plain, cpuEngine(), DNNL_MEMORY_NONE)
        , m_intoPrimitive(intoPrimitive)
    {
        if (native && wanted != plain) {
            m_inner = memory(wanted, cpuEngine(), DNNL_MEMORY_NONE);
            m_native = true;
            return;
        }
        if (wanted == plain) {
            m_inner = m_user;
            return;
        }
        m_inner = target ? *target : memory(wanted, cpuEngine(), DNNL_MEMORY_NONE);
        if (!target) m_ownBytes = wanted.get_size();
        const memory::dims dims = plain.dims();
        const bool spatial = dims.size() == 3 || dims.size() == 4;
        const auto lastTag = dims.size() == 3 ? memory::format_tag::acb : memory::format_tag::acdb;
        const auto plainTag = dims.size() == 3 ? memory::format_tag::abc : memory::format_tag::abcd;
        if (spatial && plain == memory::desc(dims, memory::data_type::f32, plainTag)
            && wanted == memory::desc(dims, memory::data_type::f32, lastTag)) {
            m_conversion = Conversion::ChannelsLast;
            m_batch = dims[0];
            m_channels = dims[1];
            m_positions = dims.size() == 3 ? dims[2] : dims[2] * dims[3];
            return;
        }
        m_conversion = Conversion::Reorder;
        m_reorder = intoPrimitive ? dnnl::reorder(m_user, m_inner) : dnnl::reorder(m_inner, m_user);
        m_reorderArgs = { { DNNL_ARG_FROM, intoPrimitive ? m_user : m_inner },
            { DNNL_ARG_TO, intoPrimitive ? m_inner : m_user } };
    }

    Port(const Port&) = delete;
    Port& operator=(const Port&) = delete;
    ~Port() { detail::freeBuffer(m_own, m_ownBytes); }

    /// What the primitive reads or writes (its buffer there once bound).
    const memory& inner() const { return m_inner; }
    bool converts() const { return m_conversion != Conversion::None; }
    /// The values in the user's buffer: more than the tensor's when a native layout pads it.
    int64_t userElements() const
    {
        return static_cast<int64_t>((m_native ? m_inner : m_user).get_desc().get_size() / sizeof(float));
    }

    /// Points the port at the tensor's buffer; the first time, allocates its own buffer where it
    /// has one (ResourceError naming the bytes when there is no memory for it).
    void bind(float* data)
    {
        m_data = data;
        (m_native ? m_inner : m_user).set_data_handle(data);
        if (m_ownBytes != 0 && !m_own) {
            m_own = detail::allocateBuffer(m_ownBytes);
            m_inner.set_data_handle(m_own);
        }
    }

    /// User -> primitive for inputs, primitive -> user for outputs.
    void convert(dnnl::stream& s)
    {
        if (m_conversion == Conversion::Reorder) {
            m_reorder.execute(s, m_reorderArgs);
        } else if (m_conversion == Conversion::ChannelsLast) {
            auto* inner = static_cast<float*>(m_inner.get_data_handle());
            if (m_intoPrimitive)
                toChannelsLast(m_data, inner, m_batch, m_channels, m_positions);
            else
                toChannelsFirst(inner, m_data, m_batch, m_channels, m_positions);
        }
    }

private:
    enum class Conversion { None, ChannelsLast, Reorder };

    memory m_user;
    memory m_inner;
    bool m_intoPrimitive;
    bool m_native = false;
    Conversion m_conversion = Conversion::None;
    float* m_data = nullptr;
    int64_t m_batch = 0, m_channels = 0, m_positions = 0;
    dnnl::reorder m_reorder;
    std::unordered_map<int, memory> m_reorderArgs;
    size_t m_ownBytes = 0; // the inner buffer's, when it is the port's own
    void* m_own = nullptr;
};

inline dnnl::memory::desc anyFormat(const dnnl::memory::desc& d)
{
    return { d.dims(), dnnl::memory::data_type::f32, dnnl::memory::format_tag::any };
}

} // namespace opscope::dnnlutil
