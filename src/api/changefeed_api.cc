#include "api/changefeed_api.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <random>

#include "api/api_json.h"
#include "common/logging.h"
#include "sink/sink_uri.h"

namespace sluice::api {
namespace {

using meta::FeedState;

constexpr size_t kMaxNameBytes = 128;

Reply JsonReply(const Json& body) { return Reply{200, Dump(body), "application/json"}; }

Reply EmptyObjectReply() { return JsonReply(Json::object()); }

// A random UUID v4, TiCDC's default changefeed id.
std::string NewChangefeedName() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  uint64_t hi = gen();
  uint64_t lo = gen();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;              // version 4
  lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);  // variant 10
  const std::string h = fmt::format("{:016x}{:016x}", hi, lo);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

ApiError NotExists(const meta::ChangefeedId& id) {
  return MakeError(kErrChangefeedNotExists, "changefeed not exists, " + id.ToString());
}

ApiError RefusedError(std::string_view why) {
  return MakeError(kErrChangefeedUpdateRefused, "changefeed update error: " + std::string(why));
}

ApiError SinkError(std::string_view why) {
  return MakeError(kErrSinkUriInvalid, "sink uri invalid '" + std::string(why) + "'");
}

// Looks up a changefeed; NotFound becomes ErrChangeFeedNotExists.
ApiOr<coordinator::ChangefeedView> Lookup(coordinator::Coordinator* c,
                                          const meta::ChangefeedId& id) {
  Result<coordinator::ChangefeedView> view = c->GetChangefeed(id);
  if (view.ok()) return std::move(view).value();
  if (view.status().code() == Code::kNotFound) return NotExists(id);
  return FromStatus(view.status());
}

Reply StatusReply(const Status& status) {
  return status.ok() ? EmptyObjectReply() : ErrorReply(FromStatus(status));
}

}  // namespace

Reply ErrorReply(const ApiError& error) {
  return Reply{error.http_status, ErrorBody(error), "application/json"};
}

std::optional<ApiError> CheckChangefeedId(const meta::ChangefeedId& id) {
  if (!meta::IsValidChangefeedName(id.name) || id.name.size() > kMaxNameBytes) {
    return MakeError(kErrApiInvalidParam,
                     fmt::format("invalid changefeed_id: {}, want [a-zA-Z0-9]+(-[a-zA-Z0-9]+)* "
                                 "of at most 128 bytes",
                                 id.name.substr(0, 160)));
  }
  if (!meta::IsValidChangefeedName(id.ns)) {
    return MakeError(kErrApiInvalidParam, "invalid namespace: " + id.ns.substr(0, 160));
  }
  return std::nullopt;
}

ChangefeedApi::ChangefeedApi(ChangefeedApiOptions options) : options_(std::move(options)) {}

Reply ChangefeedApi::List(const std::string& ns, const std::string& state) const {
  Json items = Json::array();
  for (const coordinator::ChangefeedView& view : options_.coordinator->ListChangefeeds()) {
    if (view.info.id.ns != ns || !StateMatches(view.info.state, state)) continue;
    items.push_back(CommonInfoJson(view));
  }
  const size_t total = items.size();
  return JsonReply(Json{{"total", total}, {"items", std::move(items)}});
}

ApiOr<config::ReplicaConfig> ChangefeedApi::CheckSink(const std::string& sink_uri,
                                                      config::ReplicaConfig config) const {
  if (sink_uri.empty()) {
    return SinkError("sink_uri is empty, cannot create a changefeed without sink_uri");
  }
  Result<sink::SinkUri> uri = sink::SinkUri::Parse(sink_uri);
  if (!uri.ok()) return SinkError(uri.status().message());
  Result<config::ReplicaConfig> adjusted = config::ValidateAndAdjust(std::move(config), *uri);
  if (!adjusted.ok()) {
    return MakeError(kErrInvalidReplicaConfig,
                     "invalid replica config, " + std::string(adjusted.status().message()));
  }
  const std::vector<std::string>& schemes = options_.sink_schemes;
  if (std::find(schemes.begin(), schemes.end(), uri->scheme) == schemes.end()) {
    return MakeError(kErrSinkUriInvalid, "sink uri invalid '" + uri->Redacted() +
                                             "': the sink scheme (" + uri->scheme +
                                             ") is not supported by this cluster");
  }
  return std::move(adjusted).value();
}

