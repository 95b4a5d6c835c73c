// ByteQuota bounds the bytes in flight at one stage of the pipeline (puller
// in flight, event service per dispatcher, sink buffers). A full stage slows
// its producer; it never drops data (docs/architecture.md, "Invariants":
// bounded memory).
#pragma once

#include <algorithm>
#include <cstdint>
#include <list>
#include <string>

#include "common/cancel.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace sluice {

// A counting semaphore over bytes with a capacity. Waiters are served in
// arrival order, so a large request is not starved by a stream of small
// ones. A single request larger than the capacity is admitted once nothing
// is in flight (it could never fit otherwise).
//
// Every successful acquisition must be matched by exactly one Release() of
// the same number of bytes, also on shutdown and unsubscribe; QuotaLease
// does that automatically. Thread-safe: any thread may acquire and release.
// The quota must outlive its leases and any thread blocked in Acquire().
class ByteQuota {
 public:
  explicit ByteQuota(uint64_t capacity);
  ByteQuota(const ByteQuota&) = delete;
  ByteQuota& operator=(const ByteQuota&) = delete;
  ~ByteQuota();

  // Blocks until `bytes` can be admitted. Returns Cancelled if `token` is
  // cancelled or the quota is closed before that; nothing is acquired then.
  Status Acquire(uint64_t bytes, const CancelToken& token = {}) EXCLUDES(mu_);

  // Acquires without blocking. False if the bytes do not fit now, earlier
  // requests are waiting, or the quota is closed.
  bool TryAcquire(uint64_t bytes) EXCLUDES(mu_);

  // Returns bytes acquired earlier and wakes waiters that now fit.
  // Releasing more than is in flight is a programming error: it asserts in
  // debug builds and clamps the count at zero otherwise. Allowed after Close().
  void Release(uint64_t bytes) EXCLUDES(mu_);

  // Fails every blocked and future Acquire() with Cancelled. Releases keep
  // working so that holders can return what they have.
  void Close() EXCLUDES(mu_);

  uint64_t InFlight() const EXCLUDES(mu_);
  uint64_t capacity() const { return capacity_; }
  // Number of callers blocked in Acquire().
  size_t NumWaiting() const EXCLUDES(mu_);

 private:
  struct Waiter {
    explicit Waiter(uint64_t b) : bytes(b) {}
    const uint64_t bytes;
    bool granted = false;
    CondVar cv;
  };

  bool FitsLocked(uint64_t bytes) const REQUIRES(mu_) {
    return in_flight_ == 0 || capacity_ - std::min(capacity_, in_flight_) >= bytes;
  }
  // Admits waiters from the front while they fit.
  void GrantLocked() REQUIRES(mu_);

  const uint64_t capacity_;
  mutable Mutex mu_;
  uint64_t in_flight_ GUARDED_BY(mu_) = 0;
  bool closed_ GUARDED_BY(mu_) = false;
  std::list<Waiter*> waiters_ GUARDED_BY(mu_);  // Arrival order.
};

// Owns bytes acquired from a ByteQuota and releases them exactly once: on
// Release() or on destruction. Move-only; not thread-safe itself.
class QuotaLease {
 public:
  QuotaLease() = default;
  QuotaLease(QuotaLease&& other) noexcept;
  QuotaLease& operator=(QuotaLease&& other) noexcept;
  ~QuotaLease() { Release(); }

  // Acquires `bytes` from `quota` (see ByteQuota::Acquire) into `lease`.
  static Status Acquire(ByteQuota* quota, uint64_t bytes, const CancelToken& token,
                        QuotaLease* lease);
  // Takes over bytes already acquired from `quota`.
  static QuotaLease Adopt(ByteQuota* quota, uint64_t bytes) { return QuotaLease(quota, bytes); }

  void Release();
  uint64_t bytes() const { return bytes_; }

 private:
  QuotaLease(ByteQuota* quota, uint64_t bytes) : quota_(quota), bytes_(bytes) {}

  ByteQuota* quota_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace sluice
