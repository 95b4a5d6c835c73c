// GcManager: keeps the upstream's service GC safepoint of this cluster at
// (minimum checkpoint over all changefeeds) - 1, so that TiKV keeps every
// MVCC version a changefeed may still read, and rejects a start ts that GC
// has already passed (TiCDC's ErrStartTsBeforeGC, here
// Code::kGcSafepointExceeded).
//
// The PD calls go through GcSafepointUpdater so that tests can use a fake.
// Ownership: the updater is not owned and must outlive the manager.
// Thread-compatible: the coordinator calls it under its own lock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"

namespace sluice::coordinator {

// The PD GC safepoint calls the manager needs.
class GcSafepointUpdater {
 public:
  virtual ~GcSafepointUpdater() = default;
  // Sets (ttl > 0) the service safepoint of `service_id`; returns the
  // minimum service safepoint PD holds, which is above `safepoint` when PD
  // refused it because GC has already passed it.
  virtual Result<Ts> UpdateServiceGcSafepoint(const std::string& service_id, int64_t ttl_seconds,
                                              Ts safepoint) = 0;
  // PD's current GC safepoint (GC may delete versions below it).
  virtual Result<Ts> GetGcSafepoint() = 0;
};

// TiCDC's service id shape: "ticdc-<cluster>-<meta cluster id>".
std::string GcServiceId(std::string_view cluster_id, uint64_t meta_cluster_id);

struct GcOptions {
  std::string service_id = "ticdc-default-0";
  int64_t ttl_seconds = 86400;                                // TiCDC's gc-ttl default (24 h).
  Clock::Duration update_interval = std::chrono::minutes(1);  // TiCDC's gcTickInterval.
};

class GcManager {
 public:
  GcManager(GcSafepointUpdater* updater, GcOptions options);

  // kGcSafepointExceeded if GC has passed `start_ts` (the changefeed could
  // not read its start snapshot); the updater's error if PD cannot answer.
  Status CheckStartTs(Ts start_ts);

  // Sets the service safepoint to `min_checkpoint` - 1 with the TTL if
  // `force`, if the last attempt is older than the update interval, or if
  // the last attempt failed. Returns the updater's error (the caller
  // reports it and goes on: the previous safepoint holds for its TTL).
  Status MaybeUpdate(Ts min_checkpoint, Clock::TimePoint now, bool force);

  const GcOptions& options() const { return options_; }
  Ts last_safepoint() const { return last_safepoint_; }  // 0 until one succeeded.
  uint64_t updates() const { return updates_; }
  uint64_t failures() const { return failures_; }
  const Status& last_error() const { return last_error_; }

 private:
  GcSafepointUpdater* const updater_;
  const GcOptions options_;
  bool attempted_ = false;
  Clock::TimePoint last_attempt_{};
  Ts last_safepoint_;
  uint64_t updates_ = 0;
  uint64_t failures_ = 0;
  Status last_error_;
};

}  // namespace sluice::coordinator
