#include "simkv/control_server.h"

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "common/hex.h"
#include "common/logging.h"

namespace sluice::simkv {
namespace {

using nlohmann::json;

// A request error: HTTP status and TiCDC's error shape.
struct ApiError {
  int http = 400;
  std::string code;
  std::string msg;
};

ApiError InvalidParam(std::string msg) { return {400, "CDC:ErrAPIInvalidParam", std::move(msg)}; }

ApiError FromStatus(const Status& st) {
  switch (st.code()) {
    case Code::kNotFound:
      return {404, "CDC:ErrNotFound", std::string(st.message())};
    case Code::kInvalidArgument:
      return InvalidParam(std::string(st.message()));
    default:
      return {409, "CDC:ErrOperationFailed", st.ToString()};
  }
}

void Reply(httplib::Response& res, int http, const json& body) {
  res.status = http;
  res.set_content(body.dump(), "application/json");
}

void ReplyError(httplib::Response& res, const ApiError& e) {
  Reply(res, e.http, json{{"error_code", e.code}, {"error_msg", e.msg}});
}

std::optional<std::string> Unhex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]);
    int lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

// A parsed JSON object body whose fields are checked against an allow list.
class Body {
 public:
  static std::variant<Body, ApiError> Parse(const std::string& text,
                                            const std::set<std::string>& allowed) {
    json j = json::parse(text.empty() ? "{}" : text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return InvalidParam("body is not a JSON object");
    for (const auto& [key, value] : j.items()) {
      if (!allowed.contains(key)) return InvalidParam("unknown field '" + key + "'");
    }
    return Body(std::move(j));
  }

  // An unsigned integer field; error if present with another type.
  std::optional<ApiError> U64(const std::string& name, std::optional<uint64_t>* out) const {
    if (!j_.contains(name)) return std::nullopt;
    const json& v = j_[name];
    if (!v.is_number_unsigned()) {
      return InvalidParam("field '" + name + "' must be a non-negative integer");
    }
    *out = v.get<uint64_t>();
    return std::nullopt;
  }
  std::optional<ApiError> Str(const std::string& name, std::optional<std::string>* out) const {
    if (!j_.contains(name)) return std::nullopt;
    if (!j_[name].is_string()) return InvalidParam("field '" + name + "' must be a string");
    *out = j_[name].get<std::string>();
    return std::nullopt;
  }

 private:
  explicit Body(json j) : j_(std::move(j)) {}
  json j_;
};

json RegionJson(const RegionInfo& r) {
  json peers = json::array();
  for (const Peer& p : r.peers) peers.push_back({{"id", p.id}, {"store_id", p.store_id.value()}});
  return {{"id", r.id.value()},
          {"start_key", HexEncode(r.start_key)},
          {"end_key", HexEncode(r.end_key)},
          {"conf_ver", r.epoch.conf_ver},
          {"version", r.epoch.version},
          {"leader", r.leader.value()},
          {"peers", peers}};
}

json FaultJson(const FaultRecord& rec) {
  json j = {{"seq", rec.seq},
            {"kind", FaultKindName(rec.kind)},
            {"restore", rec.restore},
            {"ok", rec.status.ok()},
            {"status", rec.status.ToString()}};
  if (rec.region.value() != 0) j["region_id"] = rec.region.value();
  if (rec.other.value() != 0) j["other_region_id"] = rec.other.value();
  if (rec.store.value() != 0) j["store_id"] = rec.store.value();
  if (!rec.key.empty()) j["key_hex"] = HexEncode(rec.key);
  return j;
}

json StatsJson(const WorkloadStats& s) {
  return {{"steps", s.steps},
          {"txns", s.txns},
          {"rows_inserted", s.rows_inserted},
          {"rows_updated", s.rows_updated},
          {"rows_deleted", s.rows_deleted},
          {"ddls", s.ddls},
          {"conflict_retries", s.conflict_retries}};
}

// Runs a handler body, turning an ApiError into the reply.
template <typename F>
httplib::Server::Handler Guarded(F f) {
  return [f](const httplib::Request& req, httplib::Response& res) {
    std::optional<ApiError> err = f(req, res);
    if (err) ReplyError(res, *err);
  };
}

// Applies a fault record as the reply: 200 with the record, or its error.
std::optional<ApiError> ReplyFault(httplib::Response& res, const FaultRecord& rec) {
  if (!rec.status.ok()) return FromStatus(rec.status);
  Reply(res, 200, FaultJson(rec));
  return std::nullopt;
}

}  // namespace

