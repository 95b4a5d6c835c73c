// The `changefeed` and `capture` commands over the HTTP API v2.
#include <cctype>
#include <charconv>
#include <utility>

#include "cli/commands.h"
#include "cli/payloads.h"
#include "config/replica_config.h"
#include "sink/sink_uri.h"

namespace sluice::cli {
namespace {

// "/api/v2/changefeeds/{id}{suffix}?namespace={ns}"; id and ns are checked
// names, so they need no escaping.
std::string ChangefeedPath(const ChangefeedFlags& flags, const std::string& suffix = "") {
  return "/api/v2/changefeeds/" + flags.id + suffix + "?namespace=" + flags.ns;
}

Status CheckNames(const ChangefeedFlags& flags) {
  RETURN_IF_ERROR(ValidateNamespace(flags.ns));
  return ValidateChangefeedId(flags.id);
}

Status CheckTsOrder(const ChangefeedFlags& flags) {
  uint64_t start = flags.start_ts.value_or(0);
  uint64_t target = flags.target_ts.value_or(0);
  if (start == 0 || target == 0 || target > start) return Status::Ok();
  return InvalidArgument(
      "[CDC:ErrTargetTsBeforeStartTs]fail to create or maintain changefeed because start-ts " +
      std::to_string(start) + " is later than target-ts " + std::to_string(target));
}

Status InvalidCheckpointTs(const std::string& text) {
  return InvalidArgument("[CDC:ErrCliInvalidCheckpointTs]invalid overwrite-checkpoint-ts " + text +
                         ", overwrite-checkpoint-ts only accept 'now' or a valid timestamp in "
                         "integer");
}

// --overwrite-checkpoint-ts: nullopt for "now", else a non-zero ts.
Result<std::optional<uint64_t>> ParseOverwriteTs(const std::string& text) {
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "now") return std::optional<uint64_t>();
  uint64_t ts = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ts);
  if (ec != std::errc() || end != text.data() + text.size() || ts == 0) {
    return InvalidCheckpointTs(text);
  }
  return std::optional<uint64_t>(ts);
}

// The checkpoint ts to resume from: 0 (keep) without the flag; asks the
// server for the current TSO otherwise.
Result<uint64_t> ResumeCheckpointTs(ApiClient& api, const ChangefeedFlags& flags,
                                    const OrderedJson& detail) {
  if (!flags.overwrite_checkpoint_ts.has_value()) return uint64_t{0};
  ASSIGN_OR_RETURN(std::optional<uint64_t> wanted,
                   ParseOverwriteTs(*flags.overwrite_checkpoint_ts));
  ASSIGN_OR_RETURN(uint64_t upstream_id, U64Field(detail, "upstream_id"));
  ASSIGN_OR_RETURN(std::string reply, api.Post("/api/v2/tso", TsoQueryBody(upstream_id)));
  ASSIGN_OR_RETURN(uint64_t now, ParseTsoAnswer(reply));
  if (!wanted.has_value()) return now;
  if (*wanted > now) {
    return InvalidArgument("[CDC:ErrCliCheckpointTsIsInFuture]the overwrite-checkpoint-ts " +
                           std::to_string(*wanted) + " must be smaller than current TSO");
  }
  return *wanted;
}

// The replica config JSON of an update: the new file checked against the
// (new or old) sink URI, or the old config, checked against a new URI.
Result<OrderedJson> UpdatedReplicaConfig(const ChangefeedFlags& flags,
                                         const std::optional<config::ReplicaConfig>& file_config,
                                         const OrderedJson& old) {
  ASSIGN_OR_RETURN(std::string old_uri, StringField(old, "sink_uri"));
  std::string uri = flags.sink_uri_set ? flags.sink_uri : old_uri;
  OrderedJson old_config = old.contains("config") ? old["config"] : OrderedJson();
  if (file_config.has_value()) {
    if (!uri.empty()) return CheckedReplicaConfig(*file_config, uri);
    return OrderedJson::parse(config::ToJson(*file_config));
  }
  if (flags.sink_uri_set && old_config.is_object()) {
    // The server's config may hold keys Sluice does not know; only a config
    // that decodes is checked against the new URI.
    Result<config::ReplicaConfig> decoded = config::ReplicaConfigFromJson(old_config.dump());
    if (decoded.ok()) RETURN_IF_ERROR(CheckedReplicaConfig(*decoded, uri).status());
  }
  return old_config;
}

