// ServiceSafePoints: PD's service GC safepoints (the classic
// UpdateServiceGCSafePoint API that TiCDC uses), as plain logic so that it can
// be tested without gRPC. PdService owns one and calls it under its mutex.
//
// Semantics (PD's, pkg/gc): each service holds a safe point that expires TTL
// seconds after its last update. The GC worker is an implicit service
// "gc_worker" whose safe point is the current GC safe point and which never
// expires. An update with TTL <= 0 or safe point MaxUint64 removes the
// service's entry. An update below the current minimum (which is at most the
// GC safe point) is refused silently: nothing is stored and the caller sees a
// minimum above what it asked for. Every call drops expired entries first.
//
// Not thread-safe: one owner.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/strong_id.h"

namespace sluice::simkv {

struct ServiceSafePoint {
  std::string service_id;
  Ts safe_point;
  // Unix seconds; kNeverExpires for the GC worker.
  int64_t expired_at = 0;

  static constexpr int64_t kNeverExpires = std::numeric_limits<int64_t>::max();
};

class ServiceSafePoints {
 public:
  static constexpr std::string_view kGcWorker = "gc_worker";

  struct UpdateResult {
    ServiceSafePoint min;  // The minimum after the update, gc_worker included.
    bool updated = false;  // Whether the service's entry was stored.
  };

  // `now_unix` is the current time in Unix seconds; `gc_safe_point` the
  // current GC safe point (the implicit gc_worker entry).
  UpdateResult Update(std::string_view service_id, Ts safe_point, int64_t ttl_seconds,
                      int64_t now_unix, Ts gc_safe_point);

  // The minimum over the live services and the gc_worker entry; the first in
  // service-id order wins a tie.
  ServiceSafePoint Min(int64_t now_unix, Ts gc_safe_point);

  // The minimum over the live services only (not gc_worker); nullopt if none.
  std::optional<Ts> MinService(int64_t now_unix);

  // The live services (not gc_worker), ordered by id.
  std::vector<ServiceSafePoint> Live(int64_t now_unix);

 private:
  void DropExpired(int64_t now_unix);

  std::map<std::string, ServiceSafePoint, std::less<>> services_;
};

// TTL seconds left until `expired_at`, never negative.
int64_t TtlLeft(const ServiceSafePoint& point, int64_t now_unix);

}  // namespace sluice::simkv
