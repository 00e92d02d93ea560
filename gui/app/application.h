#pragma once

class QApplication;

namespace opscope::gui {

/// Names the application (for QSettings), loads the resources and applies the style: Fusion with
/// opscope's style sheet. Call once after constructing the QApplication (the executable and the tests).
void setUpApplication(QApplication& app);

} // namespace opscope::gui
