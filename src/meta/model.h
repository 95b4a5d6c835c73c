// The typed metadata that the control plane keeps in the metastore, with
// TiCDC's JSON encoding (field names of pkg/config ChangeFeedInfo,
// ChangeFeedStatus and model CaptureInfo), so that the values in an etcd
// shared with TiCDC tooling read the same. Plain values; decoding untrusted
// bytes returns kCorruption and never throws or aborts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/strong_id.h"

namespace sluice::meta {

// A changefeed's identity: TiCDC's namespace (keyspace) and name.
struct ChangefeedId {
  std::string ns = "default";
  std::string name;

  std::string ToString() const { return ns + "/" + name; }
  // The inverse of ToString(): "ns/name" with both parts non-empty (the name
  // is everything after the first '/'); kInvalidArgument otherwise.
  static Result<ChangefeedId> Parse(std::string_view id) {
    const size_t slash = id.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == id.size()) {
      return InvalidArgument("changefeed id is not namespace/name: " + std::string(id));
    }
    return ChangefeedId{std::string(id.substr(0, slash)), std::string(id.substr(slash + 1))};
  }
  friend auto operator<=>(const ChangefeedId&, const ChangefeedId&) = default;
};

// Whether `name` is a valid changefeed name or namespace: TiCDC's
// ^[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*$, at most 128 bytes.
bool IsValidChangefeedName(std::string_view name);

// TiCDC's FeedState, stored as its lower-case string.
enum class FeedState {
  kUninitialized,
  kNormal,
  kPending,
  kFailed,
  kStopped,
  kRemoved,
  kFinished,
  kWarning
};
std::string_view FeedStateName(FeedState state);
Result<FeedState> ParseFeedState(std::string_view name);

// TiCDC's AdminJobType, stored as its integer.
enum class AdminJobType { kNone = 0, kStop = 1, kResume = 2, kRemove = 3, kFinish = 4 };

// An error that stopped or warned a changefeed (TiCDC RunningError).
struct RunningError {
  int64_t time_ms = 0;  // Wall time, ms since the epoch; RFC 3339 in JSON.
  std::string addr;     // The node that saw it.
  std::string code;     // A stable code, e.g. "CDC:ErrSinkURIInvalid" or a Code name.
  std::string message;

  friend bool operator==(const RunningError&, const RunningError&) = default;
};

// A changefeed's definition and lifecycle state (the "info" key).
struct ChangefeedInfo {
  ChangefeedId id;
  uint64_t upstream_id = 0;
  std::string sink_uri;
  int64_t create_time_ms = 0;  // Wall time; RFC 3339 in JSON.
  Ts start_ts;
  Ts target_ts;  // 0: no target.
  AdminJobType admin_job_type = AdminJobType::kNone;
  // The replica config as a JSON object (TiCDC's ReplicaConfig shape; TOML
  // files are converted by the caller). Empty means none.
  std::string config_json;
  FeedState state = FeedState::kNormal;
  std::optional<RunningError> error;
  std::optional<RunningError> warning;
  std::string creator_version;
  // The maintainer generation (docs/design/maintainer-epoch-fencing.md);
  // 0 = pre-epoch.
  MaintainerEpoch epoch;

  friend bool operator==(const ChangefeedInfo&, const ChangefeedInfo&) = default;
};

// A changefeed's progress (the "status" key).
struct ChangefeedStatus {
  Ts checkpoint_ts;
  Ts min_table_barrier_ts;
  AdminJobType admin_job_type = AdminJobType::kNone;
  // The last error the coordinator recorded with its progress (an extension
  // of TiCDC's status; TiCDC readers ignore it).
  std::optional<RunningError> last_error;

  friend bool operator==(const ChangefeedStatus&, const ChangefeedStatus&) = default;
};

// A node's registration (TiCDC CaptureInfo), kept on the node's lease.
struct CaptureInfo {
  NodeId id;
  std::string advertise_addr;
  std::string version;
  std::string git_hash;
  std::string deploy_path;
  int64_t start_timestamp_s = 0;  // Wall time, seconds since the epoch.
  // Sluice's own field "peer-address": where the node's PeerMessaging
  // stream listens (host:port); empty for a node that takes no part in
  // scheduling (a TiCDC capture).
  std::string peer_addr;

  friend bool operator==(const CaptureInfo&, const CaptureInfo&) = default;
};

std::string EncodeChangefeedInfo(const ChangefeedInfo& info);
Result<ChangefeedInfo> DecodeChangefeedInfo(std::string_view json);
std::string EncodeChangefeedStatus(const ChangefeedStatus& status);
Result<ChangefeedStatus> DecodeChangefeedStatus(std::string_view json);
std::string EncodeCaptureInfo(const CaptureInfo& info);
Result<CaptureInfo> DecodeCaptureInfo(std::string_view json);

// RFC 3339 in UTC with milliseconds ("2024-05-01T12:00:00.123Z"), and its
// parser (also accepts other fractions and a "+hh:mm" offset, as Go writes).
std::string FormatRfc3339(int64_t ms_since_epoch);
Result<int64_t> ParseRfc3339(std::string_view text);

}  // namespace sluice::meta
