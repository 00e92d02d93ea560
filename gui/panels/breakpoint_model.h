#pragma once

#include "debug/engine.h"

#include <QAbstractTableModel>
#include <QStringList>

namespace opscope::gui {

/// The breakpoints of an engine as a table: enabled (checkable), location, phase, condition
/// (editable), hits, ignore count (editable). The engine (here or on a server) holds the
/// breakpoints; this model mirrors them, sends every edit to the engine, and re-reads hit counts on
/// refresh().
class BreakpointModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Enabled, Location, Phase, ConditionColumn, Hits, Ignore, ColumnCount };

    explicit BreakpointModel(debug::Engine* engine, QObject* parent = nullptr);
    /// Another engine (attached to a server, or back to this process's): its breakpoints are shown.
    void setEngine(debug::Engine* engine);
    /// Why the engine refused the last edit (a server gone, control held by another client).
    QString lastError() const { return m_lastError; }
    /// Watching an engine another client controls: the rows are shown, every edit is refused with
    /// `why` (the table's checkboxes and cells are not editable). Empty `why`: editable again.
    void setReadOnly(const QString& why);
    bool isReadOnly() const { return !m_readOnly.isEmpty(); }
    QString readOnlyReason() const { return m_readOnly; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

    /// Adds a breakpoint; returns its id.
    int add(const debug::Breakpoint& b);
    bool remove(int id);
    void clear();
    /// A node breakpoint at `node`/`phase`: removed when there is one, else added (id returned; 0 when removed).
    int toggleNode(const QString& node, OpPhase phase);
    /// Id of the node breakpoint at node/phase, or 0.
    int findNode(const QString& node, OpPhase phase) const;
    bool setEnabled(int id, bool enabled);
    /// Parses `text` ("nan", "max>3", "" for always); false with `error` set when it does not parse.
    bool setCondition(int id, const QString& text, QString* error = nullptr);
    /// Whether any watchpoint stops on NaN or Inf; setting it adds or removes that watchpoint.
    bool breakOnNanInf() const;
    void setBreakOnNanInf(bool on);

    const std::vector<debug::Breakpoint>& breakpoints() const { return m_rows; }
    int rowOf(int id) const;
    /// Re-reads the engine's breakpoints (hit counts change during a run).
    void refresh();
    /// The graph the breakpoints are shown against: a breakpoint on one of its variables (an input
    /// or parameter) says that it stops before the first op that reads it.
    void setGraph(std::shared_ptr<const Graph> graph);

    /// One line per breakpoint, to persist:
    /// "node|tensor|watch<TAB>location<TAB>before|after<TAB>condition<TAB>0|1<TAB>ignore".
    QStringList save() const;
    /// Replaces every breakpoint with those of `lines` (bad lines are skipped); returns how many were read.
    int restore(const QStringList& lines);

Q_SIGNALS:
    /// Any add, removal or edit (not hit counts).
    void breakpointsChanged();
    /// The engine refused an edit or did not answer (`why` names it); nothing changed.
    void engineRefused(const QString& why);
    void readOnlyChanged(bool readOnly);

private:
    /// "before conv0_fwd, its first reader" for a breakpoint on a variable of the graph, else "".
    QString variableNote(const debug::Breakpoint& b) const;

    /// `f()`, or `fallback` when the engine throws (the reason kept and signalled): an engine on a
    /// server may refuse or be gone; a table edit never takes the window down.
    template <class R, class F> R call(R fallback, F f)
    {
        try {
            return f();
        } catch (const std::exception& e) {
            m_lastError = QString::fromStdString(e.what());
            Q_EMIT engineRefused(m_lastError);
            return fallback;
        }
    }

    /// An edit: refused at once while read-only, else call().
    template <class R, class F> R edit(R fallback, F f)
    {
        if (!m_readOnly.isEmpty()) {
            m_lastError = m_readOnly;
            Q_EMIT engineRefused(m_lastError);
            return fallback;
        }
        return call(std::move(fallback), std::move(f));
    }

    debug::Engine* m_engine;
    QString m_readOnly;
    QString m_lastError;
    std::vector<debug::Breakpoint> m_rows;
    std::shared_ptr<const Graph> m_graph;
};

} // namespace opscope::gui
