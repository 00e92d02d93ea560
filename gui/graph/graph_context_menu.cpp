#include "gui/graph/graph_context_menu.h"

#include "gui/graph/graph_view.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QMenu>
#include <QObject>

namespace opscope::gui {

void GraphContextMenu::fill(QMenu* menu, GraphView* view, const QPoint& viewportPos)
{
    GraphModel* model = view->model();
    if (!model) return;
    auto add = [menu, view](const QString& text, auto&& slot) {
        QAction* action = menu->addAction(text);
        QObject::connect(action, &QAction::triggered, view, std::forward<decltype(slot)>(slot));
        return action;
    };
    auto copy = [](const QString& text) { QApplication::clipboard()->setText(text); };

    if (const GraphItem* shown = view->shownItemAt(viewportPos)) {
        const GraphItem item = *shown;
        if (item.kind == GraphItemKind::Op) {
            const QString name = item.name;
            add(QStringLiteral("Toggle Breakpoint (before)\tF9"),
                [view, name] { emit view->breakpointToggleRequested(name, OpPhase::Before); });
            add(QStringLiteral("Breakpoint After"),
                [view, name] { emit view->breakpointToggleRequested(name, OpPhase::After); });
            add(QStringLiteral("Breakpoint with Condition\u2026"),
                [view, name] { emit view->breakpointConditionRequested(name); });
            menu->addSeparator();
            add(QStringLiteral("Run to Here"), [view, name] { emit view->runToRequested(name); });
            menu->addSeparator();
            // "Is float16 safe here?": compare the model with itself, this node (or every node of
            // its operator) computing in reduced precision.
            QMenu* precision = menu->addMenu(QStringLiteral("Compare in Reduced Precision"));
            const QString op = item.title;
            for (const bool bf16 : { false, true }) {
                const QString type = bf16 ? QStringLiteral("bfloat16") : QStringLiteral("float16");
                QObject::connect(precision->addAction(QStringLiteral("This Node in %1").arg(type)), &QAction::triggered,
                    view, [view, name, bf16] { emit view->precisionCompareRequested(name, bf16); });
                QObject::connect(precision->addAction(QStringLiteral("Every %1 in %2").arg(op, type)), &QAction::triggered,
                    view, [view, op, bf16] { emit view->precisionCompareRequested(op, bf16); });
            }
            menu->addSeparator();
        }
        if (item.kind == GraphItemKind::Block)
            add(QStringLiteral("Expand Block"), [view, path = item.name] { view->expandBlock(path); });
        if (!item.blockPath.isEmpty())
            add(QStringLiteral("Collapse Block \u201c%1\u201d").arg(blockDisplayName(item.blockPath)),
                [view, path = item.blockPath] { view->collapseBlock(path); });
        add(item.kind == GraphItemKind::Block ? QStringLiteral("Copy Block Path") : QStringLiteral("Copy Name"),
            [copy, text = item.name] { copy(text); });
        return;
    }
    if (const QString path = view->clusterPathAt(viewportPos); !path.isEmpty()) {
        add(QStringLiteral("Collapse Block \u201c%1\u201d").arg(blockDisplayName(path)),
            [view, path] { view->collapseBlock(path); });
        add(QStringLiteral("Copy Block Path"), [copy, path] { copy(path); });
        menu->addSeparator();
    }
    add(QStringLiteral("Fit to View\tF"), [view] { view->fitToView(); });
    QAction* parameters = add(QStringLiteral("Show Parameters"), [view](bool on) {
        if (view->model()) view->model()->setShowParameters(on);
    });
    parameters->setCheckable(true);
    parameters->setChecked(model->showParameters());
    add(QStringLiteral("Expand Levels to Fit"), [view] {
        if (view->model()) view->model()->expandToFit();
    });
    add(QStringLiteral("Collapse All"), [view] {
        if (view->model()) view->model()->collapseAll();
    });
}

} // namespace opscope::gui
