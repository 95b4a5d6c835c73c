// Time as a dependency. Every timeout, tick and backoff in Sluice reads time
// and waits through a Clock, so tests can use a ManualClock and move time
// forward instead of sleeping. Also Backoff: exponential delays with jitter.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "common/cancel.h"
#include "common/thread_annotations.h"

namespace sluice {

// A source of steady and wall time that can also time out condition waits.
// Implementations are thread-safe; one clock is shared by a whole process
// (or a whole test) and must outlive every component that uses it.
class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;

  // Monotonic time, for deadlines and intervals.
  virtual TimePoint Now() const = 0;
  // Calendar time, for TSO physical parts and human-facing timestamps. May
  // jump; never use it for deadlines.
  virtual WallTime WallNow() const = 0;

  // Atomically releases `mu` and waits until `cv` is signalled or this
  // clock's Now() reaches `deadline`; holds `mu` again on return. May also
  // return spuriously, so callers loop on their own condition. Returns true
  // if the deadline has passed.
  virtual bool WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) REQUIRES(mu) = 0;

  // Blocks until Now() reaches `deadline` or `token` is cancelled. Returns
  // true if the deadline was reached, false if cancelled first.
  bool SleepUntil(TimePoint deadline, const CancelToken& token);
  bool SleepFor(Duration d, const CancelToken& token) { return SleepUntil(Now() + d, token); }

  // A process-wide RealClock. Never destroyed.
  static Clock* Real();
};

// The system's steady_clock and system_clock.
class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override;
  bool WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) override REQUIRES(mu);
};

// A clock that moves only when told to. Advance() wakes every WaitUntil()
// whose deadline has been reached. Thread-safe. Advance() must not be called
// while holding a mutex that a waiter passed to WaitUntil() (it takes those
// mutexes to deliver the wake-up without a lost-signal race).
class ManualClock final : public Clock {
 public:
  // Starts at steady time `start` and wall time `wall_start`.
  explicit ManualClock(TimePoint start = TimePoint(std::chrono::hours(1)),
                       WallTime wall_start = WallTime(std::chrono::seconds(1700000000)));
  ~ManualClock() override;

  TimePoint Now() const override EXCLUDES(mu_);
  WallTime WallNow() const override EXCLUDES(mu_);
  bool WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) override REQUIRES(mu) EXCLUDES(mu_);

  // Moves both steady and wall time forward by `d` (>= 0) and wakes the
  // waiters whose deadline has been reached.
  void Advance(Duration d) EXCLUDES(mu_);
  // Sets wall time only (it may go backwards, like a real wall clock).
  void SetWallTime(WallTime t) EXCLUDES(mu_);

  // Number of threads currently inside WaitUntil().
  size_t NumWaiters() const EXCLUDES(mu_);
  // Blocks (in real time, up to `real_timeout`) until at least `n` threads
  // are inside WaitUntil(). Returns whether that happened. Lets a test know
  // a thread is parked before it advances time.
  bool AwaitWaiters(size_t n, std::chrono::milliseconds real_timeout = std::chrono::seconds(5))
      EXCLUDES(mu_);

 private:
  struct Waiter {
    CondVar* cv;
    Mutex* mu;
    TimePoint deadline;
    bool being_woken = false;  // Advance() holds a pointer to it; guarded by mu_.
  };

  mutable Mutex mu_;
  CondVar changed_;  // A waiter registered or a wake-up finished.
  TimePoint now_ GUARDED_BY(mu_);
  WallTime wall_now_ GUARDED_BY(mu_);
  std::vector<Waiter*> waiters_ GUARDED_BY(mu_);
};

// Parameters of a Backoff. Default: 100 ms doubling to 10 s, each delay
// drawn uniformly from [nominal * (1 - jitter), nominal].
struct BackoffOptions {
  Clock::Duration base = std::chrono::milliseconds(100);
  Clock::Duration max = std::chrono::seconds(10);
  double multiplier = 2.0;  // >= 1.
  double jitter = 0.2;      // In [0, 1]; 0 gives exact exponential delays.
};

// Computes retry delays: the n-th call to Next() returns about
// min(max, base * multiplier^n), lowered by a random jitter so that many
// retrying units spread out. Reset() after a success. Deterministic for a
// given seed. Thread-compatible: owned and used by one retry loop.
class Backoff {
 public:
  Backoff(BackoffOptions options, uint64_t seed);

  // The delay to wait before the next attempt.
  Clock::Duration Next();
  // Starts again from `base`.
  void Reset();
  // Calls to Next() since construction or the last Reset().
  int attempts() const { return attempts_; }

 private:
  const BackoffOptions options_;
  std::mt19937_64 rng_;
  double nominal_ns_;  // Undithered delay that the next call returns.
  int attempts_ = 0;
};

}  // namespace sluice
