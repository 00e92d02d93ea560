#pragma once

// The window's comparisons (engine/debug/compare.h): run A (the loaded model on the window's inputs)
// and run B (the same model computing otherwise, another model or checkpoint, or a saved run),
// recorded on worker threads of their own, away from the debug session's worker, and compared.

#include "debug/compare.h"
#include "debug/compare_sources.h"
#include "exec/precision_rules.h"

#include <memory>
#include <vector>

#include <QFuture>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

namespace opscope::gui {

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
};

struct CompareResult {
    CompareSpec spec;
    QString modelA;
    std::shared_ptr<const Graph> graph; ///< A's graph, which the comparison's nodes belong to
    debug::RecordedRun a, b;
    debug::Comparison comparison;
    qint64 elapsedMs = 0;
};
using CompareResultPtr = std::shared_ptr<const CompareResult>;

/// Records run A and run B at the same time on threads of their own (no ops are shared), compares
/// them off the GUI thread and reports on the GUI thread. A newer start supersedes one still going
/// (its result is dropped). The destructor waits for the jobs still going, without delivering them.
class CompareRunner : public QObject {
    Q_OBJECT
public:
    explicit CompareRunner(QObject* parent = nullptr);
    ~CompareRunner() override;

    /// Starts a comparison of `modelA` (with `paramsA`, empty for its own) on `inputs` against B.
    void start(const QString& modelA, const QString& paramsA, std::vector<Tensor> inputs, const CompareSpec& spec);
    bool isRunning() const { return m_running > 0; }
    /// Waits for the running jobs (tests). False on time-out.
    bool waitForIdle(int timeoutMs = 60000);

    /// The whole job, synchronously (what start() runs on a worker). Throws what loading or running
    /// throws.
    static CompareResultPtr compute(
        const QString& modelA, const QString& paramsA, const std::vector<Tensor>& inputs, const CompareSpec& spec);

Q_SIGNALS:
    void started();
    void finished(opscope::gui::CompareResultPtr result);
    void failed(const QString& error);

private:
    quint64 m_generation = 0;
    int m_running = 0;
    QList<QFuture<void>> m_jobs; // waited for by the destructor (their results are dropped then)
};

} // namespace opscope::gui

Q_DECLARE_METATYPE(opscope::gui::CompareResultPtr)