Reply ChangefeedApi::Create(const std::string& query_ns, std::string_view body) const {
  ApiOr<ChangefeedConfigRequest> req = ParseChangefeedConfig(body);
  if (!req.ok()) return ErrorReply(req.error());
  meta::ChangefeedId id;
  id.ns = !query_ns.empty() ? query_ns : (!req->ns.empty() ? req->ns : "default");
  id.name = req->id.empty() ? NewChangefeedName() : req->id;
  if (auto err = CheckChangefeedId(id)) return ErrorReply(*err);
  if (options_.coordinator->GetChangefeed(id).ok()) {
    return ErrorReply(
        MakeError(kErrChangefeedAlreadyExists, "changefeed already exists, " + id.ToString()));
  }
  if (req->start_ts != 0 && req->target_ts != 0 && req->target_ts <= req->start_ts) {
    return ErrorReply(MakeError(
        kErrTargetTsBeforeStartTs,
        fmt::format("fail to create changefeed because target-ts {} is earlier than start-ts {}",
                    req->target_ts, req->start_ts)));
  }
  ApiOr<config::ReplicaConfig> config =
      CheckSink(req->sink_uri, req->replica_config.value_or(config::ReplicaConfig()));
  if (!config.ok()) return ErrorReply(config.error());

  meta::ChangefeedInfo info;
  info.id = id;
  info.upstream_id = options_.upstream_id;
  info.sink_uri = req->sink_uri;
  info.start_ts = Ts(req->start_ts);
  info.target_ts = Ts(req->target_ts);
  info.config_json = EncodeStoredConfig(*config);
  info.creator_version = options_.creator_version;
  Status created = options_.coordinator->CreateChangefeed(std::move(info));
  if (!created.ok()) return ErrorReply(FromStatus(created));
  LOG_INFO("api: created changefeed {}", id.ToString());
  return InfoReply(id);
}

Reply ChangefeedApi::Get(const meta::ChangefeedId& id) const { return InfoReply(id); }

Reply ChangefeedApi::InfoReply(const meta::ChangefeedId& id) const {
  ApiOr<coordinator::ChangefeedView> view = Lookup(options_.coordinator, id);
  if (!view.ok()) return ErrorReply(view.error());
  return JsonReply(ChangefeedInfoJson(*view, MaintainerAddr(*view)));
}

std::string ChangefeedApi::MaintainerAddr(const coordinator::ChangefeedView& view) const {
  if (!view.node || !options_.node_address) return "";
  return options_.node_address(*view.node);
}

Reply ChangefeedApi::Update(const meta::ChangefeedId& id, std::string_view body) const {
  if (auto err = CheckChangefeedId(id)) return ErrorReply(*err);
  ApiOr<coordinator::ChangefeedView> view = Lookup(options_.coordinator, id);
  if (!view.ok()) return ErrorReply(view.error());
  const meta::ChangefeedInfo& old = view->info;
  if (old.state != FeedState::kStopped && old.state != FeedState::kFailed) {
    return ErrorReply(
        RefusedError("can only update changefeed config when it is stopped or failed"));
  }
  ApiOr<ChangefeedConfigRequest> req = ParseChangefeedConfig(body);
  if (!req.ok()) return ErrorReply(req.error());
  coordinator::ChangefeedUpdate update;
  if (req->target_ts != 0) {
    if (req->target_ts <= old.start_ts.value()) {
      return ErrorReply(
          RefusedError(fmt::format("can not update target_ts:{} less than start_ts:{}",
                                   req->target_ts, old.start_ts.value())));
    }
    update.target_ts = Ts(req->target_ts);
  }
  if (req->start_ts != 0) {
    return ErrorReply(MakeError(kErrApiInvalidParam, "start_ts can not be updated"));
  }
  if (!req->sink_uri.empty()) update.sink_uri = req->sink_uri;
  if (req->replica_config || update.sink_uri) {
    config::ReplicaConfig config = config::ReplicaConfig();
    if (req->replica_config) {
      config = *req->replica_config;
    } else if (!old.config_json.empty()) {
      Result<config::ReplicaConfig> stored = config::ReplicaConfigFromJson(old.config_json);
      if (!stored.ok()) return ErrorReply(FromStatus(Internal(stored.status().ToString())));
      config = *stored;
    }
    ApiOr<config::ReplicaConfig> adjusted =
        CheckSink(update.sink_uri.value_or(old.sink_uri), config);
    if (!adjusted.ok()) return ErrorReply(adjusted.error());
    update.config_json = EncodeStoredConfig(*adjusted);
  }
  Status updated = options_.coordinator->UpdateChangefeed(id, update);
  if (!updated.ok()) return ErrorReply(FromStatus(updated));
  LOG_INFO("api: updated changefeed {}", id.ToString());
  return InfoReply(id);
}

