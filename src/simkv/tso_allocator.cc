#include "simkv/tso_allocator.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "common/tso.h"

namespace sluice::simkv {

namespace {

int64_t SystemMillis() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
}

}  // namespace

TsoAllocator::TsoAllocator() : TsoAllocator(SystemMillis) {}

TsoAllocator::TsoAllocator(PhysicalClock clock) : clock_(std::move(clock)) {}

TsoAllocator::TsoAllocator(const Clock* clock)
    : TsoAllocator([clock] {
        auto wall = clock->WallNow().time_since_epoch();
        return std::chrono::duration_cast<std::chrono::milliseconds>(wall).count();
      }) {}

Result<Ts> TsoAllocator::Allocate(uint32_t count) {
  if (count == 0 || count > kMaxBatch) {
    return InvalidArgument("tso: batch size " + std::to_string(count) + " out of range");
  }
  MutexLock lock(&mu_);
  int64_t last_physical = tso::Physical(last_);
  int64_t physical = std::max(clock_(), last_physical);
  // The first logical of the batch: after the last one in the same
  // millisecond, or 0 in a later one. Roll forward if the batch would not fit.
  int64_t first = physical == last_physical ? tso::Logical(last_) + 1 : 0;
  if (first + count - 1 > static_cast<int64_t>(tso::kLogicalMask)) {
    physical += 1;
    first = 0;
  }
  last_ = tso::Compose(physical, first + count - 1);
  return last_;
}

Ts TsoAllocator::Max() const {
  MutexLock lock(&mu_);
  return last_;
}

void TsoAllocator::RestoreAbove(Ts ts) {
  MutexLock lock(&mu_);
  last_ = std::max(last_, ts);
}

}  // namespace sluice::simkv
