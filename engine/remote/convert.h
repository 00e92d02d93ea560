#pragma once

// Between the engine's debugging types and the wire protocol's messages.

#include "debug/breakpoint.h"
#include "debug/engine.h"
#include "debug/model_description.h"
#include "debug/pause_event.h"
#include "debug/run_record.h"
#include "debug/session_options.h"
#include "debug/tensor_slice.h"
#include "debug/tensor_stats.h"
#include "opscope_debug.pb.h"

namespace opscope::remote {

namespace pb = opscope::remote::v1;

void toProto(const Shape& s, pb::Shape* out);
Shape fromProto(const pb::Shape& s);
pb::DType toProto(DType t);
DType fromProto(pb::DType t);
void toProto(const debug::TensorStats& s, pb::Stats* out);
debug::TensorStats fromProto(const pb::Stats& s);
void toProto(const debug::Histogram& h, pb::Histogram* out);
debug::Histogram fromProto(const pb::Histogram& h);

void toProto(const debug::Breakpoint& b, pb::Breakpoint* out);
/// Throws UsageError for a condition that does not parse.
debug::Breakpoint fromProto(const pb::Breakpoint& b);

void toProto(const debug::SessionOptions& o, pb::Options* out);
/// Over `base` (what the wire does not carry, the reference run, stays).
debug::SessionOptions fromProto(const pb::Options& o, debug::SessionOptions base);

/// The pause with every tensor's statistics (computed here).
void toProto(const debug::PauseEvent& e, pb::Pause* out);

/// A pause as a client sees it: the event without tensor values, and per tensor its shape, type
/// and statistics (fetch the values by name).
using RemotePause = debug::PauseReport;
RemotePause fromProto(const pb::Pause& p);

void toProto(const debug::RunRecord& r, pb::Record* out);
debug::RunRecord fromProto(const pb::Record& r);

void toProto(const debug::ModelDescription& d, pb::ModelInfo* out);
/// Throws (FileError, GraphError) when the graph does not parse.
debug::ModelDescription fromProto(const pb::ModelInfo& m);

void toProto(const debug::CompareRequest& r, pb::CompareRequest* out);
/// Throws UsageError for a field out of range (an unknown mode, kernels or precision).
debug::CompareRequest fromProto(const pb::CompareRequest& m);
/// The comparison and the runs' names, shapes and types (not their values).
void toProto(const debug::CompareOutcome& o, pb::CompareReply* out);
/// The runs' names only (valuesHere false). Throws when the graph does not parse.
debug::CompareOutcome fromProto(const pb::CompareReply& m);
void toProto(const debug::ExplainOptions& o, pb::ExplainRequest* out);
/// Throws UsageError for an unknown method or a negative count (progress is not carried).
debug::ExplainOptions fromProto(const pb::ExplainRequest& m);
/// A tensor whole in one message; fromProto throws UsageError when its bytes do not fit its shape.
void toProto(const Tensor& t, pb::DenseTensor* out);
Tensor fromProto(const pb::DenseTensor& m);
void toProto(const debug::Explanation& e, pb::Explanation* out);
/// Throws UsageError for an unknown method or a tensor whose bytes do not fit its shape.
debug::Explanation fromProto(const pb::Explanation& m);
void toProto(const debug::TensorSlice& s, pb::Slice* out);
debug::TensorSlice fromProto(const pb::Slice& s);

} // namespace opscope::remote
