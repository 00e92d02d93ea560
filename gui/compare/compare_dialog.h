#pragma once

// Debug ▸ Compare…: what run B is (the loaded model computing otherwise, another model or
// checkpoint, or a saved run) and the tolerance.

#include "gui/session/compare_runner.h"

#include <QDialog>

class QButtonGroup;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;

namespace opscope::gui {

class CompareDialog : public QDialog {
    Q_OBJECT
public:
    /// `operators`: the operator types of the loaded graph (offered as precision targets).
    CompareDialog(const CompareSpec& spec, const QStringList& operators, QWidget* parent = nullptr);

    /// Comparing on a server (HOST:PORT): run A is its model on its inputs, and every file named
    /// is a path there (not looked for here, nor browsed for).
    void setServer(const QString& server);

    CompareSpec spec() const;
    /// Why the spec cannot be run ("" when it can): a missing file, nothing chosen.
    QString problem() const;

private:
    void updateEnabled();

    QButtonGroup* m_source = nullptr;
    QLineEdit* m_model = nullptr;
    QLineEdit* m_params = nullptr;
    QLineEdit* m_saved = nullptr;
    QLineEdit* m_map = nullptr;
    QComboBox* m_kernels = nullptr;
    QComboBox* m_mode = nullptr;
    QLineEdit* m_inputs = nullptr;
    QComboBox* m_precision = nullptr;
    QLineEdit* m_targets = nullptr;
    QDoubleSpinBox* m_rtol = nullptr;
    QDoubleSpinBox* m_atol = nullptr;
    QLabel* m_problem = nullptr;
    QLabel* m_intro = nullptr;
    QString m_server;
};

/// Parses the `--compare` option: comma-separated KEY=VALUE with keys model, params, saved, map,
/// kernels (auto|reference|onednn), mode (eager|hybrid|static_alloc|static_shape), input
/// (NAME=SOURCE; repeatable), half, bf16 (a node, an operator or all; repeatable), rtol, atol.
/// False with `error` set for anything else.
bool parseCompareSpec(const QString& text, CompareSpec* spec, QString* error);

} // namespace opscope::gui
