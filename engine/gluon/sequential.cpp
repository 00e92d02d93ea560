#include "gluon/sequential.h"

namespace opscope::gluon {

std::vector<Value> Sequential::forward(const std::vector<Value>& inputs)
{
    std::vector<Value> x = inputs;
    for (const BlockPtr& c : children())
        x = c->forward(x);
    return x;
}

std::vector<Value> HybridSequential::hybrid_forward(const F&, const std::vector<Value>& inputs)
{
    std::vector<Value> x = inputs;
    for (const BlockPtr& c : children())
        x = c->forward(x);
    return x;
}

} // namespace opscope::gluon