ControlServer::ControlServer(SimCluster* cluster, Workload* workload, GroundTruth* truth,
                             FaultSchedule* faults)
    : cluster_(cluster), workload_(workload), truth_(truth), faults_(faults) {}

ControlServer::~ControlServer() { Stop(); }

Status ControlServer::Start(const ControlServerOptions& options) {
  server_ = std::make_unique<httplib::Server>();
  RegisterRoutes();
  int port = options.port;
  if (port == 0) {
    port = server_->bind_to_any_port(options.host);
    if (port <= 0) return Unavailable("control server: cannot bind " + options.host);
  } else if (!server_->bind_to_port(options.host, port)) {
    return Unavailable("control server: cannot bind " + options.host + ":" + std::to_string(port));
  }
  address_ = options.host + ":" + std::to_string(port);
  thread_ = std::make_unique<OwnedThread>();
  httplib::Server* server = server_.get();
  thread_->Start("simkv-control", [server](StopToken) { server->listen_after_bind(); });
  return Status::Ok();
}

void ControlServer::Stop() {
  if (server_) server_->stop();
  if (thread_) thread_->Join();
  thread_.reset();
  server_.reset();
  StopWorkload().IgnoreError();
}

Status ControlServer::StartWorkload(RunLimit limit) {
  MutexLock lock(&mu_);
  if (workload_ == nullptr) return NotFound("no workload configured");
  if (running_ && workload_->Running()) return Status::Ok();
  // A run that reached its limit has ended: join it before the next.
  if (running_) workload_->Stop().IgnoreError();
  workload_->Start(limit);
  running_ = true;
  return Status::Ok();
}

Status ControlServer::StopWorkload() {
  MutexLock lock(&mu_);
  if (!running_) return Status::Ok();
  running_ = false;
  return workload_->Stop();
}

bool ControlServer::workload_running() const {
  MutexLock lock(&mu_);
  return running_ && workload_->Running();
}

namespace {

// The control API's handlers, one per route; RegisterRoutes binds them.
class Routes {
 public:
  Routes(ControlServer* server, SimCluster* cluster, Workload* workload, GroundTruth* truth,
         FaultSchedule* faults)
      : server_(server), cluster_(cluster), workload_(workload), truth_(truth), faults_(faults) {}

  std::optional<ApiError> HandleStatus(const httplib::Request& req, httplib::Response& res);
  std::optional<ApiError> HandleRegions(const httplib::Request& req, httplib::Response& res);
  std::optional<ApiError> HandleGroundTruth(const httplib::Request& req, httplib::Response& res);
  std::optional<ApiError> HandleWorkloadStart(const httplib::Request& req, httplib::Response& res);
  std::optional<ApiError> HandleWorkloadStop(const httplib::Request& req, httplib::Response& res);
  std::optional<ApiError> HandleFault(const httplib::Request& req, httplib::Response& res);
  std::optional<ApiError> HandleSplit(const httplib::Request& req, httplib::Response& res);
  std::optional<ApiError> HandleMerge(const httplib::Request& req, httplib::Response& res);
  std::optional<ApiError> HandleTransferLeader(const httplib::Request& req, httplib::Response& res);

 private:
  bool workload_running() const { return server_->workload_running(); }
  Status StartWorkload(RunLimit limit) { return server_->StartWorkload(limit); }
  Status StopWorkload() { return server_->StopWorkload(); }

