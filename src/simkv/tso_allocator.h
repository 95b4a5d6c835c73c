// TsoAllocator: PD's timestamp oracle for simkv. Hands out batches of TSO
// timestamps (physical_ms << 18 | logical) that are strictly increasing across
// calls even when the clock stalls or goes back, and can be restored above a
// persisted maximum so a restarted PD never repeats a timestamp.
//
// Thread-safe: one mutex; the clock function is called under it and must be
// cheap and non-blocking.
#pragma once

#include <cstdint>
#include <functional>

#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"

namespace sluice::simkv {

class TsoAllocator {
 public:
  // Milliseconds since the Unix epoch; injectable for tests.
  using PhysicalClock = std::function<int64_t()>;

  // The largest batch one call may request (the whole logical space).
  static constexpr uint32_t kMaxBatch = uint32_t{1} << 18;

  // Uses the system clock.
  TsoAllocator();
  explicit TsoAllocator(PhysicalClock clock);
  // Uses clock->WallNow(); the clock must outlive the allocator.
  explicit TsoAllocator(const Clock* clock);

  // Allocates `count` consecutive timestamps and returns the largest (the
  // PD batch convention: the batch is [last - count + 1, last], all with the
  // same physical part). InvalidArgument if count is 0 or above kMaxBatch.
  Result<Ts> Allocate(uint32_t count = 1);

  // The largest timestamp handed out or restored; persist it across restarts.
  Ts Max() const;

  // Makes every later timestamp greater than `ts` (no-op if already so).
  void RestoreAbove(Ts ts);

 private:
  PhysicalClock clock_;
  mutable Mutex mu_;
  Ts last_ GUARDED_BY(mu_);  // The largest ts handed out or restored.
};

}  // namespace sluice::simkv
