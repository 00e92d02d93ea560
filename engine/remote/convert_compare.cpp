// Between a comparison's request and outcome (debug/compare_request.h) and the wire's messages.

#include "remote/convert.h"

#include "core/error.h"
#include "io/symbol_json.h"

namespace opscope::remote {

namespace {
    const char* kernelsName(KernelKind k)
    {
        return k == KernelKind::Reference ? "reference" : k == KernelKind::Dnnl ? "dnnl" : "auto";
    }

    KernelKind parseKernels(const std::string& name)
    {
        if (name.empty() || name == "auto") return KernelKind::Auto;
        if (name == "reference") return KernelKind::Reference;
        if (name == "dnnl") return KernelKind::Dnnl;
        throw UsageError("kernels_b '" + name + "': auto, reference or dnnl");
    }

    void namesToProto(const debug::RecordedRun& run, google::protobuf::RepeatedPtrField<pb::TensorInfo>* out)
    {
        for (const std::string& name : run.order) {
            pb::TensorInfo* t = out->Add();
            t->set_name(name);
            if (const auto it = run.tensors.find(name); it != run.tensors.end()) {
                toProto(it->second.shape(), t->mutable_shape());
                t->set_dtype(toProto(it->second.dtype()));
            }
        }
    }

    debug::RecordedRun namesFromProto(const google::protobuf::RepeatedPtrField<pb::TensorInfo>& tensors)
    {
        debug::RecordedRun run;
        for (const pb::TensorInfo& t : tensors)
            run.order.push_back(t.name());
        return run;
    }
}

void toProto(const debug::CompareRequest& r, pb::CompareRequest* out)
{
    using Source = debug::CompareRequest::Source;
    out->set_source(r.source == Source::OtherModel ? pb::CompareRequest::OTHER_MODEL
            : r.source == Source::Saved            ? pb::CompareRequest::SAVED
                                                   : pb::CompareRequest::SAME_MODEL);
    out->set_model_b(r.modelB);
    out->set_params_b(r.paramsB);
    out->set_saved_b(r.savedB);
    out->set_kernels_b(kernelsName(r.kernelsB));
    out->set_mode_b(debug::runModeName(r.modeB));
    for (const std::string& i : r.inputsB)
        out->add_inputs_b(i);
    for (const PrecisionRule& p : r.precisionB) {
        pb::PrecisionRule* rule = out->add_precision_b();
        rule->set_target(p.target);
        rule->set_precision(precisionName(p.precision));
    }
    out->set_map_file(r.mapFile);
    out->set_rtol(r.tol.rtol);
    out->set_atol(r.tol.atol);
}

debug::CompareRequest fromProto(const pb::CompareRequest& m)
{
    using Source = debug::CompareRequest::Source;
    debug::CompareRequest r;
    switch (m.source()) {
    case pb::CompareRequest::SAME_MODEL:
        r.source = Source::SameModel;
        break;
    case pb::CompareRequest::OTHER_MODEL:
        r.source = Source::OtherModel;
        break;
    case pb::CompareRequest::SAVED:
        r.source = Source::Saved;
        break;
    default:
        throw UsageError("source " + std::to_string(m.source()) + ": same model, other model or saved");
    }
    if (r.source == Source::OtherModel && m.model_b().empty()) throw UsageError("another model B, but model_b is empty");
    if (r.source == Source::Saved && m.saved_b().empty()) throw UsageError("a saved run B, but saved_b is empty");
    r.modelB = m.model_b();
    r.paramsB = m.params_b();
    r.savedB = m.saved_b();
    r.kernelsB = parseKernels(m.kernels_b());
    if (!m.mode_b().empty()) {
        const auto mode = debug::parseRunMode(m.mode_b());
        if (!mode) throw UsageError("mode_b '" + m.mode_b() + "': eager, hybrid, static_alloc or static_shape");
        r.modeB = *mode;
    }
    r.inputsB.assign(m.inputs_b().begin(), m.inputs_b().end());
    for (const pb::PrecisionRule& p : m.precision_b()) {
        if (p.target().empty()) throw UsageError("a precision rule without a target");
        if (p.precision() == "float16")
            r.precisionB.push_back({ p.target(), Precision::Float16 });
        else if (p.precision() == "bfloat16")
            r.precisionB.push_back({ p.target(), Precision::BFloat16 });
        else
            throw UsageError("precision '" + p.precision() + "' of " + p.target() + ": float16 or bfloat16");
    }
    r.mapFile = m.map_file();
    if (!(m.rtol() >= 0) || !(m.atol() >= 0)) throw UsageError("a tolerance must be 0 or more");
    r.tol.rtol = m.rtol();
    r.tol.atol = m.atol();
    return r;
}

void toProto(const debug::CompareOutcome& o, pb::CompareReply* out)
{
    if (o.graph) out->set_symbol_json(saveSymbolJson(*o.graph));
    out->set_comparison_id(o.id);
    namesToProto(o.a, out->mutable_tensors_a());
    namesToProto(o.b, out->mutable_tensors_b());
    for (const debug::TensorDiff& d : o.comparison.diffs) {
        pb::TensorDiff* p = out->add_diffs();
        p->set_name(d.name);
        toProto(d.shapeA, p->mutable_shape_a());
        toProto(d.shapeB, p->mutable_shape_b());
        p->set_dtype_a(toProto(d.typeA));
        p->set_dtype_b(toProto(d.typeB));
        p->set_problem(d.problem);
        p->set_max_abs(d.maxAbs);
        p->set_max_rel(d.maxRel);
        p->set_rel_l2(d.relL2);
        p->set_cosine(d.cosine);
        p->set_sqnr_db(d.sqnrDb);
        p->set_beyond(d.beyond);
        p->set_nan_only_a(d.nanOnlyA);
        p->set_nan_only_b(d.nanOnlyB);
        p->set_diverges(d.diverges);
    }
    for (const std::string& n : o.comparison.onlyA)
        out->add_only_a(n);
    for (const std::string& n : o.comparison.onlyB)
        out->add_only_b(n);
    if (o.comparison.firstDivergentNode) out->set_first_divergent_node(*o.comparison.firstDivergentNode);
    for (const debug::HeadAgreement& h : o.comparison.top1) {
        pb::HeadAgreement* p = out->add_top1();
        p->set_name(h.name);
        p->set_rows(h.rows);
        p->set_agree(h.agree);
    }
    out->set_elapsed_ms(o.elapsedMs);
}

debug::CompareOutcome fromProto(const pb::CompareReply& m)
{
    debug::CompareOutcome o;
    o.valuesHere = false;
    o.id = m.comparison_id();
    if (!m.symbol_json().empty())
        o.graph = std::make_shared<const Graph>(parseSymbolJson(m.symbol_json(), "the comparison's graph"));
    o.a = namesFromProto(m.tensors_a());
    o.b = namesFromProto(m.tensors_b());
    for (const pb::TensorDiff& p : m.diffs()) {
        debug::TensorDiff d;
        d.name = p.name();
        d.shapeA = fromProto(p.shape_a());
        d.shapeB = fromProto(p.shape_b());
        d.typeA = fromProto(p.dtype_a());
        d.typeB = fromProto(p.dtype_b());
        d.problem = p.problem();
        d.maxAbs = p.max_abs();
        d.maxRel = p.max_rel();
        d.relL2 = p.rel_l2();
        d.cosine = p.cosine();
        d.sqnrDb = p.sqnr_db();
        d.beyond = p.beyond();
        d.nanOnlyA = p.nan_only_a();
        d.nanOnlyB = p.nan_only_b();
        d.diverges = p.diverges();
        o.comparison.diffs.push_back(std::move(d));
    }
    o.comparison.onlyA.assign(m.only_a().begin(), m.only_a().end());
    o.comparison.onlyB.assign(m.only_b().begin(), m.only_b().end());
    if (!m.first_divergent_node().empty()) o.comparison.firstDivergentNode = m.first_divergent_node();
    for (const pb::HeadAgreement& h : m.top1())
        o.comparison.top1.push_back({ h.name(), h.rows(), h.agree() });
    o.elapsedMs = m.elapsed_ms();
    return o;
}

} // namespace opscope::remote
