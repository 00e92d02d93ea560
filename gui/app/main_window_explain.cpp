// How the window explains a value: a click on an element of a paused convolution's or fully
// connected layer's output opens the terms that make it (debug/unit_anatomy.h).

#include "gui/app/main_window.h"

#include "debug/unit_anatomy.h"
#include "gui/explain/unit_anatomy_view.h"
#include "gui/session/session_controller.h"
#include "gui/tensor/value_format.h"

#include <QDialog>
#include <QStatusBar>
#include <QVBoxLayout>

namespace opscope::gui {

bool MainWindow::showUnitAnatomy(const QString& tensor, const QList<qint64>& index)
{
    const auto e = m_controller->pauseEvent();
    const auto graph = m_controller->session().graph();
    auto refuse = [this](const QString& why) {
        statusBar()->showMessage(why, 8000);
        return false;
    };
    if (!e || !graph || e->nodeId >= graph->size()) return refuse(tr("Not paused"));
    const uint32_t id = e->nodeId;
    const Node& node = graph->node(id);
    if (!debug::hasUnitAnatomy(node))
        return refuse(tr("Click a value of a convolution's or a fully connected layer's output (paused after it) "
                         "to see how it is computed"));
    if (tensor.toStdString() != graph->outputName(NodeEntry { id, 0, 0 }))
        return refuse(tr("Click a value of %1's output to see how it is computed").arg(QString::fromStdString(node.name)));
    std::vector<Tensor> inputs;
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
        const std::string name = graph->inputName(id, slot);
        const auto it = std::find_if(
            e->tensors.begin(), e->tensors.end(), [&](const debug::PausedTensor& t) { return t.isInput && t.name == name; });
        if (it == e->tensors.end()) return refuse(tr("The pause does not hold %1").arg(QString::fromStdString(name)));
        inputs.push_back(it->values);
    }
    const auto out = std::find_if(e->tensors.begin(), e->tensors.end(),
        [&](const debug::PausedTensor& t) { return !t.isInput && t.name == tensor.toStdString(); });
    if (out == e->tensors.end()) return refuse(tr("The pause does not hold %1").arg(tensor));
    std::vector<int64_t> idx(index.begin(), index.end());
    debug::UnitAnatomy anatomy;
    try {
        anatomy = debug::unitAnatomy(*graph, id, inputs, out->values, idx);
    } catch (const std::exception& x) {
        return refuse(QString::fromStdString(x.what()));
    }
    if (!m_anatomyDialog) {
        m_anatomyDialog = new QDialog(this);
        m_anatomyDialog->setObjectName(QStringLiteral("unitAnatomyDialog"));
        auto* layout = new QVBoxLayout(m_anatomyDialog);
        layout->setContentsMargins(0, 0, 0, 0);
        m_anatomyView = new UnitAnatomyView(m_anatomyDialog);
        layout->addWidget(m_anatomyView);
        m_anatomyDialog->resize(m_anatomyView->sizeHint());
    }
    m_anatomyView->setAnatomy(anatomy);
    m_anatomyDialog->setWindowTitle(tr("How %1 %2 is computed").arg(QString::fromStdString(node.name), formatIndex(idx)));
    m_anatomyDialog->show();
    m_anatomyDialog->raise();
    return true;
}

} // namespace opscope::gui
