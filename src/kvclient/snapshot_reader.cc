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

// Retries without a backoff (NotLeader naming a leader) before backing off
// anyway, so two peers that name each other cannot spin.
constexpr int kMaxImmediateRetries = 3;

// The smaller of two raw end keys where empty means +inf.
std::string MinEnd(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  return std::string(std::min(a, b));
}

void FillContext(const pd::Region& region, kvrpcpb::Context* context) {
  context->set_region_id(region.id.value());
  context->mutable_region_epoch()->set_conf_ver(region.conf_ver);
  context->mutable_region_epoch()->set_version(region.version);
  context->mutable_peer()->set_id(region.leader_peer_id);
  context->mutable_peer()->set_store_id(region.leader_store.value());
}

bool RetryableLocate(Code code) {
  return code == Code::kUnavailable || code == Code::kNotFound || code == Code::kTimeout ||
         code == Code::kBusy;
}

}  // namespace

// One Scan or Get: its deadline, its backoff and the last retryable error.
class SnapshotReader::Call {
 public:
  Call(const SnapshotReaderOptions& options, CancelToken token, uint64_t seed)
      : options_(options),
        token_(std::move(token)),
        deadline_(options.clock->Now() + options.timeout),
        backoff_(options.backoff, seed) {}

  const CancelToken& token() const { return token_; }

  std::chrono::system_clock::time_point RpcDeadline() const {
    Clock::Duration left = deadline_ - options_.clock->Now();
    Clock::Duration rpc = std::min<Clock::Duration>(options_.rpc_timeout, left);
    rpc = std::max<Clock::Duration>(rpc, std::chrono::milliseconds(1));
    return std::chrono::system_clock::now() +
           std::chrono::duration_cast<std::chrono::system_clock::duration>(rpc);
  }

  // After an attempt that made progress.
  void Progress() {
    backoff_.Reset();
    immediate_ = 0;
  }

  // After a failed attempt: OK to try again (after waiting), or the error
  // that ends the call (not retryable, cancelled, or out of time).
  Status Retry(const Attempt& attempt) {
    if (!attempt.retry) return attempt.status;
    if (token_.cancelled()) return Cancelled("snapshot read cancelled");
    if (attempt.retry_now && immediate_ < kMaxImmediateRetries) {
      ++immediate_;
      return Status::Ok();
    }
    Clock::Duration delay = std::max<Clock::Duration>(backoff_.Next(), attempt.min_backoff);
    Clock::TimePoint wake = options_.clock->Now() + delay;
    if (wake >= deadline_) {
      const Status& reason =
          attempt.deadline_exceeded && !previous_.ok() ? previous_ : attempt.status;
      return reason.WithContext("snapshot read gave up at its deadline after " +
                                std::to_string(backoff_.attempts()) + " retries");
    }
    previous_ = attempt.status;
    if (!options_.clock->SleepUntil(wake, token_)) return Cancelled("snapshot read cancelled");
    return Status::Ok();
  }

 private:
  const SnapshotReaderOptions& options_;
  const CancelToken token_;
  const Clock::TimePoint deadline_;
  Backoff backoff_;
  int immediate_ = 0;
  Status previous_;  // The last retried error.
};

struct SnapshotReader::Channel {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<tikvpb::Tikv::Stub> stub;
};

SnapshotReader::SnapshotReader(pd::PdClient* pd, pd::RegionCache* cache,
                               SnapshotReaderOptions options)
    : pd_(pd), cache_(cache), options_(std::move(options)) {}

SnapshotReader::~SnapshotReader() { Stop(); }

void SnapshotReader::Stop() { cancel_.Cancel(); }

SnapshotReaderStats SnapshotReader::stats() const {
  SnapshotReaderStats s;
  s.rpcs = rpcs_.load(std::memory_order_relaxed);
  s.rpc_failures = rpc_failures_.load(std::memory_order_relaxed);
  s.region_errors = region_errors_.load(std::memory_order_relaxed);
  s.lock_waits = lock_waits_.load(std::memory_order_relaxed);
  return s;
}

Result<std::shared_ptr<SnapshotReader::Channel>> SnapshotReader::ChannelFor(
    const std::string& address) {
  MutexLock lock(&mu_);
  auto it = channels_.find(address);
  if (it != channels_.end()) return it->second;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  // A connection of our own, which reconnects quickly after a store restart.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  const int base_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.backoff.base).count());
  const int max_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.backoff.max).count());
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::max(base_ms, 1));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, std::max(base_ms, 1));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, std::max(max_ms, 1));
  auto channel = std::make_shared<Channel>();
  channel->channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  channel->stub = tikvpb::Tikv::NewStub(channel->channel);
  channels_.emplace(address, channel);
  return channel;
}

