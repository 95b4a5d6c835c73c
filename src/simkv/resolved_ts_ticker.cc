#include "simkv/resolved_ts_ticker.h"

#include <utility>

namespace sluice::simkv {

void ResolvedTsTicker::Start(std::string name) {
  if (interval_ <= Clock::Duration::zero()) return;
  thread_.Start(std::move(name), [this](StopToken token) {
    // Waits on the clock's own time, so a ManualClock drives the ticks.
    while (clock_->SleepFor(interval_, token)) tick_();
  });
}

}  // namespace sluice::simkv
