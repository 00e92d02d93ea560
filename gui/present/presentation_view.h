#pragma once

#include "gui/session/model_info.h"
#include "gui/session/parameter_snapshot.h"
#include "tensor/tensor.h"

#include <memory>
#include <string>
#include <vector>

#include <QFutureWatcher>
#include <QWidget>

class QLabel;

namespace opscope::gui {

class FeatureMapView;
class LayerStrip;
class PredictionBars;

/// One forward pass of a model, every operator's first output kept in graph order.
struct ForwardPass {
    struct Layer {
        std::string node, op;
        Tensor output;
    };
    std::vector<Layer> layers;
    Tensor input;
    Tensor scores; ///< the last layer's output when it is one row of class scores, else empty
    std::vector<std::string> classNames;
    std::string error; ///< why there is no pass (the other fields are empty then)
};
using ForwardPassPtr = std::shared_ptr<const ForwardPass>;

/// Runs `model` (an instance of its own, loaded from its spec) on `input`, keeping every op's output.
/// Throws what loading or running throws.
ForwardPassPtr recordForwardPass(const ModelInfo& model, const Tensor& input, const ParameterSnapshot& weights = {});

/// View ▸ Presentation: a window for a lecture hall projector (made for 1280×720, larger fonts): the
/// model's layers as a clean chain on the left, the current layer's output large in the middle (its
/// feature maps), the input and the prediction's bars (class names, probabilities) on the right.
/// Left/Right (or Page Up/Down, Space) step layer by layer through the forward pass, Home/End jump,
/// F toggles full screen, Escape closes. The pass runs off the GUI thread when opened.
class PresentationView : public QWidget {
    Q_OBJECT
public:
    explicit PresentationView(QWidget* parent = nullptr);
    ~PresentationView() override;

    /// Records a forward pass of `model` on `input` (on a worker) and shows layer `layer` (0-based).
    void present(ModelInfoPtr model, const Tensor& input, int layer = 0, ParameterSnapshot weights = {});
    bool isRecording() const { return m_watcher.isRunning(); }
    int layerCount() const;
    int currentLayer() const { return m_current; }
    void showLayer(int index);
    ForwardPassPtr pass() const { return m_pass; }
    QString titleText() const;
    FeatureMapView* featureMaps() const { return m_maps; }

Q_SIGNALS:
    /// A layer is on screen (after a step or when the pass is ready).
    void layerShown(int index);
    void failed(const QString& error);

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    ModelInfoPtr m_model;
    ForwardPassPtr m_pass;
    int m_current = 0;
    int m_wanted = 0;
    QFutureWatcher<ForwardPassPtr> m_watcher;
    QLabel* m_title;
    QLabel* m_hint;
    LayerStrip* m_strip;
    FeatureMapView* m_maps;
    QLabel* m_input;
    PredictionBars* m_bars;
};

} // namespace opscope::gui
