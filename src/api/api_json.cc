#include "api/api_json.h"

#include <ctime>
#include <exception>

#include "common/logging.h"
#include "common/tso.h"
#include "sink/sink_uri.h"

namespace sluice::api {
namespace {

using meta::FeedState;

std::string TypeName(const Json& v) {
  if (v.is_number_float()) return "float";
  return v.type_name();
}

ApiError FieldError(std::string_view field, std::string_view want, const Json& got) {
  return MakeError(kErrApiInvalidParam, "field \"" + std::string(field) + "\": expected " +
                                            std::string(want) + ", got " + TypeName(got));
}

// Go's rules for a uint64 field: a non-negative integer literal.
std::optional<ApiError> ReadU64(const Json& obj, std::string_view key, uint64_t* out) {
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (it->is_number_unsigned()) {
    *out = it->get<uint64_t>();
    return std::nullopt;
  }
  if (it->is_number_integer()) {
    return MakeError(kErrApiInvalidParam, "field \"" + std::string(key) +
                                              "\": expected an unsigned integer, got " +
                                              std::to_string(it->get<int64_t>()));
  }
  return FieldError(key, "an unsigned integer", *it);
}

std::optional<ApiError> ReadString(const Json& obj, std::string_view key, std::string* out) {
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) return FieldError(key, "string", *it);
  *out = it->get<std::string>();
  return std::nullopt;
}

std::optional<ApiError> CheckStringArray(const Json& obj, std::string_view key) {
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return FieldError(key, "array of strings", *it);
  for (const Json& item : *it) {
    if (!item.is_string()) return FieldError(std::string(key) + "[]", "string", item);
  }
  return std::nullopt;
}

std::optional<ApiError> ReadStringArray(const Json& obj, std::string_view key,
                                        std::vector<std::string>* out) {
  if (auto err = CheckStringArray(obj, key)) return err;
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return std::nullopt;
  for (const Json& item : *it) out->push_back(item.get<std::string>());
  return std::nullopt;
}

// TiCDC's PDConfig fields: accepted, type-checked, not used.
std::optional<ApiError> CheckPdConfig(const Json& obj) {
  std::string ignored;
  for (std::string_view key : {"ca_path", "cert_path", "key_path"}) {
    if (auto err = ReadString(obj, key, &ignored)) return err;
  }
  for (std::string_view key : {"pd_addrs", "cert_allowed_cn"}) {
    if (auto err = CheckStringArray(obj, key)) return err;
  }
  return std::nullopt;
}

ApiOr<Json> ParseObject(std::string_view body, bool empty_is_object) {
  if (empty_is_object && body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Json::object();
  }
  Json doc = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return MakeError(kErrApiInvalidParam, "request body is not valid JSON");
  if (doc.is_null()) return Json::object();  // Go leaves the struct as it is.
  if (!doc.is_object()) {
    return MakeError(kErrApiInvalidParam,
                     "request body must be a JSON object, got " + std::string(doc.type_name()));
  }
  return doc;
}

std::optional<ApiError> ReadReplicaConfig(const Json& obj,
                                          std::optional<config::ReplicaConfig>* out) {
  auto it = obj.find("replica_config");
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return FieldError("replica_config", "object", *it);
  Result<config::ReplicaConfig> parsed = config::ReplicaConfigFromJson(Dump(*it));
  if (!parsed.ok()) {
    const bool bad_value = parsed.status().message().starts_with("invalid value");
    return MakeError(bad_value ? kErrInvalidReplicaConfig : kErrApiInvalidParam,
                     "replica_config: " + std::string(parsed.status().message()));
  }
  *out = std::move(parsed).value();
  return std::nullopt;
}

ApiOr<ChangefeedConfigRequest> ParseConfigObject(const Json& obj) {
  ChangefeedConfigRequest req;
  std::string keyspace;
  std::optional<ApiError> err = ReadString(obj, "namespace", &req.ns);
  if (!err) err = ReadString(obj, "keyspace", &keyspace);
  if (!err) err = ReadString(obj, "changefeed_id", &req.id);
  if (!err) err = ReadU64(obj, "start_ts", &req.start_ts);
  if (!err) err = ReadU64(obj, "target_ts", &req.target_ts);
  if (!err) err = ReadString(obj, "sink_uri", &req.sink_uri);
  if (!err) err = CheckPdConfig(obj);
  if (!err) err = ReadReplicaConfig(obj, &req.replica_config);
  if (err) return *err;
  if (req.ns.empty()) req.ns = keyspace;
  if (!keyspace.empty() && keyspace != req.ns) {
    return MakeError(kErrApiInvalidParam,
                     "namespace \"" + req.ns + "\" and keyspace \"" + keyspace + "\" disagree");
  }
  return req;
}

Json ErrorOrNull(const std::optional<meta::RunningError>& error) {
  return error ? RunningErrorJson(*error) : Json(nullptr);
}

bool ShowsError(FeedState state) {
  return state != FeedState::kNormal && state != FeedState::kStopped &&
         state != FeedState::kFinished && state != FeedState::kRemoved;
}

std::string MaskedSinkUri(const std::string& uri) {
  Result<sink::SinkUri> parsed = sink::SinkUri::Parse(uri);
  return parsed.ok() ? parsed->Redacted() : std::string();
}

}  // namespace