void PrintRemoveFailed(const ChangefeedFlags& flags, const Status& status, std::ostream& out) {
  out << "Changefeed remove failed.\nID: " << flags.id << "\nError: " << status.message() << "\n";
}

}  // namespace

Status CreateChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out) {
  RETURN_IF_ERROR(ValidateNamespace(flags.ns));
  if (!flags.id.empty()) RETURN_IF_ERROR(ValidateChangefeedId(flags.id));
  RETURN_IF_ERROR(CheckTsOrder(flags));
  config::ReplicaConfig config;
  if (!flags.config_path.empty()) {
    ASSIGN_OR_RETURN(config, LoadReplicaConfig(flags.config_path));
  }
  if (flags.no_confirm) config.ignore_ineligible_table = true;
  ChangefeedConfigBody body;
  ASSIGN_OR_RETURN(body.replica_config, CheckedReplicaConfig(config, flags.sink_uri));
  body.ns = flags.ns;
  body.id = flags.id;
  body.start_ts = flags.start_ts.value_or(0);
  body.target_ts = flags.target_ts.value_or(0);
  body.sink_uri = flags.sink_uri;
  ASSIGN_OR_RETURN(std::string reply, api.Post("/api/v2/changefeeds", ToJson(body)));
  ASSIGN_OR_RETURN(OrderedJson info, ParseObject(reply));
  ASSIGN_OR_RETURN(std::string id, StringField(info, "id"));
  out << "Create changefeed successfully!\nID: " << id << "\nInfo: " << info.dump() << "\n";
  return Status::Ok();
}

Status ListChangefeeds(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out) {
  RETURN_IF_ERROR(ValidateNamespace(flags.ns));
  ASSIGN_OR_RETURN(std::string reply,
                   api.Get("/api/v2/changefeeds?namespace=" + flags.ns + "&state=all"));
  ASSIGN_OR_RETURN(std::string text, FormatChangefeedList(reply, flags.all));
  out << text;
  return Status::Ok();
}

Status QueryChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out) {
  RETURN_IF_ERROR(CheckNames(flags));
  if (flags.simple) {
    ASSIGN_OR_RETURN(std::string reply, api.Get(ChangefeedPath(flags, "/status")));
    ASSIGN_OR_RETURN(OrderedJson status, ParseObject(reply));
    out << JsonPrint(status);
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(std::string reply, api.Get(ChangefeedPath(flags)));
  ASSIGN_OR_RETURN(std::string text, FormatChangefeedDetail(reply));
  out << text;
  return Status::Ok();
}

Status PauseChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out) {
  RETURN_IF_ERROR(CheckNames(flags));
  return api.Post(ChangefeedPath(flags, "/pause"), "").status();
}

Status MoveTable(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out) {
  RETURN_IF_ERROR(CheckNames(flags));
  if (flags.table_id <= 0) return InvalidArgument("--table-id must be a positive table id");
  if (flags.target_node_id.empty()) return InvalidArgument("--target-node-id is required");
  const std::string path = ChangefeedPath(flags, "/move_table") +
                           "&tableID=" + std::to_string(flags.table_id) +
                           "&targetNodeID=" + flags.target_node_id;
  RETURN_IF_ERROR(api.Post(path, "").status());
  out << "Table " << flags.table_id << " of changefeed " << flags.id << " moves to node "
      << flags.target_node_id << ".\n";
  return Status::Ok();
}