  ControlServer* const server_;
  SimCluster* const cluster_;
  Workload* const workload_;
  GroundTruth* const truth_;
  FaultSchedule* const faults_;
};

std::optional<ApiError> Routes::HandleStatus(const httplib::Request&, httplib::Response& res) {
  json stores = json::array();
  for (const StoreInfo& st : cluster_->store_registry().All()) {
    stores.push_back(
        {{"id", st.id.value()}, {"address", st.address}, {"up", cluster_->StoreIsUp(st.id)}});
  }
  json j = {{"cluster_id", cluster_->cluster_id()},
            {"pd_address", cluster_->pd_address()},
            {"stores", stores},
            {"region_count", cluster_->regions().size()},
            {"ground_truth_size", truth_->size()},
            {"tso", cluster_->tso().Max().value()},
            {"workload_running", workload_running()}};
  if (workload_ != nullptr) j["workload"] = StatsJson(workload_->stats());
  if (faults_ != nullptr) j["faults_applied"] = faults_->records().size();
  Reply(res, 200, j);
  return std::optional<ApiError>();
}

std::optional<ApiError> Routes::HandleRegions(const httplib::Request&, httplib::Response& res) {
  json regions = json::array();
  for (const RegionInfo& r : cluster_->regions().Scan("", "", 0)) {
    regions.push_back(RegionJson(r));
  }
  Reply(res, 200, json{{"regions", regions}});
  return std::optional<ApiError>();
}

std::optional<ApiError> Routes::HandleGroundTruth(const httplib::Request&, httplib::Response& res) {
  std::ostringstream out;
  Status st = truth_->Export(out);
  if (!st.ok()) return std::optional<ApiError>(FromStatus(st));
  res.set_content(out.str(), "application/x-ndjson");
  return std::optional<ApiError>();
}

std::optional<ApiError> Routes::HandleWorkloadStart(const httplib::Request& req,
                                                    httplib::Response& res) {
  auto body = Body::Parse(req.body, {"steps", "duration_ms"});
  if (auto* e = std::get_if<ApiError>(&body)) return std::optional<ApiError>(*e);
  const Body& b = std::get<Body>(body);
  std::optional<uint64_t> steps, duration_ms;
  if (auto e = b.U64("steps", &steps)) return e;
  if (auto e = b.U64("duration_ms", &duration_ms)) return e;
  RunLimit limit{.steps = steps.value_or(0),
                 .duration = std::chrono::milliseconds(duration_ms.value_or(0))};
  Status st = StartWorkload(limit);
  if (!st.ok()) return std::optional<ApiError>(FromStatus(st));
  Reply(res, 200, json{{"workload_running", true}});
  return std::optional<ApiError>();
}

std::optional<ApiError> Routes::HandleWorkloadStop(const httplib::Request&,
                                                   httplib::Response& res) {
  Status st = StopWorkload();
  Reply(res, 200, json{{"workload_running", false}, {"status", st.ToString()}});
  return std::optional<ApiError>();
}

std::optional<ApiError> Routes::HandleFault(const httplib::Request& req, httplib::Response& res) {
  auto body = Body::Parse(req.body, {"kind", "region_id", "key_hex", "store_id"});
  if (auto* e = std::get_if<ApiError>(&body)) return std::optional<ApiError>(*e);
  const Body& b = std::get<Body>(body);
  std::optional<std::string> kind_name, key_hex;
  std::optional<uint64_t> region, store;
  if (auto e = b.Str("kind", &kind_name)) return e;
  if (auto e = b.Str("key_hex", &key_hex)) return e;
  if (auto e = b.U64("region_id", &region)) return e;
  if (auto e = b.U64("store_id", &store)) return e;
  if (!kind_name) return std::optional<ApiError>(InvalidParam("field 'kind' is required"));
  std::optional<FaultKind> kind = ParseFaultKind(*kind_name);
  if (!kind) return std::optional<ApiError>(InvalidParam("unknown kind '" + *kind_name + "'"));
  FaultRequest fr;
  fr.kind = *kind;
  if (region) fr.region = RegionId(*region);
  if (store) fr.store = StoreId(*store);
  if (key_hex) {
    fr.key = Unhex(*key_hex);
    if (!fr.key) return std::optional<ApiError>(InvalidParam("key_hex is not hex"));
  }
  if (fr.region && !cluster_->regions().RegionById(*fr.region).ok()) {
    return std::optional<ApiError>(FromStatus(NotFound("region not found")));
  }
  if (fr.store && !cluster_->store_registry().Get(*fr.store)) {
    return std::optional<ApiError>(FromStatus(NotFound("store not found")));
  }
  return ReplyFault(res, faults_->Inject(fr));
}

std::optional<ApiError> Routes::HandleSplit(const httplib::Request& req, httplib::Response& res) {
  auto body = Body::Parse(req.body, {"region_id", "key_hex"});
  if (auto* e = std::get_if<ApiError>(&body)) return std::optional<ApiError>(*e);
  const Body& b = std::get<Body>(body);
  std::optional<uint64_t> region;
  std::optional<std::string> key_hex;
  if (auto e = b.U64("region_id", &region)) return e;
  if (auto e = b.Str("key_hex", &key_hex)) return e;
  if (!region || !key_hex) {
    return std::optional<ApiError>(InvalidParam("region_id and key_hex are required"));
  }
  std::optional<std::string> key = Unhex(*key_hex);
  if (!key || key->empty()) {
    return std::optional<ApiError>(InvalidParam("key_hex must be non-empty hex"));
  }
  auto halves = cluster_->Split(RegionId(*region), *key);
  if (!halves.ok()) return std::optional<ApiError>(FromStatus(halves.status()));
  Reply(res, 200, json{{"left", RegionJson(halves->first)}, {"right", RegionJson(halves->second)}});
  return std::optional<ApiError>();
}

std::optional<ApiError> Routes::HandleMerge(const httplib::Request& req, httplib::Response& res) {
  auto body = Body::Parse(req.body, {"left", "right"});
  if (auto* e = std::get_if<ApiError>(&body)) return std::optional<ApiError>(*e);
  const Body& b = std::get<Body>(body);
  std::optional<uint64_t> left, right;
  if (auto e = b.U64("left", &left)) return e;
  if (auto e = b.U64("right", &right)) return e;
  if (!left || !right) {
    return std::optional<ApiError>(InvalidParam("left and right are required"));
  }
  auto merged = cluster_->Merge(RegionId(*left), RegionId(*right));
  if (!merged.ok()) return std::optional<ApiError>(FromStatus(merged.status()));
  Reply(res, 200, json{{"region", RegionJson(*merged)}});
  return std::optional<ApiError>();
}

std::optional<ApiError> Routes::HandleTransferLeader(const httplib::Request& req,
                                                     httplib::Response& res) {
  auto body = Body::Parse(req.body, {"region_id", "store_id"});
  if (auto* e = std::get_if<ApiError>(&body)) return std::optional<ApiError>(*e);
  const Body& b = std::get<Body>(body);
  std::optional<uint64_t> region, store;
  if (auto e = b.U64("region_id", &region)) return e;
  if (auto e = b.U64("store_id", &store)) return e;
  if (!region || !store) {
    return std::optional<ApiError>(InvalidParam("region_id and store_id are required"));
  }
  auto moved = cluster_->TransferLeader(RegionId(*region), StoreId(*store));
  if (!moved.ok()) return std::optional<ApiError>(FromStatus(moved.status()));
  Reply(res, 200, json{{"region", RegionJson(*moved)}});
  return std::optional<ApiError>();
}

// A route bound to `routes`, its ApiError turned into the reply.
httplib::Server::Handler Route(const std::shared_ptr<Routes>& routes,
                               std::optional<ApiError> (Routes::*handler)(const httplib::Request&,
                                                                          httplib::Response&)) {
  return Guarded([routes, handler](const httplib::Request& req, httplib::Response& res) {
    return ((*routes).*handler)(req, res);
  });
}

}  // namespace

void ControlServer::RegisterRoutes() {
  httplib::Server& s = *server_;
  auto routes = std::make_shared<Routes>(this, cluster_, workload_, truth_, faults_);
  s.Get("/status", Route(routes, &Routes::HandleStatus));
  s.Get("/regions", Route(routes, &Routes::HandleRegions));
  s.Get("/ground-truth", Route(routes, &Routes::HandleGroundTruth));
  s.Post("/workload/start", Route(routes, &Routes::HandleWorkloadStart));
  s.Post("/workload/stop", Route(routes, &Routes::HandleWorkloadStop));
  s.Post("/faults", Route(routes, &Routes::HandleFault));
  s.Post("/regions/split", Route(routes, &Routes::HandleSplit));
  s.Post("/regions/merge", Route(routes, &Routes::HandleMerge));
  s.Post("/regions/transfer-leader", Route(routes, &Routes::HandleTransferLeader));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    ReplyError(res, ApiError{500, "CDC:ErrInternalServerError", "internal error"});
  });
}

}  // namespace sluice::simkv
