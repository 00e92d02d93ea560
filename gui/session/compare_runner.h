#pragma once

// The window's comparisons (engine/debug/compare_request.h): run A (the model on the window's
// inputs, or a server's on its own) and run B (the same model computing otherwise, another model or
// checkpoint, or a saved run), computed by the engine (Engine::compare) off the GUI thread.

#include "debug/compare_request.h"

#include <memory>
#include <vector>

#include <QObject>
#include <QString>
#include <QStringList>

namespace opscope::gui {

class SessionController;

/// What run B is and how the runs are compared.
struct CompareSpec {
    enum class Source { SameModel, OtherModel, Saved };
    Source source = Source::SameModel;
    QString modelB; ///< OtherModel: a .onnx, a -symbol.json or sample:NAME
    QString paramsB; ///< a checkpoint for B's model (empty: the model's own parameters)
    QString savedB; ///< Saved: a folder `run --dump` wrote, or an .npz archive
    KernelKind kernelsB = KernelKind::Auto;
    debug::RunMode modeB = debug::RunMode::Hybrid; ///< eager, hybrid or static (run A is hybrid)
    /// B's own inputs as NAME=SOURCE (a .npy file or SHAPE[:fill], as opscope-cli's --input);
    /// empty: A's.
    QStringList inputsB;
    std::vector<PrecisionRule> precisionB; ///< nodes of B computing in float16 / bfloat16
    QString mapFile; ///< B's names to A's (debug::readNameMap); empty: none
    debug::CompareTolerance tol;
    /// One line for the window: "float16 on all nodes", "reference kernels", "mnist-0002.params".
    QString describeB() const;
    /// What the engine is asked (run A's inputs: `inputsA`, empty for the engine's own).
    debug::CompareRequest request(std::vector<Tensor> inputsA = {}) const;
};

/// A comparison as the window keeps it. Where the engine runs elsewhere, `a` and `b` hold only
/// their tensors' names (`valuesHere` false); SessionController::fetchCompared brings the values.
struct CompareResult {
    CompareSpec spec;
    QString modelA;
    std::shared_ptr<const Graph> graph; ///< A's graph, which the comparison's nodes belong to
    debug::RecordedRun a, b;
    debug::Comparison comparison;
    qint64 elapsedMs = 0;
    bool valuesHere = true;
    uint64_t id = 0; ///< the engine's comparison (CompareOutcome::id): its tensors are fetched by it
    /// Whether run A (or B) recorded the tensor.
    bool inA(const std::string& name) const;
};
using CompareResultPtr = std::shared_ptr<const CompareResult>;

/// Asks the engine of `controller` for comparisons (SessionController::compare) and reports on the
/// GUI thread. A newer start supersedes one still going (its result is dropped).
class CompareRunner : public QObject {
    Q_OBJECT
public:
    explicit CompareRunner(SessionController* controller, QObject* parent = nullptr);

    /// Starts a comparison of the engine's model `modelA` (on `inputs`; empty: the engine's own)
    /// against B.
    void start(const QString& modelA, std::vector<Tensor> inputs, const CompareSpec& spec);
    /// Drops the result of the one going on (the engine forgets it: Engine::endComparison).
    void cancel() { ++m_generation; }
    bool isRunning() const { return m_running > 0; }
    /// Waits for the running jobs (tests). False on time-out.
    bool waitForIdle(int timeoutMs = 60000);

Q_SIGNALS:
    void started();
    void finished(opscope::gui::CompareResultPtr result);
    void failed(const QString& error);

private:
    SessionController* m_controller;
    quint64 m_generation = 0;
    int m_running = 0;
};

} // namespace opscope::gui

Q_DECLARE_METATYPE(opscope::gui::CompareResultPtr)
