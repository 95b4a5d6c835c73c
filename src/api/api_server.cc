#include "api/api_server.h"

#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <exception>

#include "api/api_error.h"
#include "api/api_json.h"
#include "common/logging.h"

namespace sluice::api {
namespace {

constexpr const char* kIdRoute = R"(/api/v2/changefeeds/([^/]+))";

void Send(httplib::Response& res, const Reply& reply) {
  res.status = reply.http_status;
  res.set_content(reply.body, reply.content_type.c_str());
}

// Runs a handler; an exception that escapes it becomes a 500, never a crash.
template <typename F>
httplib::Server::Handler Guarded(F f) {
  return [f](const httplib::Request& req, httplib::Response& res) {
    try {
      Send(res, f(req));
    } catch (const std::exception& e) {
      Send(res, ErrorReply(MakeError(kErrInternalServerError, e.what())));
    } catch (...) {
      Send(res, ErrorReply(MakeError(kErrInternalServerError, "unknown error")));
    }
  };
}

// 503 CDC:ErrOwnerNotFound: retry later (an election or a failover is on).
Reply OwnerNotFound(const std::string& text) {
  ApiError error = MakeError(kErrOwnerNotFound, text);
  error.http_status = 503;
  return ErrorReply(error);
}

// ?namespace= (or TiCDC's newer ?keyspace=); "" when absent.
ApiOr<std::string> QueryNamespace(const httplib::Request& req) {
  const std::string ns = req.get_param_value("namespace");
  const std::string keyspace = req.get_param_value("keyspace");
  if (!ns.empty() && !keyspace.empty() && ns != keyspace) {
    return MakeError(kErrApiInvalidParam,
                     "namespace \"" + ns + "\" and keyspace \"" + keyspace + "\" disagree");
  }
  return ns.empty() ? keyspace : ns;
}

ApiOr<meta::ChangefeedId> PathId(const httplib::Request& req) {
  ApiOr<std::string> ns = QueryNamespace(req);
  if (!ns.ok()) return ns.error();
  meta::ChangefeedId id;
  id.ns = ns->empty() ? "default" : *ns;
  id.name = req.matches.size() > 1 ? req.matches[1].str() : "";
  return id;
}

// A route on /api/v2/changefeeds/{id}[/...]: resolves the id first.
template <typename F>
httplib::Server::Handler WithId(F f) {
  return Guarded([f](const httplib::Request& req) {
    ApiOr<meta::ChangefeedId> id = PathId(req);
    return id.ok() ? f(*id, req) : ErrorReply(id.error());
  });
}

// Fills the body of replies httplib makes itself (404, 413, 400, ...).
httplib::Server::HandlerResponse FillError(const httplib::Request& req, httplib::Response& res) {
  if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
  std::string text = "HTTP " + std::to_string(res.status) + " for " + req.method + " " + req.path;
  if (res.status == 413) text = "request body is too large";
  if (res.status == 404) text = "no route for " + req.method + " " + req.path;
  ApiError err = MakeError(res.status >= 500 ? kErrInternalServerError : kErrApiInvalidParam, text);
  res.set_content(ErrorBody(err), "application/json");
  return httplib::Server::HandlerResponse::Handled;
}

std::string MethodLabel(const std::string& method) {
  for (const char* m : {"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"}) {
    if (method == m) return method;
  }
  return "other";
}

}  // namespace

ApiServer::ApiServer(ApiOptions options) : options_(std::move(options)) {
  if (options_.coordinator != nullptr) {
    changefeeds_ = std::make_unique<ChangefeedApi>(ChangefeedOptions(options_.coordinator));
  }
}

ChangefeedApiOptions ApiServer::ChangefeedOptions(coordinator::Coordinator* coordinator) {
  return ChangefeedApiOptions{coordinator, options_.sink_schemes, options_.upstream_id,
                              options_.self.version,
                              [this](const NodeId& node) { return NodeAddress(node); }};
}

void ApiServer::SetCoordinator(coordinator::Coordinator* coordinator) {
  std::unique_ptr<ChangefeedApi> fresh;
  if (coordinator != nullptr) {
    fresh = std::make_unique<ChangefeedApi>(ChangefeedOptions(coordinator));
  }
  MutexLock lock(&coord_mu_);
  // Requests that took the old one finish first; new ones see the new one.
  while (in_flight_ > 0) coord_cv_.Wait(&coord_mu_);
  changefeeds_ = std::move(fresh);
}

template <typename F>
Reply ApiServer::OnOwner(const httplib::Request& req, F f) {
  const ChangefeedApi* api = nullptr;
  {
    MutexLock lock(&coord_mu_);
    if (changefeeds_ != nullptr) {
      api = changefeeds_.get();
      ++in_flight_;
    }
  }
  if (api == nullptr) return ForwardToOwner(req);
  // Released on every way out (an exception goes on to Guarded's 500).
  struct Release {
    ApiServer* server;
    ~Release() {
      MutexLock lock(&server->coord_mu_);
      if (--server->in_flight_ == 0) server->coord_cv_.SignalAll();
    }
  } release{this};
  return f(*api);
}

Reply ApiServer::ForwardToOwner(const httplib::Request& req) {
  constexpr const char* kForwardedHeader = "X-Sluice-Forwarded-From";
  const std::optional<std::string> owner = options_.cluster->OwnerAddress();
  if (!owner.has_value() || req.has_header(kForwardedHeader)) {
    return OwnerNotFound(owner.has_value()
                             ? "this node is not the owner, and the request was forwarded already"
                             : "this node is not the owner, and no owner is known");
  }
  httplib::Client client("http://" + *owner);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(60));
  httplib::Headers headers = {{kForwardedHeader, SelfId().value()}};
  std::string content_type = req.get_header_value("Content-Type");
  if (content_type.empty()) content_type = "application/json";
  const char* target = req.target.c_str();
  auto send = [&]() -> std::optional<httplib::Result> {
    if (req.method == "GET") return client.Get(target, headers);
    if (req.method == "POST") return client.Post(target, headers, req.body, content_type.c_str());
    if (req.method == "PUT") return client.Put(target, headers, req.body, content_type.c_str());
    if (req.method == "DELETE") {
      return client.Delete(target, headers, req.body, content_type.c_str());
    }
    return std::nullopt;
  };
  std::optional<httplib::Result> res = send();
  if (!res.has_value()) {
    return ErrorReply(MakeError(kErrApiInvalidParam, "method " + req.method + " not forwarded"));
  }
  if (!*res) {
    return OwnerNotFound("cannot reach the owner at " + *owner + ": " +
                         httplib::to_string(res->error()));
  }
  const httplib::Response& answer = res->value();
  std::string answer_type = answer.get_header_value("Content-Type");
  return Reply{answer.status, answer.body, answer_type.empty() ? "application/json" : answer_type};
}

