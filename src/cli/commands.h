// The `cdc cli` commands once their flags are parsed: each checks its input
// locally, sends its requests to the server's HTTP API v2 (or PD for `tso
// query`) and prints TiCDC's output to `out`. Errors are returned, not
// printed; the caller prints them as "Error: <message>".
//
// Functions run on the caller's thread and keep no state between calls.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "cli/api_client.h"
#include "common/status.h"

namespace sluice::cli {

// Flags of the `changefeed` commands; which ones a command reads is listed
// with it. Optional fields are unset when the flag was not given.
struct ChangefeedFlags {
  std::string ns = "default";
  std::string id;
  std::string sink_uri;
  std::optional<uint64_t> start_ts;
  std::optional<uint64_t> target_ts;
  std::string config_path;
  bool no_confirm = false;
  bool all = false;
  bool simple = false;
  std::optional<std::string> overwrite_checkpoint_ts;
  bool sink_uri_set = false;
  int64_t table_id = 0;        // move-table --table-id.
  std::string target_node_id;  // move-table --target-node-id.
};

// POST /api/v2/changefeeds. Reads ns, id (may be empty: the server names
// it), sink_uri, start_ts, target_ts, config_path, no_confirm. The sink URI
// and the config are checked before any request.
Status CreateChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out);

// GET /api/v2/changefeeds?namespace=..&state=all. Reads ns, all.
Status ListChangefeeds(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out);

// GET /api/v2/changefeeds/{id} (or .../status with `simple`). Reads ns, id,
// simple.
Status QueryChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out);

// POST /api/v2/changefeeds/{id}/pause. Reads ns, id.
Status PauseChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out);

// POST /api/v2/changefeeds/{id}/move_table?tableID=..&targetNodeID=.. .
// Reads ns, id, table_id, target_node_id.
Status MoveTable(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out);

// GET /api/v2/changefeeds/{id}, then POST .../resume; with
// overwrite_checkpoint_ts also POST /api/v2/tso. Reads ns, id,
// overwrite_checkpoint_ts.
Status ResumeChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out);

// GET /api/v2/changefeeds/{id}, then DELETE it. Reads ns, id.
Status RemoveChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out);

// GET /api/v2/changefeeds/{id}, then PUT it with the changed sink URI,
// target ts or config. Reads ns, id, sink_uri (sink_uri_set), target_ts,
// config_path.
Status UpdateChangefeed(ApiClient& api, const ChangefeedFlags& flags, std::ostream& out);

// GET /api/v2/captures.
Status ListCaptures(ApiClient& api, std::ostream& out);

// Asks PD (comma-separated endpoints) for a TSO and prints it.
Status QueryTso(const std::string& pd_endpoints, std::ostream& out);

}  // namespace sluice::cli
