#include "simkv/cdc_service.h"

#include <string>
#include <utility>

#include "common/lifecycle.h"
#include "common/logging.h"
#include "kvrpcpb.pb.h"
#include "simkv/cdc_rows.h"
#include "simkv/cdc_stream_writer.h"
#include "simkv/proto_convert.h"

namespace sluice::simkv {

namespace {

const char* RequestKindName(cdcpb::ChangeDataRequest::RequestCase kind) {
  switch (kind) {
    case cdcpb::ChangeDataRequest::kNotifyTxnStatus:
      return "notify_txn_status";
    default:
      return "unknown";
  }
}

}  // namespace

CdcService::CdcService(CdcServiceOptions options, MvccStore* store, RegionMap* regions,
                       TsoAllocator* tso)
    : options_(options),
      store_(store),
      hub_(CdcHubOptions{options.store_id, options.check_conf_ver}, store, regions, tso),
      scanner_(&hub_, store, options.store_id, options.scan_threads),
      ticker_(options.clock, options.resolved_ts_interval, [this] { hub_.AdvanceResolvedTs(); }) {}

CdcService::~CdcService() { Stop(); }

void CdcService::Start() {
  {
    MutexLock lock(&mu_);
    if (started_) return;
    started_ = true;
  }
  store_->AddObserver(&hub_);
  scanner_.Start();
  ticker_.Start("cdc-rts-" + std::to_string(options_.store_id.value()));
}

void CdcService::Stop() {
  bool observing;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    observing = started_;
  }
  calls_.Close();
  calls_.CancelAll();
  calls_.WaitIdle();
  ticker_.Stop();
  scanner_.Stop();
  if (observing) store_->RemoveObserver(&hub_);
  hub_.Clear();
}

void CdcService::SetBusy(std::optional<BusyState> busy) {
  MutexLock lock(&mu_);
  busy_ = std::move(busy);
}

std::optional<BusyState> CdcService::busy() const {
  MutexLock lock(&mu_);
  return busy_;
}

grpc::Status CdcService::EventFeed(grpc::ServerContext* context, Stream* stream) {
  return Serve(context, stream, /*v2=*/false);
}

grpc::Status CdcService::EventFeedV2(grpc::ServerContext* context, Stream* stream) {
  return Serve(context, stream, /*v2=*/true);
}

grpc::Status CdcService::Serve(grpc::ServerContext* context, Stream* stream, bool v2) {
  std::optional<ActiveCalls::Guard> guard = calls_.Enter(context);
  if (!guard) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "store is stopping");
  Conn conn;
  if (v2) {
    for (const auto& [key, value] : context->client_metadata()) {
      if (std::string_view(key.data(), key.size()) != kFeaturesKey) continue;
      Result<StreamFeatures> features = ParseFeatures(std::string_view(value.data(), value.size()));
      if (!features.ok()) {
        LOG_WARN("cdc: store {} refuses a stream with unknown features {}",
                 options_.store_id.value(), RedactText(features.status().message()));
        return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                            std::string(features.status().message()));
      }
      conn.multiplexing = features->multiplexing;
    }
  }
  conn.id = next_conn_id_.fetch_add(1);
  conn.sink = std::make_shared<StreamSink>(options_.sink);
  LOG_INFO("cdc: store {} stream {} opened by {} (v2 {}, multiplexing {})",
           options_.store_id.value(), conn.id, context->peer(), v2, conn.multiplexing);
  OwnedThread writer;
  writer.Start("cdc-writer-" + std::to_string(conn.id),
               [&](StopToken token) { WriteStream(context, stream, conn.sink.get(), token); });
  cdcpb::ChangeDataRequest request;
  while (stream->Read(&request)) HandleRequest(conn, request);
  hub_.DeregisterConn(conn.id);
  conn.sink->Close();  // The writer sends what is queued, then returns.
  writer.Join();
  LOG_INFO("cdc: store {} stream {} closed", options_.store_id.value(), conn.id);
  return grpc::Status::OK;
}

void CdcService::HandleRequest(Conn& conn, const cdcpb::ChangeDataRequest& request) {
  if (!conn.version) {
    conn.version = ClientVersion::Parse(request.header().ticdc_version());
    if (!conn.version->parsed) {
      LOG_WARN("cdc: store {} stream {}: empty or invalid client version {}",
               options_.store_id.value(), conn.id, RedactText(request.header().ticdc_version()));
    }
  }
  switch (request.request_case()) {
    case cdcpb::ChangeDataRequest::REQUEST_NOT_SET:
    case cdcpb::ChangeDataRequest::kRegister:
      HandleRegister(conn, request);
      return;
    case cdcpb::ChangeDataRequest::kDeregister:
      hub_.Deregister(conn.id, request.request_id(), request.region_id());
      return;
    default:
      LOG_WARN("cdc: store {} stream {} ignores a {} request", options_.store_id.value(), conn.id,
               RequestKindName(request.request_case()));
      return;
  }
}

void CdcService::HandleRegister(const Conn& conn, const cdcpb::ChangeDataRequest& request) {
  RequestContext context{options_.cluster_id, *conn.version, busy()};
  if (std::optional<cdcpb::Error> error = ValidateRegister(request, context)) {
    conn.sink->PushEvent(ErrorEvent(request.region_id(), request.request_id(), *std::move(error)),
                         /*force=*/true);
    return;
  }
  auto spec = std::make_shared<DownstreamSpec>();
  spec->id = next_downstream_id_.fetch_add(1);
  spec->conn_id = conn.id;
  spec->request_id = request.request_id();
  spec->region_id = RegionId(request.region_id());
  spec->epoch = FromProto(request.region_epoch());
  spec->checkpoint_ts = Ts(request.checkpoint_ts());
  spec->old_value = request.extra_op() == kvrpcpb::ReadOldValue;
  spec->multiplexing = conn.multiplexing;
  spec->start_key = request.start_key();
  spec->end_key = request.end_key();
  spec->sink = conn.sink;
  std::variant<ScanTask, cdcpb::Error> result = hub_.Register(std::move(spec));
  if (auto* error = std::get_if<cdcpb::Error>(&result)) {
    conn.sink->PushEvent(ErrorEvent(request.region_id(), request.request_id(), std::move(*error)),
                         /*force=*/true);
    return;
  }
  scanner_.Schedule(std::get<ScanTask>(std::move(result)));
}

}  // namespace sluice::simkv
