// Request bodies and printed output of the CLI.
#include "cli/payloads.h"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <utility>

#include "meta/model.h"
#include "sink/sink_uri.h"

namespace sluice::cli {
namespace {

constexpr size_t kMaxNameLength = 128;

// TiCDC's JSONTime layout, "2006-01-02 15:04:05.000", in local time.
std::string FormatLocalTime(int64_t ms_since_epoch) {
  time_t seconds = static_cast<time_t>(ms_since_epoch / 1000);
  int64_t millis = ms_since_epoch % 1000;
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  char ms_buf[8];
  std::snprintf(ms_buf, sizeof(ms_buf), ".%03d", static_cast<int>(millis));
  return std::string(buf, n) + ms_buf;
}

// An RFC 3339 time (ChangeFeedInfo.create_time) in TiCDC's CLI layout; other
// text is kept as it is.
std::string CliTime(const std::string& text) {
  Result<int64_t> ms = meta::ParseRfc3339(text);
  return ms.ok() ? FormatLocalTime(*ms) : text;
}

// The field, or null when absent.
OrderedJson FieldOrNull(const OrderedJson& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? OrderedJson() : *it;
}

// The "items" array of TiCDC's ListResponse.
Result<OrderedJson> ListItems(std::string_view body) {
  ASSIGN_OR_RETURN(OrderedJson doc, ParseObject(body));
  auto items = doc.find("items");
  if (items == doc.end() || items->is_null()) return OrderedJson::array();
  if (!items->is_array()) return InvalidArgument("unexpected response: \"items\" is not a list");
  for (const OrderedJson& item : *items) {
    if (!item.is_object()) return InvalidArgument("unexpected response: an item is not an object");
  }
  return *items;
}

// The changefeed's namespace (older servers) or keyspace (newer TiCDC).
Result<std::string> NamespaceOf(const OrderedJson& object) {
  if (object.contains("namespace")) return StringField(object, "namespace");
  return StringField(object, "keyspace");
}

Result<OrderedJson> ChangefeedSummary(const OrderedJson& item) {
  ASSIGN_OR_RETURN(std::string id, StringField(item, "id"));
  ASSIGN_OR_RETURN(std::string ns, NamespaceOf(item));
  ASSIGN_OR_RETURN(std::string state, StringField(item, "state"));
  ASSIGN_OR_RETURN(uint64_t tso, U64Field(item, "checkpoint_tso"));
  ASSIGN_OR_RETURN(std::string checkpoint, StringField(item, "checkpoint_time"));
  OrderedJson summary = OrderedJson::object();
  summary["state"] = state;
  summary["tso"] = tso;
  summary["checkpoint"] = checkpoint;
  summary["error"] = state == "normal" ? OrderedJson() : FieldOrNull(item, "error");
  OrderedJson out = OrderedJson::object();
  out["id"] = id;
  out["namespace"] = ns;
  out["summary"] = std::move(summary);
  return out;
}

}  // namespace

Status ValidateChangefeedId(std::string_view id) {
  if (meta::IsValidChangefeedName(id)) return Status::Ok();
  return InvalidArgument(
      "[CDC:ErrInvalidChangefeedID]bad changefeed id, please match the pattern "
      "\"^[a-zA-Z0-9]+(\\-[a-zA-Z0-9]+)*$\", the length should no more than " +
      std::to_string(kMaxNameLength) + ", eg, \"simple-changefeed-task\"");
}

Status ValidateNamespace(std::string_view ns) {
  if (meta::IsValidChangefeedName(ns)) return Status::Ok();
  return InvalidArgument(
      "[CDC:ErrInvalidNamespace]bad namespace, please match the pattern "
      "\"^[a-zA-Z0-9]+(\\-[a-zA-Z0-9]+)*$\", the length should no more than " +
      std::to_string(kMaxNameLength) + ", eg, \"simple-namespace-test\"");
}

Result<config::ReplicaConfig> LoadReplicaConfig(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return InvalidArgument("cannot read config file \"" + path + "\"");
  std::stringstream text;
  text << file.rdbuf();
  if (file.bad()) return InvalidArgument("cannot read config file \"" + path + "\"");
  Result<config::ReplicaConfig> parsed = config::ParseReplicaConfigToml(text.str());
  if (!parsed.ok()) {
    return InvalidArgument("config file \"" + path +
                           "\": " + std::string(parsed.status().message()));
  }
  return parsed;
}

Result<OrderedJson> CheckedReplicaConfig(const config::ReplicaConfig& config,
                                         const std::string& sink_uri) {
  if (sink_uri.empty()) return InvalidArgument("sink URI is empty: --sink-uri is required");
  Result<sink::SinkUri> uri = sink::SinkUri::Parse(sink_uri);
  if (!uri.ok()) {
    return InvalidArgument("invalid sink URI: " + std::string(uri.status().message()));
  }
  Result<config::ReplicaConfig> adjusted = config::ValidateAndAdjust(config, *uri);
  if (!adjusted.ok()) {
    return Status(adjusted.status().code(), "config does not fit sink URI " + uri->Redacted() +
                                                ": " + std::string(adjusted.status().message()));
  }
  OrderedJson json = OrderedJson::parse(config::ToJson(*adjusted), nullptr, false);
  if (!json.is_object()) return Internal("replica config does not encode as a JSON object");
  return json;
}

std::string ToJson(const ChangefeedConfigBody& body) {
  OrderedJson doc = OrderedJson::object();
  doc["namespace"] = body.ns;
  doc["changefeed_id"] = body.id;
  doc["start_ts"] = body.start_ts;
  doc["target_ts"] = body.target_ts;
  doc["sink_uri"] = body.sink_uri;
  doc["replica_config"] = body.replica_config;
  doc["ca_path"] = "";
  doc["cert_path"] = "";
  doc["key_path"] = "";
  return doc.dump();
}

std::string ResumeBody(uint64_t overwrite_checkpoint_ts) {
  OrderedJson doc = OrderedJson::object();
  doc["ca_path"] = "";
  doc["cert_path"] = "";
  doc["key_path"] = "";
  doc["overwrite_checkpoint_ts"] = overwrite_checkpoint_ts;
  return doc.dump();
}

std::string TsoQueryBody(uint64_t upstream_id) {
  OrderedJson doc = OrderedJson::object();
  doc["id"] = upstream_id;
  doc["ca_path"] = "";
  doc["cert_path"] = "";
  doc["key_path"] = "";
  return doc.dump();
}

Result<uint64_t> ParseTsoAnswer(std::string_view body) {
  ASSIGN_OR_RETURN(OrderedJson doc, ParseObject(body));
  ASSIGN_OR_RETURN(uint64_t physical, U64Field(doc, "timestamp"));
  ASSIGN_OR_RETURN(uint64_t logical, U64Field(doc, "logic_time"));
  return (physical << 18) | (logical & ((uint64_t{1} << 18) - 1));
}

Result<OrderedJson> ParseObject(std::string_view body) {
  OrderedJson doc = OrderedJson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgument("unexpected response: not JSON");
  if (!doc.is_object()) return InvalidArgument("unexpected response: not a JSON object");
  return doc;
}

Result<std::string> FormatChangefeedList(std::string_view body, bool all) {
  ASSIGN_OR_RETURN(OrderedJson items, ListItems(body));
  OrderedJson out = OrderedJson::array();
  for (const OrderedJson& item : items) {
    ASSIGN_OR_RETURN(std::string state, StringField(item, "state"));
    if (!all && (state == "finished" || state == "removed")) continue;
    ASSIGN_OR_RETURN(OrderedJson summary, ChangefeedSummary(item));
    out.push_back(std::move(summary));
  }
  return JsonPrint(out);
}

Result<std::string> FormatChangefeedDetail(std::string_view body) {
  ASSIGN_OR_RETURN(OrderedJson d, ParseObject(body));
  OrderedJson out = OrderedJson::object();
  ASSIGN_OR_RETURN(out["upstream_id"], U64Field(d, "upstream_id"));
  ASSIGN_OR_RETURN(out["id"], StringField(d, "id"));
  ASSIGN_OR_RETURN(out["namespace"], NamespaceOf(d));
  ASSIGN_OR_RETURN(out["sink_uri"], StringField(d, "sink_uri"));
  out["config"] = FieldOrNull(d, "config");
  ASSIGN_OR_RETURN(std::string create_time, StringField(d, "create_time"));
  out["create_time"] = CliTime(create_time);
  ASSIGN_OR_RETURN(out["start_ts"], U64Field(d, "start_ts"));
  ASSIGN_OR_RETURN(out["resolved_ts"], U64Field(d, "resolved_ts"));
  ASSIGN_OR_RETURN(out["target_ts"], U64Field(d, "target_ts"));
  ASSIGN_OR_RETURN(out["checkpoint_tso"], U64Field(d, "checkpoint_ts"));
  ASSIGN_OR_RETURN(out["checkpoint_time"], StringField(d, "checkpoint_time"));
  ASSIGN_OR_RETURN(out["state"], StringField(d, "state"));
  if (OrderedJson error = FieldOrNull(d, "error"); !error.is_null()) out["error"] = error;
  ASSIGN_OR_RETURN(out["creator_version"], StringField(d, "creator_version"));
  OrderedJson tasks = FieldOrNull(d, "task_status");
  if (tasks.is_array() && !tasks.empty()) out["task_status"] = tasks;
  return JsonPrint(out);
}

Result<std::string> FormatCaptureList(std::string_view body) {
  ASSIGN_OR_RETURN(OrderedJson items, ListItems(body));
  OrderedJson out = OrderedJson::array();
  for (const OrderedJson& item : items) {
    OrderedJson capture = OrderedJson::object();
    ASSIGN_OR_RETURN(capture["id"], StringField(item, "id"));
    OrderedJson owner = FieldOrNull(item, "is_owner");
    if (owner.is_null()) owner = FieldOrNull(item, "is_coordinator");
    if (!owner.is_null() && !owner.is_boolean()) {
      return InvalidArgument("unexpected response: field \"is_owner\" is not a boolean");
    }
    capture["is-owner"] = owner.is_boolean() && owner.get<bool>();
    ASSIGN_OR_RETURN(capture["address"], StringField(item, "address"));
    ASSIGN_OR_RETURN(capture["cluster-id"], StringField(item, "cluster_id"));
    out.push_back(std::move(capture));
  }
  return JsonPrint(out);
}

std::string JsonPrint(const OrderedJson& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<std::string> StringField(const OrderedJson& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return InvalidArgument(std::string("unexpected response: field \"") + key +
                           "\" is not a string");
  }
  return it->get<std::string>();
}

Result<uint64_t> U64Field(const OrderedJson& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return uint64_t{0};
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
    return InvalidArgument(std::string("unexpected response: field \"") + key +
                           "\" is not an unsigned integer");
  }
  return it->get<uint64_t>();
}

}  // namespace sluice::cli