NodeId ApiServer::SelfId() const {
  NodeId id = options_.cluster->SelfId();
  return id.value().empty() ? options_.self.id : id;
}

ApiServer::~ApiServer() { Stop(); }

Result<std::unique_ptr<ApiServer>> ApiServer::Start(ApiOptions options) {
  if (options.cluster == nullptr || options.metrics == nullptr) {
    return InvalidArgument("api server options miss a dependency");
  }
  if (options.host.empty()) return InvalidArgument("api server: empty host");
  if (options.port < 0 || options.port > 65535) {
    return InvalidArgument("api server: port " + std::to_string(options.port) +
                           " is outside 0..65535");
  }
  if (options.self.pid == 0) options.self.pid = static_cast<int64_t>(::getpid());
  std::unique_ptr<ApiServer> server(new ApiServer(std::move(options)));
  RETURN_IF_ERROR(server->Bind());
  httplib::Server* http = server->server_.get();
  ApiServer* self = server.get();
  server->listener_.Start("api-listener", [http, self](StopToken) {
    if (!http->listen_after_bind()) LOG_WARN("api server: listen loop failed");
    MutexLock lock(&self->mu_);
    self->listener_done_ = true;
    self->listener_done_cv_.SignalAll();
  });
  LOG_INFO("api server listening on {}", server->address());
  return server;
}