std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string FormatJsonTime(Ts ts) {
  const int64_t ms = tso::Physical(ts);
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  const size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  char frac[8];
  std::snprintf(frac, sizeof(frac), ".%03d", static_cast<int>(ms % 1000));
  return std::string(buf, n) + frac;
}

Json RunningErrorJson(const meta::RunningError& error) {
  return Json{{"time", meta::FormatRfc3339(error.time_ms)},
              {"addr", error.addr},
              {"code", error.code},
              {"message", error.message}};
}

Json CommonInfoJson(const coordinator::ChangefeedView& view) {
  const meta::ChangefeedInfo& info = view.info;
  FeedState state = info.state;
  if (state == FeedState::kUninitialized) state = FeedState::kNormal;
  if (state == FeedState::kPending) state = FeedState::kWarning;
  return Json{{"upstream_id", info.upstream_id},
              {"namespace", info.id.ns},
              {"keyspace", info.id.ns},
              {"id", info.id.name},
              {"state", meta::FeedStateName(state)},
              {"checkpoint_tso", view.status.checkpoint_ts.value()},
              {"checkpoint_time", FormatJsonTime(view.status.checkpoint_ts)},
              {"error", info.error ? ErrorOrNull(info.error) : ErrorOrNull(info.warning)}};
}

Json ChangefeedInfoJson(const coordinator::ChangefeedView& view,
                        const std::string& maintainer_addr) {
  const meta::ChangefeedInfo& info = view.info;
  const Ts checkpoint = view.status.checkpoint_ts;
  Json out = Json::object();
  if (info.upstream_id != 0) out["upstream_id"] = info.upstream_id;
  out["id"] = info.id.name;
  out["namespace"] = info.id.ns;
  out["keyspace"] = info.id.ns;
  if (std::string uri = MaskedSinkUri(info.sink_uri); !uri.empty()) out["sink_uri"] = uri;
  out["create_time"] = meta::FormatRfc3339(info.create_time_ms);
  if (info.start_ts.value() != 0) out["start_ts"] = info.start_ts.value();
  if (info.target_ts.value() != 0) out["target_ts"] = info.target_ts.value();
  if (info.admin_job_type != meta::AdminJobType::kNone) {
    out["admin_job_type"] = static_cast<int>(info.admin_job_type);
  }
  out["config"] = DisplayConfig(info.config_json);
  if (info.state != FeedState::kUninitialized) out["state"] = meta::FeedStateName(info.state);
  const std::optional<meta::RunningError>& shown = info.error ? info.error : info.warning;
  if (shown && ShowsError(info.state)) out["error"] = RunningErrorJson(*shown);
  if (!info.creator_version.empty()) out["creator_version"] = info.creator_version;
  out["resolved_ts"] = checkpoint.value();
  out["checkpoint_ts"] = checkpoint.value();
  out["checkpoint_time"] = FormatJsonTime(checkpoint);
  if (!maintainer_addr.empty()) out["maintainer_addr"] = maintainer_addr;
  return out;
}

