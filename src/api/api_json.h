// The JSON shapes of TiCDC's HTTP API v2 (api/v2/model.go) for Sluice's
// changefeed views, and the typed parsing of request bodies with Go's
// encoding/json rules (wrong types are errors, unknown fields are ignored,
// as gin's BindJSON does). Every function is pure, never throws (nlohmann
// errors are caught here) and may be called from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/api_error.h"
#include "common/strong_id.h"
#include "config/replica_config.h"
#include "coordinator/coordinator.h"
#include "meta/model.h"

namespace sluice::api {

using Json = nlohmann::json;

// Compact JSON text; invalid UTF-8 in strings is replaced, never thrown.
std::string Dump(const Json& value);

// TiCDC's api.JSONTime of a TSO: "2006-01-02 15:04:05.000" in local time.
std::string FormatJsonTime(Ts ts);

// config.RunningError: {"time","addr","code","message"}.
Json RunningErrorJson(const meta::RunningError& error);

// ChangefeedCommonInfo (list item): upstream_id, namespace, keyspace, id,
// state (uninitialized shown as normal, pending as warning), checkpoint_tso,
// checkpoint_time, error (the error, else the warning, else null).
Json CommonInfoJson(const coordinator::ChangefeedView& view);

// ChangeFeedInfo: upstream_id, namespace, keyspace, id, sink_uri (password
// masked), create_time, start_ts, target_ts, admin_job_type, config, state,
// error (only for failed/warning/pending states), creator_version,
// resolved_ts, checkpoint_ts, checkpoint_time, maintainer_addr. Fields Go
// tags `omitempty` are left out when zero.
Json ChangefeedInfoJson(const coordinator::ChangefeedView& view,
                        const std::string& maintainer_addr);

// ChangefeedStatus: state, resolved_ts, checkpoint_ts, last_error (failed),
// last_warning (warning).
Json StatusJson(const coordinator::ChangefeedView& view);

// TiCDC's FeedState.IsNeeded: "all" lists everything, "" lists normal,
// stopped, failed, warning and pending, anything else must match exactly.
bool StateMatches(meta::FeedState state, std::string_view filter);

// The body of POST and PUT /api/v2/changefeeds (TiCDC ChangefeedConfig).
struct ChangefeedConfigRequest {
  std::string ns;  // "namespace" (or "keyspace"); empty when absent.
  std::string id;  // "changefeed_id"; empty when absent.
  uint64_t start_ts = 0;
  uint64_t target_ts = 0;
  std::string sink_uri;
  std::optional<config::ReplicaConfig> replica_config;  // Absent or null: none.
};

// ErrAPIInvalidParam for malformed JSON, a body that is not an object, or a
// field of the wrong type (also inside replica_config); ErrInvalidReplicaConfig
// for a replica_config value out of range. PD fields (pd_addrs, ca_path,
// cert_path, key_path, cert_allowed_cn) are type-checked and ignored.
ApiOr<ChangefeedConfigRequest> ParseChangefeedConfig(std::string_view body);

// The body of POST .../resume (TiCDC ResumeChangefeedConfig); empty is {}.
struct ResumeRequest {
  uint64_t overwrite_checkpoint_ts = 0;  // 0: keep the checkpoint.
};
ApiOr<ResumeRequest> ParseResume(std::string_view body);

// The body of POST /api/v2/tso (TiCDC UpstreamConfig). A body that is
// empty, not JSON, not an object or has a field of the wrong type is
// ErrAPIInvalidParam; `null` is {} (Go leaves the struct as it is).
struct UpstreamRequest {
  uint64_t id = 0;  // "id": the PD cluster id; 0: the default upstream.
  std::vector<std::string> pd_addrs;
};
ApiOr<UpstreamRequest> ParseUpstream(std::string_view body);

// TiCDC's Tso: {"timestamp": physical ms, "logic_time": logical}.
Json TsoJson(Ts ts);

// The replica config as stored in ChangefeedInfo::config_json: ToJson with
// the Kafka SASL password kept (ToJson masks it for display).
std::string EncodeStoredConfig(const config::ReplicaConfig& config);

// The stored config_json for display ("" means TiCDC's defaults); the
// password masked. Null if the stored text does not decode.
Json DisplayConfig(const std::string& config_json);

}  // namespace sluice::api
