#pragma once

#include "gui/session/channel_profile_runner.h"

#include <QWidget>

class QComboBox;
class QCustomPlot;
class QCPBars;
class QGridLayout;
class QLabel;
class QProgressBar;
class QSpinBox;
class QToolButton;

namespace opscope::gui {

/// What one channel of a layer responds to: the 9 inputs of a data set that activate it most, each
/// with the receptive field of its strongest position marked, the label and the activation, and the
/// channel's mean activation per class as bars. The whole layer is profiled once per model, data set
/// and layer (on a worker, with progress and Cancel; cached beside the settings); the channel box
/// browses its other channels at once.
class ChannelExamplesView : public QWidget {
    Q_OBJECT
public:
    explicit ChannelExamplesView(QWidget* parent = nullptr);

    /// Profiles `layer` of `model` on the data sets that fit (`dataSets`, the first chosen) and
    /// shows `channel`.
    void start(const QString& model, const QString& params, const QString& layer, const QStringList& dataSets,
        int channel, ParameterSnapshot weights = {});
    void setDataSet(const QString& name);
    void setChannel(int channel);
    int channel() const;
    ChannelProfileResultPtr result() const { return m_result; }
    ChannelProfileRunner* runner() { return m_runner; }
    QString statusText() const;
    /// The captions of the examples shown, strongest first (tests).
    QStringList captions() const;

Q_SIGNALS:
    void shown();

private:
    void request();
    void show(const ChannelProfileResultPtr& result);
    void render();

    ChannelProfileRunner* m_runner;
    ChannelProfileRequest m_request;
    ChannelProfileResultPtr m_result;
    int m_wantedChannel = 0; // shown once the profile (and so the channel count) is there
    QLabel* m_title;
    QComboBox* m_dataSet;
    QSpinBox* m_channel;
    QProgressBar* m_progress;
    QToolButton* m_cancel;
    QGridLayout* m_grid;
    std::vector<QLabel*> m_images;
    std::vector<QLabel*> m_captions;
    QCustomPlot* m_plot;
    QCPBars* m_bars;
    QLabel* m_status;
};

} // namespace opscope::gui
