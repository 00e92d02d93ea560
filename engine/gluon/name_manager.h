#pragma once

#include <map>
#include <string>

namespace opscope::gluon {

/// MXNet's NameManager and Prefix: names operators called inside a block's forward. The current
/// manager is per thread; a block's name scope installs a Prefix manager with fresh counters, so an
/// unnamed `F.Flatten(x)` inside block `flatten0_` is named `flatten0_flatten0`, and `name="fwd"`
/// gives `<prefix>fwd`. Outside any scope the process-wide manager counts per hint.
class NameManager {
public:
    /// `name` non-empty: prefix + name. Empty: prefix + hint + count (count per hint, from 0).
    static std::string get(const std::string& name, const std::string& hint);
    /// The current prefix ("" outside any block scope).
    static const std::string& currentPrefix();

    /// RAII: installs a Prefix manager with `prefix` and fresh counters for its lifetime.
    class PrefixScope {
    public:
        explicit PrefixScope(std::string prefix);
        ~PrefixScope();
        PrefixScope(const PrefixScope&) = delete;
        PrefixScope& operator=(const PrefixScope&) = delete;
        struct State;

    private:
        State* m_previous;
        State* m_state;
    };

    /// Resets the process-wide (unprefixed) counters, as a fresh interpreter would have them.
    static void resetGlobalCounters();
};

} // namespace opscope::gluon
