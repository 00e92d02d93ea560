#pragma once

#include "debug/engine.h"
#include "gui/tensor/tensor_source.h"

#include <memory>
#include <string>

namespace opscope::gui {

/// A tensor of an engine (a server's) read through Engine::summary and Engine::slice: one round
/// trip per call. Holds the engine, so a read after a detach fails cleanly instead of touching a
/// closed one. Thread-safe as the engine is (RemoteEngine: any thread).
class EngineTensorSource : public TensorSource {
public:
    /// `pin`: where the tensor was seen (Engine::summary); reads fail once the engine has moved on.
    EngineTensorSource(std::shared_ptr<debug::Engine> engine, std::string name, debug::TensorPin pin = {});

    debug::Session::TensorSummary summary(int bins, debug::HistogramScale scale, double lo, double hi) const override;
    debug::TensorSlice slice(const debug::SliceRequest& request) const override;
    QString where() const override { return m_where; }

private:
    std::string missing() const;

    std::shared_ptr<debug::Engine> m_engine;
    std::string m_name;
    debug::TensorPin m_pin;
    QString m_where;
};

} // namespace opscope::gui