Status ApiServer::Bind() {
  server_ = std::make_unique<httplib::Server>();
  server_->set_payload_max_length(options_.max_body_bytes);
  // httplib's default adds SO_REUSEPORT, which lets a second server bind a
  // port in use; keep only SO_REUSEADDR so that a taken port is an error.
  server_->set_socket_options([](int sock) {
    int yes = 1;
    (void)::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  requests_ = options_.metrics->AddCounterFamily(
      "sluice_api_requests_total", "HTTP API requests by method and status.", {"method", "status"});
  RegisterRoutes();
  if (options_.port == 0) {
    port_ = server_->bind_to_any_port(options_.host);
    if (port_ <= 0) return Unavailable("api server: cannot bind " + options_.host + ":0");
  } else if (!server_->bind_to_port(options_.host, options_.port)) {
    return Unavailable("api server: cannot bind " + options_.host + ":" +
                       std::to_string(options_.port));
  } else {
    port_ = options_.port;
  }
  return Status::Ok();
}

void ApiServer::Stop() {
  if (!listener_.joinable()) return;
  // stop() is a no-op until the listen loop has started, so repeat it
  // until the loop has returned.
  for (;;) {
    server_->stop();
    MutexLock lock(&mu_);
    if (listener_done_) break;
    (void)listener_done_cv_.WaitFor(&mu_, std::chrono::milliseconds(10));
    if (listener_done_) break;
  }
  listener_.Join();
}

void ApiServer::RegisterRoutes() {
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        Send(res, ErrorReply(MakeError(kErrInternalServerError, "internal error")));
      });
  server_->set_error_handler(httplib::Server::HandlerWithResponse(FillError));
  server_->set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    OnRequestDone(req, res);
  });
  RegisterServerRoutes();
  RegisterChangefeedRoutes();
}

void ApiServer::RegisterServerRoutes() {
  httplib::Server& s = *server_;
  s.Get("/api/v2/status/?", Guarded([this](const httplib::Request&) { return ServerStatus(); }));
  s.Get("/status/?", Guarded([this](const httplib::Request&) { return ServerStatus(); }));
  s.Get("/api/v2/health/?", Guarded([this](const httplib::Request&) { return Health(); }));
  s.Get("/api/v2/captures/?", Guarded([this](const httplib::Request&) { return Captures(); }));
  s.Post("/api/v2/tso/?",
         Guarded([this](const httplib::Request& req) { return QueryTso(req.body); }));
  // TiCDC's owner resign; other nodes forward it to the owner.
  s.Post("/api/v2/owner/resign/?", Guarded([this](const httplib::Request& req) {
           return OnOwner(req, [&](const ChangefeedApi&) {
             Status st = options_.cluster->ResignOwner();
             return st.ok() ? Reply{200, "{}", "application/json"} : ErrorReply(FromStatus(st));
           });
         }));
  s.Get("/metrics", Guarded([this](const httplib::Request&) {
          return Reply{200, options_.metrics->Expose(), std::string(kPrometheusTextContentType)};
        }));
}

void ApiServer::RegisterChangefeedRoutes() {
  httplib::Server& s = *server_;
  s.Get("/api/v2/changefeeds/?", Guarded([this](const httplib::Request& req) {
          return OnOwner(req, [&](const ChangefeedApi& api) {
            ApiOr<std::string> ns = QueryNamespace(req);
            if (!ns.ok()) return ErrorReply(ns.error());
            return api.List(ns->empty() ? "default" : *ns, req.get_param_value("state"));
          });
        }));
  s.Post("/api/v2/changefeeds/?", Guarded([this](const httplib::Request& req) {
           return OnOwner(req, [&](const ChangefeedApi& api) {
             ApiOr<std::string> ns = QueryNamespace(req);
             return ns.ok() ? api.Create(*ns, req.body) : ErrorReply(ns.error());
           });
         }));
  // A route on /api/v2/changefeeds/{id}[/...], served by the owner.
  auto on_id = [this](auto f) {
    return WithId([this, f](const meta::ChangefeedId& id, const httplib::Request& req) {
      return OnOwner(req, [&](const ChangefeedApi& api) { return f(api, id, req); });
    });
  };
  using Req = const httplib::Request&;
  using Id = const meta::ChangefeedId&;
  const std::string id_route = kIdRoute;
  s.Get(id_route + "/?", on_id([](const ChangefeedApi& api, Id id, Req) { return api.Get(id); }));
  s.Put(id_route + "/?",
        on_id([](const ChangefeedApi& api, Id id, Req req) { return api.Update(id, req.body); }));
  s.Delete(id_route + "/?",
           on_id([](const ChangefeedApi& api, Id id, Req) { return api.Remove(id); }));
  s.Post(id_route + "/pause/?",
         on_id([](const ChangefeedApi& api, Id id, Req) { return api.Pause(id); }));
  s.Post(id_route + "/resume/?",
         on_id([](const ChangefeedApi& api, Id id, Req req) { return api.Resume(id, req.body); }));
  s.Get(id_route + "/status/?",
        on_id([](const ChangefeedApi& api, Id id, Req) { return api.GetStatus(id); }));
  s.Post(id_route + "/move_table/?", on_id([](const ChangefeedApi& api, Id id, Req req) {
           return api.MoveTable(id, req.get_param_value("tableID"),
                                req.get_param_value("targetNodeID"));
         }));
}

