#include "fuzz/onnx_mutators.h"

#include <onnx/onnx_pb.h>

#include <limits>

namespace opscope::fuzz {

namespace {
    template <class T> T pick(Rng& rng, T lo, T hi) { return std::uniform_int_distribution<T>(lo, hi)(rng); }

    int64_t interesting(Rng& rng)
    {
        const auto& v = interestingIntegers();
        const int64_t x = v[pick<size_t>(rng, 0, v.size() - 1)];
        return pick(rng, 0, 3) == 0 && x != std::numeric_limits<int64_t>::min() ? -x : x;
    }

    void mutateStructure(onnx::ModelProto& m, Rng& rng, const std::vector<std::string>& operators)
    {
        onnx::GraphProto& g = *m.mutable_graph();
        const int what = pick(rng, 0, 8);
        if (what == 0 && g.node_size() > 0) { // an attribute's integer(s)
            onnx::NodeProto& n = *g.mutable_node(pick(rng, 0, g.node_size() - 1));
            if (n.attribute_size() > 0) {
                onnx::AttributeProto& a = *n.mutable_attribute(pick(rng, 0, n.attribute_size() - 1));
                if (a.ints_size() > 0)
                    a.set_ints(pick(rng, 0, a.ints_size() - 1), interesting(rng));
                else if (a.type() == onnx::AttributeProto::FLOAT)
                    a.set_f(pick(rng, 0, 1) ? NAN : static_cast<float>(interesting(rng)));
                else
                    a.set_i(interesting(rng));
                return;
            }
            onnx::AttributeProto* a = n.add_attribute(); // an attribute the node does not take
            a->set_name(pick(rng, 0, 1) ? "axis" : "kernel_shape");
            a->set_type(onnx::AttributeProto::INT);
            a->set_i(interesting(rng));
        } else if (what == 1 && g.node_size() > 0 && !operators.empty()) { // another operator
            g.mutable_node(pick(rng, 0, g.node_size() - 1))->set_op_type(operators[pick<size_t>(rng, 0, operators.size() - 1)]);
        } else if (what == 2 && g.node_size() > 0) { // an input read from elsewhere, or absent
            onnx::NodeProto& n = *g.mutable_node(pick(rng, 0, g.node_size() - 1));
            const onnx::NodeProto& other = g.node(pick(rng, 0, g.node_size() - 1));
            const std::string name = pick(rng, 0, 2) == 0 || other.output_size() == 0 ? std::string() : other.output(0);
            if (n.input_size() > 0 && pick(rng, 0, 1))
                n.set_input(pick(rng, 0, n.input_size() - 1), name);
            else
                n.add_input(name);
        } else if (what == 3 && g.initializer_size() > 0) { // an initializer's dimensions
            onnx::TensorProto& t = *g.mutable_initializer(pick(rng, 0, g.initializer_size() - 1));
            if (t.dims_size() > 0 && pick(rng, 0, 3))
                t.set_dims(pick(rng, 0, t.dims_size() - 1), interesting(rng));
            else
                t.add_dims(pick<int64_t>(rng, 0, 3));
        } else if (what == 4 && g.initializer_size() > 0) { // an initializer's data or type
            onnx::TensorProto& t = *g.mutable_initializer(pick(rng, 0, g.initializer_size() - 1));
            if (pick(rng, 0, 1) && t.has_raw_data())
                t.set_raw_data(t.raw_data().substr(0, pick<size_t>(rng, 0, t.raw_data().size())));
            else
                t.set_data_type(pick(rng, 0, 17));
        } else if (what == 5) { // the opset
            for (auto& op : *m.mutable_opset_import())
                op.set_version(pick(rng, 0, 3) ? pick<int64_t>(rng, 1, 20) : interesting(rng));
        } else if (what == 6 && g.input_size() > 0) { // a declared input shape
            auto* shape = g.mutable_input(pick(rng, 0, g.input_size() - 1))->mutable_type()->mutable_tensor_type()->mutable_shape();
            if (shape->dim_size() > 0 && pick(rng, 0, 2))
                shape->mutable_dim(pick(rng, 0, shape->dim_size() - 1))->set_dim_value(interesting(rng));
            else
                shape->add_dim()->set_dim_param("n");
        } else if (what == 7 && g.node_size() > 1) { // a node removed
            g.mutable_node()->DeleteSubrange(pick(rng, 0, g.node_size() - 1), 1);
        } else if (g.node_size() > 0) { // a node's outputs renamed or doubled
            onnx::NodeProto& n = *g.mutable_node(pick(rng, 0, g.node_size() - 1));
            if (n.output_size() > 0 && pick(rng, 0, 1))
                n.set_output(pick(rng, 0, n.output_size() - 1), g.node(0).output_size() ? g.node(0).output(0) : "x");
            else
                n.add_output("extra_" + std::to_string(pick(rng, 0, 9)));
        }
    }
}

std::string mutateOnnx(const std::string& bytes, Rng& rng, const std::vector<std::string>& operators)
{
    static const std::vector<std::string> dictionary = { "Conv", "Reshape", "Gather", "axis", "kernel_shape", "pads",
        "\x08\xff\xff\xff\xff\x0f", "\x01", "\x00" };
    onnx::ModelProto m;
    if (pick(rng, 0, 3) == 0 || !m.ParseFromString(bytes)) return mutateBytes(bytes, rng, dictionary);
    const int edits = pick(rng, 1, 3);
    for (int i = 0; i < edits; ++i)
        mutateStructure(m, rng, operators);
    return m.SerializeAsString();
}

} // namespace opscope::fuzz