Json StatusJson(const coordinator::ChangefeedView& view) {
  const meta::ChangefeedInfo& info = view.info;
  Json out = Json::object();
  if (info.state != FeedState::kUninitialized) out["state"] = meta::FeedStateName(info.state);
  out["resolved_ts"] = view.status.checkpoint_ts.value();
  out["checkpoint_ts"] = view.status.checkpoint_ts.value();
  if (info.state == FeedState::kFailed && info.error) {
    out["last_error"] = RunningErrorJson(*info.error);
  }
  if (info.state == FeedState::kWarning) {
    const std::optional<meta::RunningError>& w = info.warning ? info.warning : info.error;
    if (w) out["last_warning"] = RunningErrorJson(*w);
  }
  return out;
}

bool StateMatches(FeedState state, std::string_view filter) {
  if (filter == "all") return true;
  if (filter.empty()) {
    return state == FeedState::kNormal || state == FeedState::kStopped ||
           state == FeedState::kFailed || state == FeedState::kWarning ||
           state == FeedState::kPending;
  }
  return filter == meta::FeedStateName(state);
}

ApiOr<ChangefeedConfigRequest> ParseChangefeedConfig(std::string_view body) {
  try {
    ApiOr<Json> obj = ParseObject(body, /*empty_is_object=*/false);
    if (!obj.ok()) return obj.error();
    return ParseConfigObject(*obj);
  } catch (const std::exception& e) {
    return MakeError(kErrApiInvalidParam, std::string("malformed request body: ") + e.what());
  }
}

ApiOr<ResumeRequest> ParseResume(std::string_view body) {
  try {
    ApiOr<Json> obj = ParseObject(body, /*empty_is_object=*/true);
    if (!obj.ok()) return obj.error();
    ResumeRequest req;
    std::optional<ApiError> err =
        ReadU64(*obj, "overwrite_checkpoint_ts", &req.overwrite_checkpoint_ts);
    if (!err) err = CheckPdConfig(*obj);
    if (err) return *err;
    return req;
  } catch (const std::exception& e) {
    return MakeError(kErrApiInvalidParam, std::string("malformed request body: ") + e.what());
  }
}

ApiOr<UpstreamRequest> ParseUpstream(std::string_view body) {
  try {
    ApiOr<Json> obj = ParseObject(body, /*empty_is_object=*/false);
    if (!obj.ok()) return obj.error();
    UpstreamRequest req;
    std::optional<ApiError> err = ReadU64(*obj, "id", &req.id);
    if (!err) err = CheckPdConfig(*obj);
    if (!err) err = ReadStringArray(*obj, "pd_addrs", &req.pd_addrs);
    if (err) return *err;
    return req;
  } catch (const std::exception& e) {
    return MakeError(kErrApiInvalidParam, std::string("malformed request body: ") + e.what());
  }
}

Json TsoJson(Ts ts) {
  return Json{{"timestamp", tso::Physical(ts)}, {"logic_time", tso::Logical(ts)}};
}

std::string EncodeStoredConfig(const config::ReplicaConfig& config) {
  const std::string text = config::ToJson(config);
  const std::optional<std::string>& password = config.sink.kafka_config.sasl_password;
  if (!password) return text;
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return text;
  doc["sink"]["kafka_config"]["sasl_password"] = *password;
  return Dump(doc);
}

Json DisplayConfig(const std::string& config_json) {
  Result<config::ReplicaConfig> parsed =
      config_json.empty() ? Result<config::ReplicaConfig>(config::ReplicaConfig())
                          : config::ReplicaConfigFromJson(config_json);
  if (!parsed.ok()) {
    LOG_WARN("stored replica config does not decode: {}", parsed.status().ToString());
    return nullptr;
  }
  Json doc = Json::parse(config::ToJson(*parsed), nullptr, /*allow_exceptions=*/false);
  return doc.is_discarded() ? Json(nullptr) : doc;
}

}  // namespace sluice::api