void ApiServer::OnRequestDone(const httplib::Request& req, const httplib::Response& res) {
  requests_->WithLabels({MethodLabel(req.method), std::to_string(res.status)})->Inc();
  if (req.method == "GET") {
    LOG_DEBUG("api {} {} -> {}", req.method, req.path, res.status);
  } else {
    LOG_INFO("api {} {} -> {}", req.method, req.path, res.status);
  }
}

Reply ApiServer::ServerStatus() {
  const std::optional<NodeId> owner = options_.cluster->Owner();
  Json body = {{"version", options_.self.version},
               {"git_hash", options_.self.git_hash},
               {"id", SelfId().value()},
               {"cluster_id", options_.cluster->ClusterId()},
               {"pid", options_.self.pid},
               {"is_owner", owner.has_value() && *owner == SelfId()},
               {"liveness", static_cast<int>(options_.cluster->SelfLiveness())}};
  return Reply{200, Dump(body), "application/json"};
}

Reply ApiServer::Health() {
  if (options_.cluster->SelfLiveness() != Liveness::kAlive) {
    return ErrorReply(MakeError(kErrClusterIsUnhealthy, "TiCDC cluster is unhealthy"));
  }
  return Reply{200, "{}", "application/json"};
}

Reply ApiServer::Captures() {
  const std::optional<NodeId> owner = options_.cluster->Owner();
  const std::string cluster_id = options_.cluster->ClusterId();
  Json items = Json::array();
  for (const meta::CaptureInfo& c : options_.cluster->Captures()) {
    items.push_back({{"id", c.id.value()},
                     {"is_owner", owner.has_value() && *owner == c.id},
                     {"address", c.advertise_addr},
                     {"cluster_id", cluster_id}});
  }
  const size_t total = items.size();
  return Reply{200, Dump(Json{{"total", total}, {"items", std::move(items)}}), "application/json"};
}

// TiCDC's QueryTso: one TSO from the upstream named by "id" (0: the
// default one). Sluice has one upstream and cannot dial another PD.
Reply ApiServer::QueryTso(const std::string& body) {
  if (options_.tso == nullptr) {
    ApiError err = MakeError(kErrInternalServerError, "no upstream to query a TSO from");
    err.http_status = 503;
    return ErrorReply(err);
  }
  ApiOr<UpstreamRequest> req = ParseUpstream(body);
  if (!req.ok()) return ErrorReply(req.error());
  if (req->id != 0 && options_.upstream_id != 0 && req->id != options_.upstream_id) {
    return ErrorReply(MakeError(kErrUpstreamNotFound,
                                "upstream not found, cluster-id: " + std::to_string(req->id)));
  }
  if (req->id == 0 && !req->pd_addrs.empty()) {
    return ErrorReply(MakeError(
        kErrApiInvalidParam, "pd_addrs: querying a PD other than the upstream's is unsupported"));
  }
  Result<Ts> ts = options_.tso->GetTs();
  if (!ts.ok()) {
    return ErrorReply(MakeError(kErrInternalServerError,
                                "failed to get a TSO from PD: " + ts.status().ToString()));
  }
  return Reply{200, Dump(TsoJson(*ts)), "application/json"};
}

std::string ApiServer::NodeAddress(const NodeId& node) {
  for (const meta::CaptureInfo& c : options_.cluster->Captures()) {
    if (c.id == node) return c.advertise_addr;
  }
  return "";
}

}  // namespace sluice::api
