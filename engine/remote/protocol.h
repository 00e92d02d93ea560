#pragma once

#include <cstddef>
#include <cstdint>

namespace opscope::remote {

/// The wire protocol's version (remote/proto/opscope_debug.proto, docs/protocol.md). A client and
/// a server of different versions refuse each other at Hello.
constexpr uint32_t kProtocolVersion = 1;

/// Metadata keys every call after Hello carries.
constexpr const char* kClientIdKey = "opscope-client";
/// HelloReply.instance: a server started again on the same address knows a client of its last run.
constexpr const char* kInstanceKey = "opscope-instance";
constexpr const char* kAuthorizationKey = "authorization"; ///< "Bearer <token>"

/// FetchTensor's chunks: well below gRPC's default 4 MiB message limit (1 MiB streamed fastest over
/// loopback: 870 MB/s, against 500 MB/s with 3 MiB chunks; docs/BENCHMARKS.md).
constexpr size_t kChunkBytes = size_t(1) << 20;
/// The largest request a server accepts (its replies are chunked or small).
constexpr int kMaxRequestBytes = 1 << 20;
/// The bytes of one SetInputs chunk: a message is at most kMaxRequestBytes, its fields included.
constexpr size_t kRequestChunkBytes = size_t(kMaxRequestBytes) - (size_t(64) << 10);
/// The most a client's SetInputs may stream, all inputs together.
constexpr size_t kMaxInputBytes = size_t(1) << 30;
/// The largest reply a client accepts (a slice of the value table, a big model's graph).
constexpr int kMaxReplyBytes = 64 << 20;

} // namespace opscope::remote
