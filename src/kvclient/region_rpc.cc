#include "kvclient/region_rpc.h"

#include <algorithm>
#include <utility>

#include "common/logging.h"
#include "common/memcomparable.h"
#include "kvclient/read_errors.h"

namespace sluice::kvclient {

namespace {

// Retries without a backoff (NotLeader naming a leader) before backing off
// anyway, so two peers that name each other cannot spin.
constexpr int kMaxImmediateRetries = 3;

bool RetryableLocate(Code code) {
  return code == Code::kUnavailable || code == Code::kNotFound || code == Code::kTimeout ||
         code == Code::kBusy;
}

}  // namespace

RpcCall::RpcCall(const RegionRpcOptions& options, CancelToken token, uint64_t seed,
                 std::string what)
    : options_(options),
      token_(std::move(token)),
      what_(std::move(what)),
      deadline_(options.clock->Now() + options.timeout),
      backoff_(options.backoff, seed) {}

std::chrono::system_clock::time_point RpcCall::RpcDeadline() const {
  Clock::Duration left = deadline_ - options_.clock->Now();
  Clock::Duration rpc = std::min<Clock::Duration>(options_.rpc_timeout, left);
  rpc = std::max<Clock::Duration>(rpc, std::chrono::milliseconds(1));
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(rpc);
}

void RpcCall::Progress() {
  backoff_.Reset();
  immediate_ = 0;
}

Status RpcCall::Retry(const RpcAttempt& attempt) {
  if (!attempt.retry) return attempt.status;
  if (token_.cancelled()) return Cancelled(what_ + " cancelled");
  if (attempt.retry_now && immediate_ < kMaxImmediateRetries) {
    ++immediate_;
    return Status::Ok();
  }
  Clock::Duration delay = std::max<Clock::Duration>(backoff_.Next(), attempt.min_backoff);
  Clock::TimePoint wake = options_.clock->Now() + delay;
  if (wake >= deadline_) {
    const Status& reason =
        attempt.deadline_exceeded && !previous_.ok() ? previous_ : attempt.status;
    return reason.WithContext(what_ + " gave up at its deadline after " +
                              std::to_string(backoff_.attempts()) + " retries");
  }
  previous_ = attempt.status;
  if (!options_.clock->SleepUntil(wake, token_)) return Cancelled(what_ + " cancelled");
  return Status::Ok();
}

RegionRpc::RegionRpc(pd::RegionCache* cache, RegionRpcOptions options)
    : cache_(cache), options_(std::move(options)) {}

RpcCall RegionRpc::NewCall(std::string what) {
  return RpcCall(options_, cancel_.token(), next_seed_.fetch_add(1), std::move(what));
}

RegionRpcStats RegionRpc::stats() const {
  RegionRpcStats s;
  s.rpcs = rpcs_.load(std::memory_order_relaxed);
  s.rpc_failures = rpc_failures_.load(std::memory_order_relaxed);
  s.region_errors = region_errors_.load(std::memory_order_relaxed);
  return s;
}

Result<std::shared_ptr<RegionRpc::Channel>> RegionRpc::ChannelFor(const std::string& address) {
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

void RegionRpc::FillContext(const pd::Region& region, kvrpcpb::Context* context) {
  context->set_region_id(region.id.value());
  context->mutable_region_epoch()->set_conf_ver(region.conf_ver);
  context->mutable_region_epoch()->set_version(region.version);
  context->mutable_peer()->set_id(region.leader_peer_id);
  context->mutable_peer()->set_store_id(region.leader_store.value());
}

RpcAttempt RegionRpc::Locate(std::string_view key, RegionTarget* target) {
  return LocateComparable(memcomparable::EncodeBytes(key), target);
}

RpcAttempt RegionRpc::LocateComparable(std::string_view comparable_key, RegionTarget* target) {
  Result<pd::Region> region = cache_->LocateKey(comparable_key);
  if (!region.ok()) {
    return {region.status(), RetryableLocate(region.status().code())};
  }
  Result<std::string> address = cache_->StoreAddress(region->leader_store);
  if (!address.ok()) {
    // A tombstone or unknown leader store: PD's view of the region is stale.
    cache_->Invalidate(region->id);
    return {address.status(), RetryableLocate(address.status().code())};
  }
  auto decode = [&](const std::string& bound, std::string* raw) -> Status {
    raw->clear();
    if (bound.empty()) return Status::Ok();
    Result<std::string> decoded = memcomparable::DecodeWhole(bound);
    if (!decoded.ok()) {
      return ProtocolViolation("region " + std::to_string(region->id.value()) +
                               " has a boundary that is not memcomparable: " + Redact(bound));
    }
    *raw = std::move(decoded).value();
    return Status::Ok();
  };
  if (Status s = decode(region->start_key, &target->raw_start); !s.ok()) return {s, false};
  if (Status s = decode(region->end_key, &target->raw_end); !s.ok()) return {s, false};
  target->region = std::move(region).value();
  target->address = std::move(address).value();
  return {Status::Ok()};
}

RpcAttempt RegionRpc::RpcFailed(const RegionTarget& target, const grpc::Status& status) {
  rpc_failures_.fetch_add(1, std::memory_order_relaxed);
  if (cancel_.cancelled()) return {Cancelled("request to TiKV cancelled"), false};
  const std::string where =
      "store " + std::to_string(target.region.leader_store.value()) + " (" + target.address + ")";
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return {NotSupported(where + " does not serve the request: " + status.error_message()), false};
  }
  // The leader may have moved or its store gone: ask PD again.
  cache_->OnSendFail(target.region.id, /*reload=*/true);
  cache_->InvalidateStore(target.region.leader_store);
  RpcAttempt attempt{Unavailable(where + ": " + status.error_message()), true};
  attempt.deadline_exceeded = status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  return attempt;
}

RpcAttempt RegionRpc::RegionError(const RegionTarget& target, const errorpb::Error& error) {
  region_errors_.fetch_add(1, std::memory_order_relaxed);
  const RegionId id = target.region.id;
  RegionErrorPlan plan = PlanForRegionError(error, id);
  if (plan.update_leader) cache_->UpdateLeader(id, plan.leader_store, plan.leader_peer_id);
  if (plan.invalidate_region) cache_->Invalidate(id);
  if (plan.invalidate_store) cache_->InvalidateStore(target.region.leader_store);
  return {plan.status, true, plan.retry_now, plan.min_backoff};
}

}  // namespace sluice::kvclient
