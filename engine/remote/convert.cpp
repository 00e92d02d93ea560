#include "remote/convert.h"

#include "core/error.h"
#include "io/symbol_json.h"

namespace opscope::remote {

void toProto(const Shape& s, pb::Shape* out)
{
    out->Clear();
    for (int64_t d : s.dims())
        out->add_dims(d);
    out->set_scalar(s.isScalar());
}

Shape fromProto(const pb::Shape& s)
{
    if (s.scalar()) return Shape::scalar();
    if (s.dims_size() > Shape::kMaxDims)
        throw UsageError("a shape of " + std::to_string(s.dims_size()) + " dimensions (at most "
            + std::to_string(Shape::kMaxDims) + ")");
    Shape r;
    for (int64_t d : s.dims())
        r.push_back(d);
    return r;
}

pb::DType toProto(DType t)
{
    switch (t) {
    case DType::Float32: return pb::FLOAT32;
    case DType::Float64: return pb::FLOAT64;
    case DType::Float16: return pb::FLOAT16;
    case DType::Int64: return pb::INT64;
    case DType::Int32: return pb::INT32;
    case DType::Int8: return pb::INT8;
    case DType::UInt8: return pb::UINT8;
    case DType::Bool: return pb::BOOL;
    }
    return pb::FLOAT32;
}

DType fromProto(pb::DType t)
{
    switch (t) {
    case pb::FLOAT32: return DType::Float32;
    case pb::FLOAT64: return DType::Float64;
    case pb::FLOAT16: return DType::Float16;
    case pb::INT64: return DType::Int64;
    case pb::INT32: return DType::Int32;
    case pb::INT8: return DType::Int8;
    case pb::UINT8: return DType::UInt8;
    case pb::BOOL: return DType::Bool;
    default: throw UsageError("unknown element type " + std::to_string(static_cast<int>(t)));
    }
}

void toProto(const debug::TensorStats& s, pb::Stats* out)
{
    out->set_count(s.count);
    out->set_finite(s.finite);
    out->set_nan(s.nan);
    out->set_pos_inf(s.posInf);
    out->set_neg_inf(s.negInf);
    out->set_zeros(s.zeros);
    out->set_min(s.min);
    out->set_max(s.max);
    out->set_mean(s.mean);
    out->set_std(s.std);
    out->set_l2(s.l2);
}

debug::TensorStats fromProto(const pb::Stats& s)
{
    debug::TensorStats r;
    r.count = s.count();
    r.finite = s.finite();
    r.nan = s.nan();
    r.posInf = s.pos_inf();
    r.negInf = s.neg_inf();
    r.zeros = s.zeros();
    r.min = s.min();
    r.max = s.max();
    r.mean = s.mean();
    r.std = s.std();
    r.l2 = s.l2();
    return r;
}

void toProto(const debug::Histogram& h, pb::Histogram* out)
{
    out->set_log_magnitude(h.scale == debug::HistogramScale::LogMagnitude);
    out->set_lo(h.lo);
    out->set_hi(h.hi);
    out->mutable_bins()->Assign(h.bins.begin(), h.bins.end());
    out->set_nan(h.nan);
    out->set_inf(h.inf);
    out->set_zeros(h.zeros);
}

debug::Histogram fromProto(const pb::Histogram& h)
{
    debug::Histogram r;
    r.scale = h.log_magnitude() ? debug::HistogramScale::LogMagnitude : debug::HistogramScale::Linear;
    r.lo = h.lo();
    r.hi = h.hi();
    r.bins.assign(h.bins().begin(), h.bins().end());
    r.nan = h.nan();
    r.inf = h.inf();
    r.zeros = h.zeros();
    return r;
}

void toProto(const debug::Breakpoint& b, pb::Breakpoint* out)
{
    out->set_id(b.id);
    out->set_kind(b.kind == debug::Breakpoint::Kind::Node ? pb::Breakpoint::NODE
            : b.kind == debug::Breakpoint::Kind::Tensor ? pb::Breakpoint::TENSOR
                                                        : pb::Breakpoint::WATCH);
    out->set_location(b.location);
    out->set_after(b.phase == OpPhase::After);
    out->set_condition(b.condition.kind == debug::Condition::Kind::Always && !b.condition.gradientsOnly
            ? std::string()
            : b.condition.str());
    out->set_enabled(b.enabled);
    out->set_ignore_count(b.ignoreCount);
    out->set_hit_count(b.hitCount);
}

debug::Breakpoint fromProto(const pb::Breakpoint& b)
{
    debug::Breakpoint r;
    r.id = b.id();
    switch (b.kind()) {
    case pb::Breakpoint::NODE: r.kind = debug::Breakpoint::Kind::Node; break;
    case pb::Breakpoint::TENSOR: r.kind = debug::Breakpoint::Kind::Tensor; break;
    case pb::Breakpoint::WATCH: r.kind = debug::Breakpoint::Kind::Watch; break;
    default: throw UsageError("unknown breakpoint kind " + std::to_string(static_cast<int>(b.kind())));
    }
    r.location = b.location();
    r.phase = b.after() ? OpPhase::After : OpPhase::Before;
    if (!b.condition().empty()) r.condition = debug::Condition::parse(b.condition());
    r.enabled = b.enabled();
    if (b.ignore_count() < 0) throw UsageError("a breakpoint's ignore count must not be negative");
    r.ignoreCount = b.ignore_count();
    r.hitCount = b.hit_count();
    return r;
}

void toProto(const debug::SessionOptions& o, pb::Options* out)
{
    out->set_record(static_cast<pb::Options::RecordLevel>(o.record));
    out->set_tensor_budget_bytes(o.tensorBudgetBytes);
    out->set_record_histogram_bins(o.recordHistogramBins);
    out->set_histogram_bins(o.histogramBins);
    out->set_histogram_log_magnitude(o.histogramScale == debug::HistogramScale::LogMagnitude);
    out->set_record_inputs(o.recordInputs);
}

debug::SessionOptions fromProto(const pb::Options& o, debug::SessionOptions base)
{
    if (o.record() < pb::Options::NONE || o.record() > pb::Options::TENSORS)
        throw UsageError("unknown record level " + std::to_string(static_cast<int>(o.record())));
    base.record = static_cast<debug::RecordLevel>(o.record());
    if (o.tensor_budget_bytes()) base.tensorBudgetBytes = o.tensor_budget_bytes();
    for (int bins : { o.record_histogram_bins(), o.histogram_bins() })
        if (bins < 0 || bins > 65536) throw UsageError("histogram bins " + std::to_string(bins) + " (0 to 65536)");
    if (o.record_histogram_bins()) base.recordHistogramBins = o.record_histogram_bins();
    if (o.histogram_bins()) base.histogramBins = o.histogram_bins();
    base.histogramScale = o.histogram_log_magnitude() ? debug::HistogramScale::LogMagnitude : debug::HistogramScale::Linear;
    base.recordInputs = o.record_inputs();
    return base;
}

void toProto(const debug::PauseEvent& e, pb::Pause* out)
{
    out->set_run_id(e.runId);
    out->set_sequence(e.sequence);
    out->set_node_id(e.nodeId);
    out->set_node(e.node);
    out->set_op(e.op);
    out->set_after(e.phase == OpPhase::After);
    out->set_block_path(e.blockPath);
    out->set_reason(debug::toString(e.reason));
    for (int id : e.breakpointIds)
        out->add_breakpoint_ids(id);
    for (size_t i = 0; i < e.tensors.size(); ++i) {
        const debug::PausedTensor& t = e.tensors[i];
        pb::TensorInfo* ti = out->add_tensors();
        ti->set_name(t.name);
        ti->set_slot(t.slot);
        ti->set_is_input(t.isInput);
        ti->set_index(t.index);
        toProto(t.values.shape(), ti->mutable_shape());
        ti->set_dtype(toProto(t.values.dtype()));
        toProto(static_cast<int>(i) == e.focus ? e.focusStats : debug::computeStats(t.values.view()), ti->mutable_stats());
    }
    out->set_focus(e.focus);
    toProto(e.focusHistogram, out->mutable_focus_histogram());
}

namespace {
    debug::PauseReason reasonOf(const std::string& text)
    {
        using R = debug::PauseReason;
        for (R r : { R::Breakpoint, R::Watchpoint, R::Entry, R::Step, R::StepOver, R::StepOut, R::RunTo, R::Pause })
            if (text == debug::toString(r)) return r;
        throw UsageError("unknown pause reason '" + text + "'");
    }
}

RemotePause fromProto(const pb::Pause& p)
{
    RemotePause r;
    debug::PauseEvent& e = r.event;
    e.runId = p.run_id();
    e.sequence = p.sequence();
    e.nodeId = p.node_id();
    e.node = p.node();
    e.op = p.op();
    e.phase = p.after() ? OpPhase::After : OpPhase::Before;
    e.blockPath = p.block_path();
    e.reason = reasonOf(p.reason());
    e.breakpointIds.assign(p.breakpoint_ids().begin(), p.breakpoint_ids().end());
    for (const pb::TensorInfo& ti : p.tensors()) {
        debug::PausedTensor t;
        t.name = ti.name();
        t.slot = ti.slot();
        t.isInput = ti.is_input();
        t.index = ti.index();
        e.tensors.push_back(std::move(t));
        r.shapes.push_back(fromProto(ti.shape()));
        r.dtypes.push_back(fromProto(ti.dtype()));
        r.stats.push_back(fromProto(ti.stats()));
    }
    e.focus = p.focus() >= 0 && p.focus() < p.tensors_size() ? p.focus() : -1;
    if (e.focus >= 0) e.focusStats = r.stats[static_cast<size_t>(e.focus)];
    e.focusHistogram = fromProto(p.focus_histogram());
    return r;
}

void toProto(const debug::RunRecord& r, pb::Record* out)
{
    out->set_run_id(r.runId);
    out->set_status(r.status == RunStatus::Completed ? "completed" : "stopped");
    for (const debug::OpRecord& op : r.ops) {
        pb::OpRecord* o = out->add_ops();
        o->set_node_id(op.nodeId);
        o->set_node(op.node);
        o->set_op(op.op);
        o->set_time_ns(op.timeNs);
        o->set_first_call(op.firstCall);
        o->set_warm_ns(op.warmNs);
        o->set_prepare_ns(op.prepareNs);
        for (const std::string& n : op.outputNames)
            o->add_output_names(n);
        for (const Shape& s : op.outputShapes)
            toProto(s, o->add_output_shapes());
        for (const debug::TensorStats& s : op.outputStats)
            toProto(s, o->add_output_stats());
        for (const debug::Histogram& h : op.outputHistograms)
            toProto(h, o->add_output_histograms());
        for (const std::string& n : op.inputNames)
            o->add_input_names(n);
        for (const Shape& s : op.inputShapes)
            toProto(s, o->add_input_shapes());
        for (const debug::TensorStats& s : op.inputStats)
            toProto(s, o->add_input_stats());
    }
    for (const std::string& n : r.keptNames())
        out->add_kept_tensors(n);
    out->set_dropped_tensors(r.droppedTensors());
}

debug::RunRecord fromProto(const pb::Record& r)
{
    debug::RunRecord out;
    out.runId = r.run_id();
    out.status = r.status() == "stopped" ? RunStatus::Stopped : RunStatus::Completed;
    for (const pb::OpRecord& o : r.ops()) {
        debug::OpRecord op;
        op.nodeId = o.node_id();
        op.node = o.node();
        op.op = o.op();
        op.timeNs = o.time_ns();
        op.firstCall = o.first_call();
        op.warmNs = o.warm_ns();
        op.prepareNs = o.prepare_ns();
        op.outputNames.assign(o.output_names().begin(), o.output_names().end());
        for (const pb::Shape& s : o.output_shapes())
            op.outputShapes.push_back(fromProto(s));
        for (const pb::Stats& s : o.output_stats())
            op.outputStats.push_back(fromProto(s));
        for (const pb::Histogram& h : o.output_histograms())
            op.outputHistograms.push_back(fromProto(h));
        op.inputNames.assign(o.input_names().begin(), o.input_names().end());
        for (const pb::Shape& s : o.input_shapes())
            op.inputShapes.push_back(fromProto(s));
        for (const pb::Stats& s : o.input_stats())
            op.inputStats.push_back(fromProto(s));
        out.ops.push_back(std::move(op));
    }
    return out;
}

void toProto(const debug::ModelDescription& d, pb::ModelInfo* out)
{
    out->set_source(d.source);
    for (const std::string& l : d.headerLines)
        out->add_header_lines(l);
    for (const auto& in : d.inputs) {
        pb::NamedShape* n = out->add_inputs();
        n->set_name(in.name);
        toProto(in.shape, n->mutable_shape());
        n->set_hint(in.hint);
    }
    for (const std::string& l : d.labelNames)
        out->add_label_names(l);
    for (const std::string& c : d.classNames)
        out->add_class_names(c);
    if (d.graph) out->set_symbol_json(saveSymbolJson(*d.graph));
    for (const auto& [node, shapes] : d.shapes) {
        pb::NodeShapes* ns = out->add_shapes();
        ns->set_node(node);
        for (const Shape& s : shapes)
            toProto(s, ns->add_outputs());
    }
    for (const auto& [name, shape] : d.parameters) {
        pb::NamedShape* n = out->add_parameters();
        n->set_name(name);
        toProto(shape, n->mutable_shape());
    }
}

debug::ModelDescription fromProto(const pb::ModelInfo& m)
{
    debug::ModelDescription d;
    d.source = m.source();
    d.headerLines.assign(m.header_lines().begin(), m.header_lines().end());
    for (const pb::NamedShape& n : m.inputs())
        d.inputs.push_back({ n.name(), fromProto(n.shape()), n.hint() });
    d.labelNames.assign(m.label_names().begin(), m.label_names().end());
    d.classNames.assign(m.class_names().begin(), m.class_names().end());
    if (!m.symbol_json().empty())
        d.graph = std::make_shared<const Graph>(parseSymbolJson(m.symbol_json(), "the server's graph"));
    for (const pb::NodeShapes& ns : m.shapes()) {
        std::vector<Shape>& v = d.shapes[ns.node()];
        for (const pb::Shape& s : ns.outputs())
            v.push_back(fromProto(s));
    }
    for (const pb::NamedShape& n : m.parameters())
        d.parameters.emplace_back(n.name(), fromProto(n.shape()));
    return d;
}

void toProto(const debug::TensorSlice& s, pb::Slice* out)
{
    out->set_rows(s.rows);
    out->set_cols(s.cols);
    out->set_row_begin(s.rowBegin);
    out->set_col_begin(s.colBegin);
    out->set_dtype(toProto(s.dtype));
    out->mutable_values()->Assign(s.values.begin(), s.values.end());
}

debug::TensorSlice fromProto(const pb::Slice& s)
{
    debug::TensorSlice r;
    r.rows = s.rows();
    r.cols = s.cols();
    r.rowBegin = s.row_begin();
    r.colBegin = s.col_begin();
    r.dtype = fromProto(s.dtype());
    r.values.assign(s.values().begin(), s.values().end());
    if (static_cast<int64_t>(r.values.size()) != r.rows * r.cols)
        throw UsageError("a slice of " + std::to_string(r.rows) + "x" + std::to_string(r.cols) + " with "
            + std::to_string(r.values.size()) + " values");
    return r;
}

} // namespace opscope::remote
