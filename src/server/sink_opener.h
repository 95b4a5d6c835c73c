// Opens a changefeed's sink from its sink URI: mysql:// and tidb:// (the
// MySQL sink), file:// (the storage sink, csv or canal-json) and
// blackhole://. Other schemes are NotSupported; a malformed URI is
// InvalidArgument naming the problem. Thread-safe (no state).
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "sink/sink.h"

namespace sluice::server {

struct SinkOpenOptions {
  std::string sink_uri;
  std::string changefeed_id;  // "<namespace>/<name>", as ddl_ts_v1 stores it.
  Ts start_ts;                // The checkpoint the changefeed restarts from.
  Clock* clock = Clock::Real();
};

Result<std::unique_ptr<sink::Sink>> OpenSink(const SinkOpenOptions& options);

}  // namespace sluice::server
