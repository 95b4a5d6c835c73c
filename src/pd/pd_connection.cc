#include "pd/pd_connection.h"

#include <random>
#include <utility>

#include "common/logging.h"
#include "pd/pd_wire.h"

namespace sluice::pd {

namespace {

BackoffOptions ReconnectBackoff(const PdClientOptions& options) {
  BackoffOptions backoff;
  backoff.base = options.backoff_base;
  backoff.max = options.backoff_max;
  return backoff;
}

int64_t Millis(std::chrono::milliseconds d) { return static_cast<int64_t>(d.count()); }

}  // namespace

PdConnection::PdConnection(PdClientOptions options)
    : options_(std::move(options)), backoff_(ReconnectBackoff(options_), std::random_device{}()) {}

pdpb::RequestHeader PdConnection::Header() const {
  pdpb::RequestHeader header;
  header.set_cluster_id(cluster_id());
  header.set_caller_id(options_.caller_id);
  return header;
}

std::chrono::system_clock::time_point PdConnection::Deadline() const {
  return std::chrono::system_clock::now() + options_.rpc_timeout;
}

std::shared_ptr<PdStub> PdConnection::Dial(const std::string& address) const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  // A connection of our own, not a subchannel shared with an earlier channel
  // that may still be backing off from a PD that was down.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              static_cast<int>(Millis(options_.backoff_base)));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, static_cast<int>(Millis(options_.backoff_base)));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(Millis(options_.backoff_max)));
  auto stub = std::make_shared<PdStub>();
  stub->address = address;
  stub->channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  stub->stub = pdpb::PD::NewStub(stub->channel);
  return stub;
}

Status PdConnection::Connect() {
  Result<std::shared_ptr<PdStub>> stub = Get();
  return stub.status();
}

Status PdConnection::Current(std::shared_ptr<PdStub>* out) {
  if (stopped_) return Cancelled("pd client stopped");
  *out = current_;
  if (current_ != nullptr) return Status::Ok();
  if (options_.clock->Now() < retry_at_) {
    return last_error_.WithContext("pd unreachable, reconnect backing off");
  }
  return Status::Ok();
}

Result<std::shared_ptr<PdStub>> PdConnection::Get() {
  std::shared_ptr<PdStub> stub;
  {
    MutexLock lock(&mu_);
    RETURN_IF_ERROR(Current(&stub));
    if (stub != nullptr) return stub;
  }
  MutexLock connect(&connect_mu_);
  {
    MutexLock lock(&mu_);  // Another caller may have reconnected meanwhile.
    RETURN_IF_ERROR(Current(&stub));
    if (stub != nullptr) return stub;
  }
  Result<std::shared_ptr<PdStub>> found = Discover();
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("pd client stopped");
  if (!found.ok()) {
    last_error_ = found.status();
    retry_at_ = options_.clock->Now() + backoff_.Next();
    LOG_WARN("pd: no PD leader reachable ({}), attempt {}", found.status().ToString(),
             backoff_.attempts());
    return found.status();
  }
  backoff_.Reset();
  current_ = *found;
  connects_.fetch_add(1, std::memory_order_relaxed);
  LOG_INFO("pd: connected to PD leader {} (cluster {})", current_->address, cluster_id());
  return current_;
}

Result<std::shared_ptr<PdStub>> PdConnection::Discover() {
  Status error = Unavailable("pd: no endpoints");
  for (const std::string& endpoint : options_.endpoints) {
    Result<std::shared_ptr<PdStub>> stub = TryEndpoint(endpoint);
    if (stub.ok()) return stub;
    // An endpoint of another cluster is the more telling error.
    if (error.code() != Code::kIncompatible) error = stub.status();
  }
  return error;
}

Result<std::shared_ptr<PdStub>> PdConnection::TryEndpoint(const std::string& endpoint) {
  std::shared_ptr<PdStub> stub = Dial(StripUrl(endpoint));
  pdpb::GetMembersRequest request;
  *request.mutable_header() = Header();
  pdpb::GetMembersResponse response;
  grpc::ClientContext context;
  // Wait for the channel to become ready (a loaded machine can miss the first
  // handshake), but only half the call timeout: a dead endpoint must not hold
  // up the next one for long.
  context.set_wait_for_ready(true);
  context.set_deadline(std::chrono::system_clock::now() + options_.rpc_timeout / 2);
  grpc::Status status = stub->stub->GetMembers(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, "GetMembers " + stub->address);
  RETURN_IF_ERROR(FromHeader(response.header(), 0, "GetMembers"));
  const uint64_t id = response.header().cluster_id();
  if (id == 0) return ProtocolViolation("pd GetMembers: cluster id 0 from " + stub->address);
  const uint64_t known = cluster_id();
  if (known != 0 && known != id) {
    return Incompatible("pd at " + stub->address + " serves cluster " + std::to_string(id) +
                        ", expected " + std::to_string(known));
  }
  if (!response.has_leader() || response.leader().client_urls_size() == 0) {
    return Unavailable("pd GetMembers: no leader known to " + stub->address);
  }
  std::string leader = StripUrl(response.leader().client_urls(0));
  if (leader.empty()) return ProtocolViolation("pd GetMembers: empty leader client url");
  if (known == 0) cluster_id_.store(id, std::memory_order_release);
  if (leader == stub->address) return stub;
  return Dial(leader);
}

void PdConnection::MarkBroken(const std::shared_ptr<PdStub>& stub, const Status& why) {
  MutexLock lock(&mu_);
  if (current_ == nullptr || current_ != stub) return;
  LOG_WARN("pd: connection to {} lost: {}", current_->address, why.ToString());
  current_.reset();
}

Status PdConnection::OnCallFailed(const std::shared_ptr<PdStub>& stub, const grpc::Status& status,
                                  std::string_view what) {
  Status mapped = FromGrpc(status, what);
  if (ShouldReconnect(status.error_code())) MarkBroken(stub, mapped);
  return mapped;
}

void PdConnection::Stop() {
  MutexLock lock(&mu_);
  stopped_ = true;
  current_.reset();
}

}  // namespace sluice::pd
