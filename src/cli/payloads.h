// The CLI's request bodies (TiCDC's API v2 shapes) and its printed output
// (TiCDC's `cdc cli` shapes), as pure functions of flags and response bodies.
//
// Response bodies are untrusted: a body that is not the expected JSON shape
// is InvalidArgument naming what is wrong. Nothing here throws. Every
// function is pure and may be called from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "config/replica_config.h"

namespace sluice::cli {

using OrderedJson = nlohmann::ordered_json;

// TiCDC's checks of a changefeed id and a namespace, with its errors
// ([CDC:ErrInvalidChangefeedID], [CDC:ErrInvalidNamespace]).
Status ValidateChangefeedId(std::string_view id);
Status ValidateNamespace(std::string_view ns);

// Reads and parses the `--config` TOML file. Errors name the file and, from
// src/config, the key and line.
Result<config::ReplicaConfig> LoadReplicaConfig(const std::string& path);

// Checks `config` against the sink URI as TiCDC does before sending it
// (ValidateAndAdjust) and returns the adjusted config as the API v2 JSON
// object. Errors name the sink URI problem or the config key.
Result<OrderedJson> CheckedReplicaConfig(const config::ReplicaConfig& config,
                                         const std::string& sink_uri);

// TiCDC's ChangefeedConfig body of POST / PUT /api/v2/changefeeds.
struct ChangefeedConfigBody {
  std::string ns;
  std::string id;
  uint64_t start_ts = 0;
  uint64_t target_ts = 0;
  std::string sink_uri;
  OrderedJson replica_config;  // null: not sent (JSON null)
};
std::string ToJson(const ChangefeedConfigBody& body);

// TiCDC's ResumeChangefeedConfig body.
std::string ResumeBody(uint64_t overwrite_checkpoint_ts);
// TiCDC's UpstreamConfig body of POST /api/v2/tso.
std::string TsoQueryBody(uint64_t upstream_id);
// The TSO of a POST /api/v2/tso answer {"timestamp": ms, "logic_time": n}.
Result<uint64_t> ParseTsoAnswer(std::string_view body);

// Parses a response body that must be a JSON object.
Result<OrderedJson> ParseObject(std::string_view body);

// `changefeed list`: the items of GET /api/v2/changefeeds ({total, items})
// as [{id, namespace, summary: {state, tso, checkpoint, error}}], without
// finished and removed changefeeds unless `all`. Indented as TiCDC prints.
Result<std::string> FormatChangefeedList(std::string_view body, bool all);

// `changefeed query`: GET /api/v2/changefeeds/{id} as TiCDC's cfMeta.
Result<std::string> FormatChangefeedDetail(std::string_view body);

// `capture list`: the items of GET /api/v2/captures as
// [{id, is-owner, address, cluster-id}].
Result<std::string> FormatCaptureList(std::string_view body);

// Indented JSON as TiCDC's util.JSONPrint (two spaces, trailing newline).
std::string JsonPrint(const OrderedJson& value);

// A JSON field as a string / unsigned number, or a default when absent or
// null; InvalidArgument naming the field when it has another type.
Result<std::string> StringField(const OrderedJson& object, const char* key);
Result<uint64_t> U64Field(const OrderedJson& object, const char* key);

}  // namespace sluice::cli