Reply ChangefeedApi::Remove(const meta::ChangefeedId& id) const {
  if (auto err = CheckChangefeedId(id)) return ErrorReply(*err);
  ApiOr<coordinator::ChangefeedView> view = Lookup(options_.coordinator, id);
  if (!view.ok() && view.error().code == kErrChangefeedNotExists) {
    return Reply{200, "null", "application/json"};  // As TiCDC: deleting is idempotent.
  }
  if (!view.ok()) return ErrorReply(view.error());
  return StatusReply(options_.coordinator->RemoveChangefeed(id));
}

Reply ChangefeedApi::Pause(const meta::ChangefeedId& id) const {
  if (auto err = CheckChangefeedId(id)) return ErrorReply(*err);
  ApiOr<coordinator::ChangefeedView> view = Lookup(options_.coordinator, id);
  if (!view.ok()) return ErrorReply(view.error());
  return StatusReply(options_.coordinator->PauseChangefeed(id));
}

Reply ChangefeedApi::MoveTable(const meta::ChangefeedId& id, const std::string& table_id,
                               const std::string& target) const {
  if (auto err = CheckChangefeedId(id)) return ErrorReply(*err);
  int64_t table = 0;
  const char* end = table_id.data() + table_id.size();
  auto [ptr, ec] = std::from_chars(table_id.data(), end, table);
  if (table_id.empty() || ec != std::errc() || ptr != end || table <= 0) {
    return ErrorReply(MakeError(kErrApiInvalidParam, "tableID must be a positive table id, got \"" +
                                                         table_id.substr(0, 40) + "\""));
  }
  if (target.empty()) {
    return ErrorReply(MakeError(kErrApiInvalidParam, "targetNodeID is required"));
  }
  ApiOr<coordinator::ChangefeedView> view = Lookup(options_.coordinator, id);
  if (!view.ok()) return ErrorReply(view.error());
  Status moved = options_.coordinator->MoveTable(id, table, NodeId(target));
  // The changefeed exists: these are about the table.
  if (moved.code() == Code::kNotFound || moved.code() == Code::kAlreadyExists) {
    moved = InvalidArgument(std::string(moved.message()));
  }
  return StatusReply(moved);
}

Reply ChangefeedApi::Resume(const meta::ChangefeedId& id, std::string_view body) const {
  if (auto err = CheckChangefeedId(id)) return ErrorReply(*err);
  ApiOr<ResumeRequest> req = ParseResume(body);
  if (!req.ok()) return ErrorReply(req.error());
  ApiOr<coordinator::ChangefeedView> view = Lookup(options_.coordinator, id);
  if (!view.ok()) return ErrorReply(view.error());
  const FeedState state = view->info.state;
  if (state != FeedState::kStopped && state != FeedState::kFailed && state != FeedState::kWarning) {
    return ErrorReply(RefusedError(
        fmt::format("can only resume changefeed when it is stopped, failed or warning, but "
                    "current state is {}",
                    meta::FeedStateName(state))));
  }
  std::optional<Ts> overwrite;
  if (req->overwrite_checkpoint_ts != 0) overwrite = Ts(req->overwrite_checkpoint_ts);
  return StatusReply(options_.coordinator->ResumeChangefeed(id, overwrite));
}

Reply ChangefeedApi::GetStatus(const meta::ChangefeedId& id) const {
  ApiOr<coordinator::ChangefeedView> view = Lookup(options_.coordinator, id);
  if (!view.ok()) return ErrorReply(view.error());
  return JsonReply(StatusJson(*view));
}

}  // namespace sluice::api
