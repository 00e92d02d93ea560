#include "ops/registry.h"

#include "core/error.h"
#include "ops/register_all.h"

#include <algorithm>

namespace opscope {

namespace {
    // How many of MXNet's fallback names (outputs `0`, `1`…, inputs `input0`, `input1`…) an
    // operator without outputNames or inputNames keeps built; more than that are named when asked.
    constexpr int kDefaultNamedOutputs = 8;
    constexpr int kDefaultNamedInputs = 8;
}

const OpRegistry& OpRegistry::instance()
{
    static const OpRegistry* registry = [] {
        auto* r = new OpRegistry;
        registerAllOps(*r);
        return r;
    }();
    return *registry;
}

const OpDef* OpRegistry::find(std::string_view name) const
{
    auto it = m_byName.find(std::string(name));
    return it == m_byName.end() ? nullptr : it->second;
}

const OpDef& OpRegistry::get(std::string_view name) const
{
    if (const OpDef* d = find(name))
        return *d;
    throw GraphError("unknown operator '" + std::string(name) + "'");
}

std::vector<const OpDef*> OpRegistry::defs() const
{
    std::vector<const OpDef*> out;
    for (const auto& op : m_ops)
        out.push_back(op.get());
    return out;
}

std::vector<std::string> OpRegistry::names() const
{
    std::vector<std::string> out;
    for (const auto& op : m_ops)
        out.push_back(op->name);
    std::sort(out.begin(), out.end());
    return out;
}

void OpRegistry::add(OpDef def, std::vector<std::string> aliases)
{
    if (m_byName.count(def.name))
        throw UsageError("operator '" + def.name + "' registered twice");
    if (!def.outputNames && def.fixedOutputNames.empty())
        for (int i = 0; i < kDefaultNamedOutputs; ++i)
            def.fixedOutputNames.push_back(std::to_string(i));
    if (!def.inputNames && def.fixedInputNames.empty())
        for (int i = 0; i < kDefaultNamedInputs; ++i)
            def.fixedInputNames.push_back("input" + std::to_string(i));
    auto owned = std::make_unique<OpDef>(std::move(def));
    const OpDef* p = owned.get();
    m_byName[p->name] = p;
    for (auto& a : aliases)
        m_byName[a] = p;
    m_ops.push_back(std::move(owned));
}

std::vector<std::string> OpDef::inputSlotNames(const OpParams& p) const
{
    std::vector<std::string> names = inputNames ? inputNames(p) : std::vector<std::string> {};
    const int n = numInputs(p);
    if (static_cast<int>(names.size()) < n) {
        // MXNet falls back to input<i> only when the operator registers no names at all.
        for (int i = static_cast<int>(names.size()); i < n; ++i)
            names.push_back("input" + std::to_string(i));
    }
    names.resize(static_cast<size_t>(n));
    return names;
}

std::vector<std::string> OpDef::outputSlotNames(const OpParams& p) const
{
    std::vector<std::string> names = outputNames ? outputNames(p) : std::vector<std::string> {};
    const int n = numOutputs(p);
    for (int i = static_cast<int>(names.size()); i < n; ++i)
        names.push_back(std::to_string(i));
    names.resize(static_cast<size_t>(n));
    return names;
}

std::span<const std::string> OpDef::outputSlotNames(
    const OpParams& p, size_t count, std::vector<std::string>& scratch) const
{
    if (count <= fixedOutputNames.size()) return std::span<const std::string>(fixedOutputNames).first(count);
    scratch = outputSlotNames(p);
    return scratch;
}

std::span<const std::string> OpDef::inputSlotNames(
    const OpParams& p, size_t count, std::vector<std::string>& scratch) const
{
    if (count <= fixedInputNames.size()) return std::span<const std::string>(fixedInputNames).first(count);
    scratch = inputSlotNames(p);
    return scratch;
}

void OpDef::nameInputs(std::vector<std::string> names)
{
    fixedInputNames = names;
    inputNames = [names = std::move(names)](const OpParams&) { return names; };
}

void OpDef::nameOutputs(std::vector<std::string> names)
{
    fixedOutputNames = names;
    outputNames = [names = std::move(names)](const OpParams&) { return names; };
}

std::unique_ptr<Kernel> OpDef::makeKernel(
    const OpParams& p, std::span<const Shape> in, std::span<const Shape> out, KernelKind kind) const
{
    if (kind != KernelKind::Reference && dnnl && (kind == KernelKind::Dnnl || !dnnlPays || dnnlPays(p, in, out))) {
        if (auto k = dnnl(p, in, out))
            return k;
    }
    return reference(p, in, out);
}

[[noreturn]] void shapeMismatch(const std::string& what, const Shape& expected, const Shape& actual)
{
    throw ShapeError(what + ": expected " + expected.str() + ", got " + actual.str());
}

void OpDef::inferTypes(const OpParams& p, std::span<const DType> in, std::span<DType> out) const
{
    if (inferType) {
        inferType(p, in, out);
        return;
    }
    for (size_t k = 0; k < in.size(); ++k)
        if (in[k] != DType::Float32) {
            const std::vector<std::string> slots = inputSlotNames(p);
            throw TypeError("input '" + (k < slots.size() ? slots[k] : std::to_string(k)) + "' is " + dtypeName(in[k])
                + "; " + name + " takes float32 only");
        }
    std::fill(out.begin(), out.end(), DType::Float32);
}

const Shape& assignShape(Shape& slot, const Shape& expected, const std::string& what)
{
    if (slot.ndim() == 0) {
        slot = expected;
        return slot;
    }
    bool ok = slot.ndim() == expected.ndim();
    for (int i = 0; ok && i < slot.ndim(); ++i) {
        if (expected[i] != 0 && slot[i] != 0 && expected[i] != slot[i])
            ok = false;
    }
    if (!ok)
        shapeMismatch(what, expected, slot);
    for (int i = 0; i < slot.ndim(); ++i)
        if (slot[i] == 0)
            slot[i] = expected[i];
    return slot;
}

} // namespace opscope