SnapshotReader::Attempt SnapshotReader::Locate(std::string_view key, Target* target) {
  Result<pd::Region> region = cache_->LocateKey(memcomparable::EncodeBytes(key));
  if (!region.ok()) {
    return {region.status(), RetryableLocate(region.status().code())};
  }
  Result<std::string> address = cache_->StoreAddress(region->leader_store);
  if (!address.ok()) {
    // A tombstone or unknown leader store: PD's view of the region is stale.
    cache_->Invalidate(region->id);
    return {address.status(), RetryableLocate(address.status().code())};
  }
  target->raw_end.clear();
  if (!region->end_key.empty()) {
    Result<std::string> raw_end = memcomparable::DecodeWhole(region->end_key);
    if (!raw_end.ok()) {
      return {
          ProtocolViolation("region " + std::to_string(region->id.value()) +
                            " ends at a key that is not memcomparable: " + Redact(region->end_key)),
          false};
    }
    target->raw_end = std::move(raw_end).value();
  }
  target->region = std::move(region).value();
  target->address = std::move(address).value();
  return {Status::Ok()};
}

SnapshotReader::Attempt SnapshotReader::RpcFailed(const Target& target,
                                                  const grpc::Status& status) {
  rpc_failures_.fetch_add(1, std::memory_order_relaxed);
  if (cancel_.cancelled()) return {Cancelled("snapshot read cancelled"), false};
  const std::string where =
      "store " + std::to_string(target.region.leader_store.value()) + " (" + target.address + ")";
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return {NotSupported(where + " does not serve snapshot reads: " + status.error_message()),
            false};
  }
  // The leader may have moved or its store gone: ask PD again.
  cache_->OnSendFail(target.region.id, /*reload=*/true);
  cache_->InvalidateStore(target.region.leader_store);
  Attempt attempt{Unavailable(where + ": " + status.error_message()), true};
  attempt.deadline_exceeded = status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  return attempt;
}

SnapshotReader::Attempt SnapshotReader::RegionError(const Target& target,
                                                    const errorpb::Error& error) {
  region_errors_.fetch_add(1, std::memory_order_relaxed);
  const RegionId id = target.region.id;
  RegionErrorPlan plan = PlanForRegionError(error, id);
  if (plan.update_leader) cache_->UpdateLeader(id, plan.leader_store, plan.leader_peer_id);
  if (plan.invalidate_region) cache_->Invalidate(id);
  if (plan.invalidate_store) cache_->InvalidateStore(target.region.leader_store);
  return {plan.status, true, plan.retry_now, plan.min_backoff};
}

SnapshotReader::Attempt SnapshotReader::KeyError(const kvrpcpb::KeyError& error, Ts version) {
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

SnapshotReader::Attempt SnapshotReader::ScanOnce(const Call& call, const Target& target,
                                                 const std::string& cursor, const std::string& end,
                                                 uint32_t batch, Ts version, KvPairs* out) {
  Result<std::shared_ptr<Channel>> channel = ChannelFor(target.address);
  if (!channel.ok()) return {channel.status(), true};
  kvrpcpb::ScanRequest request;
  FillContext(target.region, request.mutable_context());
  request.set_start_key(cursor);
  request.set_end_key(end);
  request.set_limit(batch);
  request.set_version(version.value());
  kvrpcpb::ScanResponse response;
  grpc::ClientContext context;
  context.set_deadline(call.RpcDeadline());
  grpc::Status status;
  {
    CancelCallback on_cancel(call.token(), [&context] { context.TryCancel(); });
    rpcs_.fetch_add(1, std::memory_order_relaxed);
    status = (*channel)->stub->KvScan(&context, request, &response);
  }
  if (!status.ok()) return RpcFailed(target, status);
  if (response.has_region_error()) return RegionError(target, response.region_error());
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

SnapshotReader::Attempt SnapshotReader::GetOnce(const Call& call, const Target& target,
                                                std::string_view key, Ts version,
                                                std::optional<std::string>* out) {
  Result<std::shared_ptr<Channel>> channel = ChannelFor(target.address);
  if (!channel.ok()) return {channel.status(), true};
  kvrpcpb::GetRequest request;
  FillContext(target.region, request.mutable_context());
  request.set_key(std::string(key));
  request.set_version(version.value());
  kvrpcpb::GetResponse response;
  grpc::ClientContext context;
  context.set_deadline(call.RpcDeadline());
  grpc::Status status;
  {
    CancelCallback on_cancel(call.token(), [&context] { context.TryCancel(); });
    rpcs_.fetch_add(1, std::memory_order_relaxed);
    status = (*channel)->stub->KvGet(&context, request, &response);
  }
  if (!status.ok()) return RpcFailed(target, status);
  if (response.has_region_error()) return RegionError(target, response.region_error());
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
  Call call(options_, cancel_.token(), next_seed_.fetch_add(1));
  const uint32_t scan_batch = std::max<uint32_t>(options_.scan_batch, 1);
  KvPairs out;
  std::string cursor(start);
  while (limit == 0 || out.size() < limit) {
    if (!end.empty() && cursor >= end) break;
    Target target;
    Attempt attempt = Locate(cursor, &target);
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
  Call call(options_, cancel_.token(), next_seed_.fetch_add(1));
  while (true) {
    Target target;
    Attempt attempt = Locate(key, &target);
    std::optional<std::string> value;
    if (attempt.status.ok()) {
      attempt = GetOnce(call, target, key, version, &value);
      if (attempt.status.ok()) return value;
    }
    RETURN_IF_ERROR(call.Retry(attempt));
  }
}

}  // namespace sluice::kvclient
