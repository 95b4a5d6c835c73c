#include "meta/etcd_store.h"

#include <chrono>

#include "common/logging.h"

namespace sluice::meta {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;

// "http://host:port/" → "host:port"; kInvalidArgument / kNotSupported for
// what is not a plain client endpoint.
Result<std::string> EndpointAddress(std::string endpoint) {
  if (endpoint.starts_with("https://")) {
    return NotSupported("etcd endpoint '" + endpoint + "': TLS to etcd is not supported yet");
  }
  if (endpoint.starts_with("http://")) endpoint.erase(0, 7);
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  const size_t colon = endpoint.rfind(':');
  if (endpoint.empty() || endpoint.find('/') != std::string::npos || colon == std::string::npos ||
      colon == 0 || colon + 1 == endpoint.size()) {
    return InvalidArgument("etcd endpoint '" + endpoint + "' is not host:port");
  }
  return endpoint;
}

}  // namespace

EtcdMetaStore::EtcdMetaStore(EtcdStoreOptions options)
    : options_(std::move(options)), ns_(options_.key_prefix) {}

EtcdMetaStore::~EtcdMetaStore() { Stop(); }

Result<std::unique_ptr<EtcdMetaStore>> EtcdMetaStore::Open(EtcdStoreOptions options) {
  if (options.endpoints.empty()) return InvalidArgument("etcd: no endpoints given");
  if (options.clock == nullptr) return InvalidArgument("etcd: no clock");
  if (options.request_timeout <= Clock::Duration::zero()) {
    return InvalidArgument("etcd: request timeout must be positive");
  }
  std::unique_ptr<EtcdMetaStore> store(new EtcdMetaStore(std::move(options)));
  for (const std::string& endpoint : store->options_.endpoints) {
    ASSIGN_OR_RETURN(std::string address, EndpointAddress(endpoint));
    store->addresses_.push_back(std::move(address));
  }
  // Reach one endpoint (reads move on to the next endpoint by themselves).
  RETURN_IF_ERROR(store->CurrentRevision().status());
  return store;
}

void EtcdMetaStore::Stop() {
  // Under mu_, so that no cursor is destroyed meanwhile (its destructor
  // takes mu_ first). Lock order: the store's mu_, then a cursor's.
  MutexLock lock(&mu_);
  if (stopped_) return;
  stopped_ = true;
  for (Cursor* cursor : cursors_) CancelCursor(cursor);
}

std::string EtcdMetaStore::current_endpoint() const {
  MutexLock lock(&mu_);
  return conn_ != nullptr ? conn_->address : addresses_.front();
}

Result<std::shared_ptr<EtcdMetaStore::Conn>> EtcdMetaStore::Current() {
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("etcd metastore stopped");
  if (conn_ != nullptr) return conn_;
  auto conn = std::make_shared<Conn>();
  conn->index = next_index_ % addresses_.size();
  conn->address = addresses_[conn->index];
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  conn->channel =
      grpc::CreateCustomChannel(conn->address, grpc::InsecureChannelCredentials(), args);
  conn->kv = etcdserverpb::KV::NewStub(conn->channel);
  conn->watch = etcdserverpb::Watch::NewStub(conn->channel);
  conn->lease = etcdserverpb::Lease::NewStub(conn->channel);
  conn_ = conn;
  return conn;
}

Status EtcdMetaStore::OnCallFailed(const std::shared_ptr<Conn>& conn, const grpc::Status& status,
                                   std::string_view what) {
  Status mapped = etcd::FromGrpc(status, std::string(what) + " at " + conn->address);
  if (mapped.code() == Code::kUnavailable) MarkBroken(conn);
  return mapped;
}

void EtcdMetaStore::MarkBroken(const std::shared_ptr<Conn>& conn) {
  MutexLock lock(&mu_);
  if (conn_ == conn) {
    conn_.reset();
    next_index_ = conn->index + 1;
  }
}

void EtcdMetaStore::PrepareContext(grpc::ClientContext* context, Clock::Duration timeout) const {
  // Wait for the channel (a restarting etcd) up to the deadline, not fail fast.
  context->set_wait_for_ready(true);
  context->set_deadline(std::chrono::system_clock::now() + timeout);
}

template <typename Response, typename Call>
Result<Response> EtcdMetaStore::Unary(std::string_view what, Call call) {
  ASSIGN_OR_RETURN(std::shared_ptr<Conn> conn, Current());
  grpc::ClientContext context;
  PrepareContext(&context, options_.request_timeout);
  Response response;
  grpc::Status status = call(*conn, &context, &response);
  if (!status.ok()) return OnCallFailed(conn, status, what);
  return response;
}

Result<etcdserverpb::RangeResponse> EtcdMetaStore::Range(const etcdserverpb::RangeRequest& request,
                                                         std::string_view what) {
  Status last;
  for (size_t attempt = 0; attempt < addresses_.size(); ++attempt) {
    ASSIGN_OR_RETURN(std::shared_ptr<Conn> conn, Current());
    grpc::ClientContext context;
    PrepareContext(&context, options_.request_timeout);
    etcdserverpb::RangeResponse response;
    grpc::Status status = conn->kv->Range(&context, request, &response);
    if (status.ok()) return response;
    last = OnCallFailed(conn, status, what);
    if (last.code() != Code::kUnavailable) return last;
  }
  return last;
}

