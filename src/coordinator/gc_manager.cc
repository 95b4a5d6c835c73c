#include "coordinator/gc_manager.h"

#include <fmt/format.h>

#include "common/logging.h"

namespace sluice::coordinator {

std::string GcServiceId(std::string_view cluster_id, uint64_t meta_cluster_id) {
  return fmt::format("ticdc-{}-{}", cluster_id, meta_cluster_id);
}

GcManager::GcManager(GcSafepointUpdater* updater, GcOptions options)
    : updater_(updater), options_(std::move(options)) {}

Status GcManager::CheckStartTs(Ts start_ts) {
  Result<Ts> gc_safepoint = updater_->GetGcSafepoint();
  if (!gc_safepoint.ok()) return gc_safepoint.status().WithContext("read the gc safepoint");
  if (start_ts < *gc_safepoint) {
    return Status(Code::kGcSafepointExceeded,
                  fmt::format("start ts {} is before the gc safepoint {} (ErrStartTsBeforeGC)",
                              start_ts.value(), gc_safepoint->value()));
  }
  return Status::Ok();
}

Status GcManager::MaybeUpdate(Ts min_checkpoint, Clock::TimePoint now, bool force) {
  const bool due =
      !attempted_ || !last_error_.ok() || now - last_attempt_ >= options_.update_interval;
  if (!force && !due) return Status::Ok();
  attempted_ = true;
  last_attempt_ = now;
  const Ts safepoint(min_checkpoint.value() > 0 ? min_checkpoint.value() - 1 : 0);
  Result<Ts> result =
      updater_->UpdateServiceGcSafepoint(options_.service_id, options_.ttl_seconds, safepoint);
  if (!result.ok()) {
    ++failures_;
    last_error_ = result.status().WithContext("update the service gc safepoint");
    LOG_WARN("gc safepoint update to {} failed: {}", safepoint.value(), last_error_.ToString());
    return last_error_;
  }
  ++updates_;
  last_error_ = Status::Ok();
  last_safepoint_ = safepoint;
  if (*result > safepoint) {
    LOG_WARN("pd refused service gc safepoint {}: its minimum is {}", safepoint.value(),
             result->value());
  }
  return Status::Ok();
}

}  // namespace sluice::coordinator
