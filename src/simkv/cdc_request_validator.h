// Stream-level checks of the simulated store's CDC service, before a region
// is looked at: the client's version, its requested features, the cluster
// id, the kv API and the store's busy state. Pure functions; thread-safe.
//
// Compatibility rule (simkv's own; TiKV no longer refuses old clients): a
// stream's version is the Header.ticdc_version of its first request, parsed
// as semver (MAJOR.MINOR.PATCH[-pre][+build]). Below 4.0.8, the first
// version that understands batched resolved ts (the only form simkv sends),
// or empty or unparsable (TiKV reads those as 0.0.0), every register is
// answered Compatibility{required_version: "4.0.8"}. TiCDC sends its release
// version, e.g. "8.5.0"; so must any client of simkv.
//
// As in TiKV, the cluster id is checked only for clients at 5.3.0 or later,
// and a kv_api other than TiDB is answered Compatibility{"6.2.0"} (simkv is
// an API v1 store).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cdcpb.pb.h"
#include "common/status.h"

namespace sluice::simkv {

inline constexpr std::string_view kMinClientVersion = "4.0.8";
inline constexpr std::string_view kFeaturesKey = "features";
inline constexpr std::string_view kStreamMultiplexing = "stream-multiplexing";

struct ClientVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  bool prerelease = false;
  bool parsed = false;  // False for empty or unparsable text.

  static ClientVersion Parse(std::string_view text);
  // Semver order: a pre-release sorts before its release.
  bool AtLeast(int major, int minor, int patch) const;
};

struct StreamFeatures {
  bool multiplexing = false;
};

// Parses the value of the `features` metadata as TiKV does: comma separated,
// trimmed; every name must be known. InvalidArgument listing the unknown
// names otherwise (the stream then fails with UNIMPLEMENTED).
Result<StreamFeatures> ParseFeatures(std::string_view value);

struct BusyState {
  std::string reason;
  uint64_t backoff_ms = 0;
};

struct RequestContext {
  uint64_t cluster_id = 0;
  ClientVersion version;
  std::optional<BusyState> busy;
};

// The answer to a register request that fails a stream-level check, in this
// order: Compatibility (version), ClusterIDMismatch, Compatibility (kv_api),
// ServerIsBusy. nullopt when the region checks may proceed.
std::optional<cdcpb::Error> ValidateRegister(const cdcpb::ChangeDataRequest& request,
                                             const RequestContext& context);

}  // namespace sluice::simkv