Result<std::optional<KeyValue>> EtcdMetaStore::Get(const std::string& key) {
  if (key.empty()) return InvalidArgument("metastore: empty key");
  etcdserverpb::RangeRequest request;
  request.set_key(ns_.Wrap(key));
  ASSIGN_OR_RETURN(etcdserverpb::RangeResponse response, Range(request, "get"));
  if (response.kvs_size() == 0) return std::optional<KeyValue>();
  if (response.kvs_size() > 1) return ProtocolViolation("etcd returned several keys for one get");
  ASSIGN_OR_RETURN(KeyValue kv, etcd::KeyValueFromProto(response.kvs(0), ns_));
  if (kv.key != key) return ProtocolViolation("etcd returned key '" + kv.key + "' for a get");
  return std::optional<KeyValue>(std::move(kv));
}

Result<RangeResult> EtcdMetaStore::GetPrefix(const std::string& prefix) {
  auto [start, end] = ns_.PrefixRange(prefix);
  etcdserverpb::RangeRequest request;
  request.set_key(start);
  request.set_range_end(end);
  request.set_sort_order(etcdserverpb::RangeRequest::ASCEND);
  request.set_sort_target(etcdserverpb::RangeRequest::KEY);
  ASSIGN_OR_RETURN(etcdserverpb::RangeResponse response, Range(request, "get prefix"));
  RangeResult out;
  out.revision = response.header().revision();
  out.kvs.reserve(static_cast<size_t>(response.kvs_size()));
  for (const mvccpb::KeyValue& kv : response.kvs()) {
    ASSIGN_OR_RETURN(KeyValue value, etcd::KeyValueFromProto(kv, ns_));
    out.kvs.push_back(std::move(value));
  }
  return out;
}

Result<Revision> EtcdMetaStore::CurrentRevision() {
  etcdserverpb::RangeRequest request;
  request.set_key(ns_.ProbeKey());
  request.set_count_only(true);
  ASSIGN_OR_RETURN(etcdserverpb::RangeResponse response, Range(request, "revision"));
  if (response.header().revision() < 0) return ProtocolViolation("etcd: negative revision");
  return response.header().revision();
}

Result<TxnResponse> EtcdMetaStore::Txn(const TxnRequest& txn) {
  ASSIGN_OR_RETURN(etcdserverpb::TxnRequest request, etcd::TxnToProto(txn, ns_));
  ASSIGN_OR_RETURN(etcdserverpb::TxnResponse response,
                   Unary<etcdserverpb::TxnResponse>(
                       "txn", [&](Conn& conn, grpc::ClientContext* context, auto* out) {
                         return conn.kv->Txn(context, request, out);
                       }));
  return TxnResponse{response.succeeded(), response.header().revision()};
}

Result<LeaseGrant> EtcdMetaStore::GrantLease(Clock::Duration ttl) {
  if (ttl <= Clock::Duration::zero())
    return InvalidArgument("metastore: lease ttl must be positive");
  // etcd counts whole seconds; round up so a lease never lives shorter.
  const int64_t ttl_s = (duration_cast<milliseconds>(ttl).count() + 999) / 1000;
  if (ttl_s <= 0) return InvalidArgument("metastore: lease ttl must be at least 1 ms");
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(ttl_s);
  ASSIGN_OR_RETURN(etcdserverpb::LeaseGrantResponse response,
                   Unary<etcdserverpb::LeaseGrantResponse>(
                       "lease grant", [&](Conn& conn, grpc::ClientContext* context, auto* out) {
                         return conn.lease->LeaseGrant(context, request, out);
                       }));
  if (!response.error().empty()) return Unavailable("etcd lease grant: " + response.error());
  if (response.id() == 0 || response.ttl() <= 0) {
    return ProtocolViolation("etcd granted lease " + std::to_string(response.id()) + " with ttl " +
                             std::to_string(response.ttl()));
  }
  return LeaseGrant{LeaseId(response.id()), seconds(response.ttl())};
}

Status EtcdMetaStore::KeepAlive(LeaseId lease) {
  ASSIGN_OR_RETURN(std::shared_ptr<Conn> conn, Current());
  grpc::ClientContext context;
  PrepareContext(&context, options_.request_timeout);
  auto stream = conn->lease->LeaseKeepAlive(&context);
  etcdserverpb::LeaseKeepAliveRequest request;
  request.set_id(lease.value());
  etcdserverpb::LeaseKeepAliveResponse response;
  const bool answered = stream->Write(request) && stream->Read(&response);
  stream->WritesDone();
  if (!answered) {
    grpc::Status status = stream->Finish();
    if (status.ok())
      status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "keep-alive stream ended");
    return OnCallFailed(conn, status, "lease keep-alive");
  }
  context.TryCancel();
  (void)stream->Finish();  // Cancelled by us: nothing to learn from it.
  if (response.ttl() <= 0) {
    return NotFound("etcd: lease " + std::to_string(lease.value()) + " expired or not found");
  }
  return Status::Ok();
}

Status EtcdMetaStore::RevokeLease(LeaseId lease) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease.value());
  return Unary<etcdserverpb::LeaseRevokeResponse>(
             "lease revoke",
             [&](Conn& conn, grpc::ClientContext* context, auto* out) {
               return conn.lease->LeaseRevoke(context, request, out);
             })
      .status();
}

Result<Clock::Duration> EtcdMetaStore::LeaseTimeToLive(LeaseId lease) {
  etcdserverpb::LeaseTimeToLiveRequest request;
  request.set_id(lease.value());
  ASSIGN_OR_RETURN(
      etcdserverpb::LeaseTimeToLiveResponse response,
      Unary<etcdserverpb::LeaseTimeToLiveResponse>(
          "lease time-to-live", [&](Conn& conn, grpc::ClientContext* context, auto* out) {
            return conn.lease->LeaseTimeToLive(context, request, out);
          }));
  if (response.ttl() < 0) {
    return NotFound("etcd: lease " + std::to_string(lease.value()) + " not found");
  }
  return Clock::Duration(seconds(response.ttl()));
}

}  // namespace sluice::meta
