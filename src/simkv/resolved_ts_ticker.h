// ResolvedTsTicker: calls a function every `interval` on an owned thread,
// waiting through an injected Clock (TiKV's CDC min-ts tick, 200 ms by
// default). An interval of zero starts no thread; tests then drive the
// function by hand.
//
// Lifecycle: Start() once, Stop() from the owner (also run by the
// destructor). The function runs on the ticker's thread only.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include "common/clock.h"
#include "common/lifecycle.h"

namespace sluice::simkv {

class ResolvedTsTicker {
 public:
  // `clock` must outlive the ticker.
  ResolvedTsTicker(Clock* clock, Clock::Duration interval, std::function<void()> tick)
      : clock_(clock), interval_(interval), tick_(std::move(tick)) {}
  ~ResolvedTsTicker() { Stop(); }
  ResolvedTsTicker(const ResolvedTsTicker&) = delete;
  ResolvedTsTicker& operator=(const ResolvedTsTicker&) = delete;

  void Start(std::string name);
  void Stop() { thread_.Stop(); }

 private:
  Clock* const clock_;
  const Clock::Duration interval_;
  const std::function<void()> tick_;
  OwnedThread thread_;
};

}  // namespace sluice::simkv
