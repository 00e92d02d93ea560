#include "gui/panels/breakpoint_model.h"

#include <QBrush>
#include <QColor>

namespace opscope::gui {

using debug::Breakpoint;
using debug::Condition;

BreakpointModel::BreakpointModel(debug::Engine* engine, QObject* parent)
    : QAbstractTableModel(parent)
    , m_engine(engine)
{
    m_rows = call(std::vector<Breakpoint>(), [&] { return m_engine->breakpoints(); });
}

void BreakpointModel::setEngine(debug::Engine* engine)
{
    m_engine = engine;
    beginResetModel();
    m_rows = call(std::vector<Breakpoint>(), [&] { return m_engine->breakpoints(); });
    endResetModel();
}

int BreakpointModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int BreakpointModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BreakpointModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Breakpoint& b = m_rows[static_cast<size_t>(index.row())];
    const int col = index.column();
    if (role == Qt::CheckStateRole && col == Enabled) return b.enabled ? Qt::Checked : Qt::Unchecked;
    if (role == Qt::DisplayRole || role == Qt::EditRole) {
        switch (col) {
        case Enabled:
            return role == Qt::DisplayRole ? QVariant(b.id) : QVariant();
        case Location:
            return b.kind == Breakpoint::Kind::Watch ? QStringLiteral("every op") : QString::fromStdString(b.location);
        case Phase:
            if (b.kind == Breakpoint::Kind::Tensor) return QStringLiteral("tensor");
            if (!variableNote(b).isEmpty()) return QStringLiteral("before 1st reader");
            return b.phase == OpPhase::Before ? QStringLiteral("before") : QStringLiteral("after");
        case ConditionColumn:
            return b.condition.kind == Condition::Kind::Always && !b.condition.gradientsOnly
                ? QString()
                : QString::fromStdString(b.condition.str());
        case Hits:
            return static_cast<qlonglong>(b.hitCount);
        case Ignore:
            return static_cast<qlonglong>(b.ignoreCount);
        }
    }
    if (role == Qt::ToolTipRole) {
        QString what = QString::fromStdString(b.str());
        if (const QString note = variableNote(b); !note.isEmpty()) what += QLatin1Char('\n') + note;
        return col == Location && b.kind != Breakpoint::Kind::Watch
            ? QStringLiteral("%1\n%2").arg(QString::fromStdString(b.location), what)
            : what;
    }
    if (role == Qt::ForegroundRole && !b.enabled) return QBrush(QColor(140, 140, 140));
    if (role == Qt::UserRole) return b.id;
    return {};
}

bool BreakpointModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return false;
    const Breakpoint& b = m_rows[static_cast<size_t>(index.row())];
    if (role == Qt::CheckStateRole && index.column() == Enabled) return setEnabled(b.id, value.toInt() == Qt::Checked);
    if (role != Qt::EditRole) return false;
    if (index.column() == ConditionColumn) return setCondition(b.id, value.toString());
    if (index.column() == Ignore) {
        bool ok = false;
        const qlonglong n = value.toLongLong(&ok);
        if (!ok || n < 0) return false;
        Breakpoint changed = b;
        changed.ignoreCount = n;
        if (!edit(false, [&] { return m_engine->updateBreakpoint(b.id, changed); })) return false;
        refresh();
        Q_EMIT breakpointsChanged();
        return true;
    }
    return false;
}

QVariant BreakpointModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Enabled:
        return QStringLiteral("#");
    case Location:
        return QStringLiteral("Node");
    case Phase:
        return QStringLiteral("Phase");
    case ConditionColumn:
        return QStringLiteral("Condition");
    case Hits:
        return QStringLiteral("Hits");
    case Ignore:
        return QStringLiteral("Ignore");
    }
    return {};
}

