#include "kvclient/snapshot_reader.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <utility>

#include "common/logging.h"
#include "common/memcomparable.h"
#include "kvclient/read_errors.h"
#include "tikvpb.grpc.pb.h"

namespace sluice::kvclient {

namespace {

// The smaller of two raw end keys where empty means +inf.
std::string MinEnd(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  return std::string(std::min(a, b));
}

RegionRpcOptions RpcOptions(const SnapshotReaderOptions& options) {
  RegionRpcOptions out;
  out.clock = options.clock;
  out.timeout = options.timeout;
  out.rpc_timeout = options.rpc_timeout;
  out.backoff = options.backoff;
  return out;
}

constexpr const char* kReadWhat = "snapshot read";

}  // namespace

SnapshotReader::SnapshotReader(pd::PdClient* pd, pd::RegionCache* cache,
                               SnapshotReaderOptions options)
    : pd_(pd),
      scan_batch_(std::max<uint32_t>(options.scan_batch, 1)),
      rpc_(cache, RpcOptions(options)) {}

SnapshotReader::~SnapshotReader() { Stop(); }

void SnapshotReader::Stop() { rpc_.Stop(); }

SnapshotReaderStats SnapshotReader::stats() const {
  RegionRpcStats rpc = rpc_.stats();
  SnapshotReaderStats s;
  s.rpcs = rpc.rpcs;
  s.rpc_failures = rpc.rpc_failures;
  s.region_errors = rpc.region_errors;
  s.lock_waits = lock_waits_.load(std::memory_order_relaxed);
  return s;
}

RpcAttempt SnapshotReader::KeyError(const kvrpcpb::KeyError& error, Ts version) {
  Status status = KeyErrorStatus(error);
  if (IsLocked(error)) {
    lock_waits_.fetch_add(1, std::memory_order_relaxed);
    return {status, true};
  }
  if (status.code() == Code::kAborted) {
    // What TiKV cannot read any more is most likely garbage collected.
    Result<Ts> safe_point = pd_->GetGcSafePoint();
    if (safe_point.ok() && version < *safe_point) {
      return {Status(Code::kGcSafepointExceeded,
                     "snapshot read at " + std::to_string(version.value()) +
                         " is below the GC safe point " + std::to_string(safe_point->value())),
              false};
    }
  }
  return {status, status.code() == Code::kUnavailable};
}

RpcAttempt SnapshotReader::ScanOnce(const RpcCall& call, const RegionTarget& target,
                                    const std::string& cursor, const std::string& end,
                                    uint32_t batch, Ts version, KvPairs* out) {
  kvrpcpb::ScanRequest request;
  request.set_start_key(cursor);
  request.set_end_key(end);
  request.set_limit(batch);
  request.set_version(version.value());
  kvrpcpb::ScanResponse response;
  RpcAttempt sent = rpc_.Send(call, target, &RegionRpc::Stub::KvScan, &request, &response);
  if (!sent.status.ok()) return sent;
  if (response.has_error()) return KeyError(response.error(), version);
  for (const kvrpcpb::KvPair& pair : response.pairs()) {
    if (pair.has_error()) return KeyError(pair.error(), version);
  }
  if (Status check = CheckScanPairs(response, cursor, end, batch); !check.ok()) {
    return {check.WithContext("region " + std::to_string(target.region.id.value())), false};
  }
  for (kvrpcpb::KvPair& pair : *response.mutable_pairs()) {
    out->emplace_back(std::move(*pair.mutable_key()), std::move(*pair.mutable_value()));
  }
  return {Status::Ok()};
}

RpcAttempt SnapshotReader::GetOnce(const RpcCall& call, const RegionTarget& target,
                                   std::string_view key, Ts version,
                                   std::optional<std::string>* out) {
  kvrpcpb::GetRequest request;
  request.set_key(std::string(key));
  request.set_version(version.value());
  kvrpcpb::GetResponse response;
  RpcAttempt sent = rpc_.Send(call, target, &RegionRpc::Stub::KvGet, &request, &response);
  if (!sent.status.ok()) return sent;
  if (response.has_error()) return KeyError(response.error(), version);
  if (response.not_found()) {
    out->reset();
  } else {
    *out = std::move(*response.mutable_value());
  }
  return {Status::Ok()};
}

Result<KvPairs> SnapshotReader::Scan(std::string_view start, std::string_view end, Ts version,
                                     size_t limit) {
  if (!end.empty() && end <= start) return KvPairs{};
  RpcCall call = rpc_.NewCall(kReadWhat);
  const uint32_t scan_batch = scan_batch_;
  KvPairs out;
  std::string cursor(start);
  while (limit == 0 || out.size() < limit) {
    if (!end.empty() && cursor >= end) break;
    RegionTarget target;
    RpcAttempt attempt = rpc_.Locate(cursor, &target);
    if (attempt.status.ok()) {
      const std::string request_end = MinEnd(end, target.raw_end);
      const uint32_t batch =
          limit == 0 ? scan_batch
                     : static_cast<uint32_t>(std::min<size_t>(scan_batch, limit - out.size()));
      const size_t before = out.size();
      attempt = ScanOnce(call, target, cursor, request_end, batch, version, &out);
      if (attempt.status.ok()) {
        call.Progress();
        if (out.size() - before == batch) {
          cursor = out.back().first;
          cursor.push_back('\0');  // The next key after the last one read.
        } else if (request_end.empty()) {
          break;  // The last region is read to its end.
        } else {
          cursor = request_end;  // On to the next region (or done at `end`).
        }
        continue;
      }
    }
    RETURN_IF_ERROR(call.Retry(attempt));
  }
  return out;
}

Result<std::optional<std::string>> SnapshotReader::Get(std::string_view key, Ts version) {
  RpcCall call = rpc_.NewCall(kReadWhat);
  while (true) {
    RegionTarget target;
    RpcAttempt attempt = rpc_.Locate(key, &target);
    std::optional<std::string> value;
    if (attempt.status.ok()) {
      attempt = GetOnce(call, target, key, version, &value);
      if (attempt.status.ok()) return value;
    }
    RETURN_IF_ERROR(call.Retry(attempt));
  }
}

}  // namespace sluice::kvclient
