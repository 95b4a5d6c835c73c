#include "simkv/service_safepoints.h"

#include <utility>

namespace sluice::simkv {

namespace {

constexpr uint64_t kRemove = std::numeric_limits<uint64_t>::max();

int64_t ExpiryOf(int64_t now_unix, int64_t ttl_seconds) {
  if (now_unix >= 0 && ServiceSafePoint::kNeverExpires - now_unix <= ttl_seconds) {
    return ServiceSafePoint::kNeverExpires;
  }
  return now_unix + ttl_seconds;
}

}  // namespace

void ServiceSafePoints::DropExpired(int64_t now_unix) {
  std::erase_if(services_, [&](const auto& entry) { return entry.second.expired_at < now_unix; });
}

ServiceSafePoints::UpdateResult ServiceSafePoints::Update(std::string_view service_id,
                                                          Ts safe_point, int64_t ttl_seconds,
                                                          int64_t now_unix, Ts gc_safe_point) {
  DropExpired(now_unix);
  if (ttl_seconds <= 0 || safe_point.value() == kRemove) {
    if (auto it = services_.find(service_id); it != services_.end()) services_.erase(it);
    return {Min(now_unix, gc_safe_point), false};
  }
  if (safe_point < Min(now_unix, gc_safe_point).safe_point) {
    return {Min(now_unix, gc_safe_point), false};
  }
  ServiceSafePoint point{std::string(service_id), safe_point, ExpiryOf(now_unix, ttl_seconds)};
  services_.insert_or_assign(point.service_id, std::move(point));
  return {Min(now_unix, gc_safe_point), true};
}

ServiceSafePoint ServiceSafePoints::Min(int64_t now_unix, Ts gc_safe_point) {
  DropExpired(now_unix);
  ServiceSafePoint gc_worker{std::string(kGcWorker), gc_safe_point,
                             ServiceSafePoint::kNeverExpires};
  const ServiceSafePoint* min = nullptr;
  bool gc_worker_seen = false;
  for (const auto& [id, point] : services_) {
    if (!gc_worker_seen && id > kGcWorker) {
      gc_worker_seen = true;
      if (min == nullptr || gc_worker.safe_point < min->safe_point) min = &gc_worker;
    }
    if (min == nullptr || point.safe_point < min->safe_point) min = &point;
  }
  if (!gc_worker_seen && (min == nullptr || gc_worker.safe_point < min->safe_point)) {
    min = &gc_worker;
  }
  return *min;
}

std::optional<Ts> ServiceSafePoints::MinService(int64_t now_unix) {
  DropExpired(now_unix);
  std::optional<Ts> min;
  for (const auto& [id, point] : services_) {
    if (!min || point.safe_point < *min) min = point.safe_point;
  }
  return min;
}

std::vector<ServiceSafePoint> ServiceSafePoints::Live(int64_t now_unix) {
  DropExpired(now_unix);
  std::vector<ServiceSafePoint> out;
  for (const auto& [id, point] : services_) out.push_back(point);
  return out;
}

int64_t TtlLeft(const ServiceSafePoint& point, int64_t now_unix) {
  if (point.expired_at <= now_unix) return 0;
  if (now_unix < 0 && point.expired_at > ServiceSafePoint::kNeverExpires + now_unix) {
    return ServiceSafePoint::kNeverExpires;
  }
  return point.expired_at - now_unix;
}

}  // namespace sluice::simkv