void BreakpointModel::setReadOnly(const QString& why)
{
    if (why == m_readOnly) return;
    const bool was = isReadOnly();
    m_readOnly = why;
    if (!m_rows.empty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    if (was != isReadOnly()) Q_EMIT readOnlyChanged(isReadOnly());
}

Qt::ItemFlags BreakpointModel::flags(const QModelIndex& index) const
{
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (isReadOnly()) return f;
    if (index.column() == Enabled) f |= Qt::ItemIsUserCheckable;
    if (index.column() == ConditionColumn || index.column() == Ignore) f |= Qt::ItemIsEditable;
    return f;
}

int BreakpointModel::add(const Breakpoint& b)
{
    const int id = edit(0, [&] { return m_engine->addBreakpoint(b); });
    if (id == 0) return 0;
    refresh();
    Q_EMIT breakpointsChanged();
    return id;
}

bool BreakpointModel::remove(int id)
{
    if (!edit(false, [&] { return m_engine->removeBreakpoint(id); })) return false;
    refresh();
    Q_EMIT breakpointsChanged();
    return true;
}

void BreakpointModel::clear()
{
    if (!edit(false, [&] {
            m_engine->clearBreakpoints();
            return true;
        }))
        return;
    refresh();
    Q_EMIT breakpointsChanged();
}

void BreakpointModel::setGraph(std::shared_ptr<const Graph> graph)
{
    m_graph = std::move(graph);
    if (!m_rows.empty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

QString BreakpointModel::variableNote(const Breakpoint& b) const
{
    if (!m_graph || b.kind != Breakpoint::Kind::Node) return {};
    const auto id = m_graph->findNode(b.location);
    if (!id || !m_graph->node(*id).isVariable()) return {};
    const auto reader = m_graph->firstReader(*id);
    if (!reader) return tr("No op reads this variable: the breakpoint never stops");
    const Node& n = m_graph->node(reader->first);
    return tr("A variable: stops before %1 (%2), the first op that reads it, on its input '%3'")
        .arg(QString::fromStdString(n.name), QString::fromStdString(n.op),
            QString::fromStdString(n.inputSlots[reader->second]));
}

int BreakpointModel::findNode(const QString& node, OpPhase phase) const
{
    const std::string name = node.toStdString();
    for (const Breakpoint& b : m_rows)
        if (b.kind == Breakpoint::Kind::Node && b.location == name && b.phase == phase) return b.id;
    return 0;
}

int BreakpointModel::toggleNode(const QString& node, OpPhase phase)
{
    if (const int id = findNode(node, phase)) {
        remove(id);
        return 0;
    }
    return add(Breakpoint::onNode(node.toStdString(), phase));
}

bool BreakpointModel::setEnabled(int id, bool enabled)
{
    if (!edit(false, [&] { return m_engine->setBreakpointEnabled(id, enabled); })) return false;
    refresh();
    Q_EMIT breakpointsChanged();
    return true;
}

bool BreakpointModel::setCondition(int id, const QString& text, QString* error)
{
    m_lastError.clear();
    std::optional<Breakpoint> b = call(std::optional<Breakpoint>(), [&] { return m_engine->breakpoint(id); });
    if (!b) {
        if (error) *error = m_lastError.isEmpty() ? tr("no breakpoint #%1").arg(id) : m_lastError;
        return false;
    }
    try {
        b->condition = text.trimmed().isEmpty() ? Condition::always() : Condition::parse(text.toStdString());
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
    if (!edit(false, [&] { return m_engine->updateBreakpoint(id, *b); })) {
        // Refused with a reason (thrown), or answered false: the breakpoint went meanwhile.
        if (error) *error = m_lastError.isEmpty() ? tr("no breakpoint #%1 (removed meanwhile)").arg(id) : m_lastError;
        return false;
    }
    refresh();
    Q_EMIT breakpointsChanged();
    return true;
}

bool BreakpointModel::breakOnNanInf() const
{
    for (const Breakpoint& b : m_rows)
        if (b.kind == Breakpoint::Kind::Watch && b.condition.kind == Condition::Kind::NanOrInf
            && !b.condition.gradientsOnly && b.enabled)
            return true;
    return false;
}

void BreakpointModel::setBreakOnNanInf(bool on)
{
    if (on == breakOnNanInf()) return;
    if (on) {
        add(Breakpoint::watch(Condition::of(Condition::Kind::NanOrInf)));
        return;
    }
    for (const Breakpoint& b : std::vector<Breakpoint>(m_rows))
        if (b.kind == Breakpoint::Kind::Watch && b.condition.kind == Condition::Kind::NanOrInf
            && !b.condition.gradientsOnly)
            edit(false, [&] { return m_engine->removeBreakpoint(b.id); });
    refresh();
    Q_EMIT breakpointsChanged();
}

int BreakpointModel::rowOf(int id) const
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].id == id) return static_cast<int>(i);
    return -1;
}

void BreakpointModel::refresh()
{
    std::optional<std::vector<Breakpoint>> fresh = call(std::optional<std::vector<Breakpoint>>(), [&] {
        return std::optional<std::vector<Breakpoint>>(m_engine->breakpoints());
    });
    if (!fresh) return; // the engine did not answer: the rows stay as they were
    std::vector<Breakpoint> now = std::move(*fresh);
    bool sameIds = now.size() == m_rows.size();
    for (size_t i = 0; sameIds && i < now.size(); ++i)
        sameIds = now[i].id == m_rows[i].id;
    if (!sameIds) {
        beginResetModel();
        m_rows = std::move(now);
        endResetModel();
        return;
    }
    m_rows = std::move(now);
    if (!m_rows.empty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

QStringList BreakpointModel::save() const
{
    QStringList out;
    for (const Breakpoint& b : m_rows) {
        const char* kind = b.kind == Breakpoint::Kind::Node ? "node"
            : b.kind == Breakpoint::Kind::Tensor            ? "tensor"
                                                            : "watch";
        out << QStringList { QString::fromLatin1(kind), QString::fromStdString(b.location),
            b.phase == OpPhase::Before ? QStringLiteral("before") : QStringLiteral("after"),
            QString::fromStdString(b.condition.str()), b.enabled ? QStringLiteral("1") : QStringLiteral("0"),
            QString::number(b.ignoreCount) }
                   .join(QLatin1Char('\t'));
    }
    return out;
}

int BreakpointModel::restore(const QStringList& lines)
{
    if (!edit(false, [&] {
            m_engine->clearBreakpoints();
            return true;
        }))
        return 0;
    int read = 0;
    for (const QString& line : lines) {
        const QStringList f = line.split(QLatin1Char('\t'));
        if (f.size() < 6) continue;
        Breakpoint b;
        if (f[0] == QLatin1String("node"))
            b.kind = Breakpoint::Kind::Node;
        else if (f[0] == QLatin1String("tensor"))
            b.kind = Breakpoint::Kind::Tensor;
        else if (f[0] == QLatin1String("watch"))
            b.kind = Breakpoint::Kind::Watch;
        else
            continue;
        b.location = f[1].toStdString();
        b.phase = f[2] == QLatin1String("after") ? OpPhase::After : OpPhase::Before;
        try {
            b.condition = Condition::parse(f[3].toStdString());
        } catch (const std::exception&) {
            continue;
        }
        b.enabled = f[4] != QLatin1String("0");
        b.ignoreCount = f[5].toLongLong();
        if (edit(0, [&] { return m_engine->addBreakpoint(b); }) != 0) ++read;
    }
    refresh();
    Q_EMIT breakpointsChanged();
    return read;
}

} // namespace opscope::gui