Status ResumeChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out) {
  RETURN_IF_ERROR(CheckNames(flags));
  if (flags.overwrite_checkpoint_ts.has_value()) {
    RETURN_IF_ERROR(ParseOverwriteTs(*flags.overwrite_checkpoint_ts).status());
  }
  ASSIGN_OR_RETURN(std::string reply, api.Get(ChangefeedPath(flags)));
  ASSIGN_OR_RETURN(OrderedJson detail, ParseObject(reply));
  ASSIGN_OR_RETURN(uint64_t checkpoint_ts, ResumeCheckpointTs(api, flags, detail));
  return api.Post(ChangefeedPath(flags, "/resume"), ResumeBody(checkpoint_ts)).status();
}

Status RemoveChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out) {
  RETURN_IF_ERROR(CheckNames(flags));
  Result<std::string> reply = api.Get(ChangefeedPath(flags));
  if (!reply.ok()) {
    if (reply.status().message().find("ErrChangeFeedNotExists") != std::string_view::npos) {
      out << "Changefeed not found.\nID: " << flags.id << "\n";
      return Status::Ok();
    }
    PrintRemoveFailed(flags, reply.status(), out);
    return reply.status();
  }
  ASSIGN_OR_RETURN(OrderedJson detail, ParseObject(*reply));
  ASSIGN_OR_RETURN(uint64_t checkpoint_ts, U64Field(detail, "checkpoint_ts"));
  ASSIGN_OR_RETURN(std::string sink_uri, StringField(detail, "sink_uri"));
  Result<std::string> removed = api.Delete(ChangefeedPath(flags));
  if (!removed.ok()) {
    PrintRemoveFailed(flags, removed.status(), out);
    return removed.status();
  }
  out << "Changefeed remove successfully.\nID: " << flags.id << "\nCheckpointTs: " << checkpoint_ts
      << "\nSinkURI: " << sink_uri << "\n";
  return Status::Ok();
}

Status UpdateChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out) {
  RETURN_IF_ERROR(CheckNames(flags));
  std::optional<config::ReplicaConfig> file_config;
  if (!flags.config_path.empty()) {
    ASSIGN_OR_RETURN(file_config, LoadReplicaConfig(flags.config_path));
  }
  if (flags.sink_uri_set) {
    Result<sink::SinkUri> uri = sink::SinkUri::Parse(flags.sink_uri);
    if (!uri.ok())
      return InvalidArgument("invalid sink URI: " + std::string(uri.status().message()));
  }
  ASSIGN_OR_RETURN(std::string reply, api.Get(ChangefeedPath(flags)));
  ASSIGN_OR_RETURN(OrderedJson old, ParseObject(reply));
  if (!flags.sink_uri_set && !flags.target_ts.has_value() && !file_config.has_value()) {
    out << "changefeed config is the same with the old one, do nothing\n";
    return Status::Ok();
  }
  ChangefeedConfigBody body;
  ASSIGN_OR_RETURN(body.replica_config, UpdatedReplicaConfig(flags, file_config, old));
  ASSIGN_OR_RETURN(uint64_t old_target_ts, U64Field(old, "target_ts"));
  body.target_ts = flags.target_ts.value_or(old_target_ts);
  body.sink_uri = flags.sink_uri_set ? flags.sink_uri : "";
  ASSIGN_OR_RETURN(std::string updated, api.Put(ChangefeedPath(flags), ToJson(body)));
  ASSIGN_OR_RETURN(OrderedJson info, ParseObject(updated));
  ASSIGN_OR_RETURN(std::string id, StringField(info, "id"));
  out << "Update changefeed config successfully! \nID: " << id << "\nInfo: " << info.dump() << "\n";
  return Status::Ok();
}

Status ListCaptures(ApiClient& api, std::ostream& out) {
  ASSIGN_OR_RETURN(std::string reply, api.Get("/api/v2/captures"));
  ASSIGN_OR_RETURN(std::string text, FormatCaptureList(reply));
  out << text;
  return Status::Ok();
}

}  // namespace sluice::cli
