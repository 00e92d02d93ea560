// The seed of opscope, in C++: MXNet Gluon's register_op_hook example.
//
//   model = mx.gluon.nn.HybridSequential(prefix="dense_")
//   with model.name_scope():
//       model.add(mx.gluon.nn.Dense(2))
//   model.initialize()
//   model.hybridize()
//   model.register_op_hook(mon_callback, monitor_all=True)
//   model(mx.nd.ones((2, 3, 4)))
//
// prints the 8 lines of MXNet's output with monitor_all=true, then the 2 lines with monitor_all=false.

#include "core/error.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/sequential.h"

#include <iostream>

using namespace opscope;
using namespace opscope::gluon;

namespace {

void monCallback(std::string_view tensorName, std::string_view opName, const TensorView&)
{
    std::cout << tensorName << "\n" << opName << "\n";
}

void run(bool monitorAll)
{
    auto model = std::make_shared<HybridSequential>("dense_");
    {
        auto scope = model->name_scope();
        model->add(std::make_shared<nn::Dense>(2));
    }
    model->initialize();
    model->hybridize();
    model->register_op_hook(monCallback, monitorAll);
    model->call(Tensor::ones(Shape({ 2, 3, 4 })));
}

}

int main()
{
    try {
        run(true);
        run(false);
        return 0;
    } catch (const Error& e) {
        std::cerr << "seed_example: " << e.what() << "\n";
        return 1;
    }
}
