// Opens a changefeed's sink from its sink URI: mysql:// and tidb:// (the
// MySQL sink), file:// (the storage sink, csv or canal-json) and
// blackhole://. The changefeed config's sink settings arrive as URI
// parameters (config::SinkParams) merged under the URI's own: a parameter
// the URI gives wins. Other schemes are NotSupported; a malformed URI is
// InvalidArgument naming the problem. Thread-safe (no state).
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "config/replica_config.h"
#include "sink/sink.h"
#include "sink/sink_uri.h"

namespace sluice::node {

struct SinkOpenOptions {
  std::string sink_uri;
  std::string changefeed_id;  // "<namespace>/<name>", as ddl_ts_v1 stores it.
  Ts start_ts;                // The checkpoint the changefeed restarts from.
  Clock* clock = Clock::Real();
  config::ReplicaConfig config;    // Its sink settings, as config::SinkParams.
  sink::WritePermit write_permit;  // Asked before every write (sink.h).
  MaintainerEpoch epoch;           // The generation writing (the MySQL sink's fence).
};

// The sink URI with the config's parameters merged under its own.
Result<sink::SinkUri> EffectiveSinkUri(const SinkOpenOptions& options);

Result<std::unique_ptr<sink::Sink>> OpenSink(const SinkOpenOptions& options);

}  // namespace sluice::node
