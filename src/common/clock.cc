#include "common/clock.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace sluice {

bool Clock::SleepUntil(TimePoint deadline, const CancelToken& token) {
  Mutex mu;
  CondVar cv;
  // Declared before the lock: see CancelCallback.
  CancelCallback on_cancel(token, [&mu, &cv] {
    MutexLock lock(&mu);
    cv.SignalAll();
  });
  MutexLock lock(&mu);
  while (!token.cancelled()) {
    if (WaitUntil(&cv, &mu, deadline)) return true;
  }
  return false;
}

Clock* Clock::Real() {
  static RealClock* const kClock = new RealClock();
  return kClock;
}

Clock::WallTime RealClock::WallNow() const { return std::chrono::system_clock::now(); }

bool RealClock::WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) {
  return cv->WaitUntil(mu, deadline);
}

ManualClock::ManualClock(TimePoint start, WallTime wall_start)
    : now_(start), wall_now_(wall_start) {}

ManualClock::~ManualClock() {
  MutexLock lock(&mu_);
  assert(waiters_.empty() && "ManualClock destroyed while threads wait on it");
}

Clock::TimePoint ManualClock::Now() const {
  MutexLock lock(&mu_);
  return now_;
}

Clock::WallTime ManualClock::WallNow() const {
  MutexLock lock(&mu_);
  return wall_now_;
}

bool ManualClock::WaitUntil(CondVar* cv, Mutex* mu, TimePoint deadline) {
  Waiter self{cv, mu, deadline};
  {
    MutexLock lock(&mu_);
    if (now_ >= deadline) return true;
    waiters_.push_back(&self);
    changed_.SignalAll();
  }
  // An Advance() that passes `deadline` after the check above must take `mu`
  // before signalling `cv`, and `mu` is only released inside Wait(), so the
  // wake-up cannot be lost.
  cv->Wait(mu);

  bool being_woken;
  {
    MutexLock lock(&mu_);
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &self));
    being_woken = self.being_woken;
  }
  if (being_woken) {
    // Advance() still holds &self and is about to take `mu`; let it finish
    // before `self` goes out of scope.
    mu->Unlock();
    {
      MutexLock lock(&mu_);
      while (self.being_woken) changed_.Wait(&mu_);
    }
    mu->Lock();
  }
  MutexLock lock(&mu_);
  return now_ >= deadline;
}

void ManualClock::Advance(Duration d) {
  assert(d >= Duration::zero());
  std::vector<Waiter*> due;
  {
    MutexLock lock(&mu_);
    now_ += d;
    wall_now_ += std::chrono::duration_cast<WallTime::duration>(d);
    for (Waiter* w : waiters_) {
      if (w->deadline <= now_ && !w->being_woken) {
        w->being_woken = true;
        due.push_back(w);
      }
    }
  }
  for (Waiter* w : due) {
    MutexLock lock(w->mu);
    w->cv->SignalAll();
  }
  if (due.empty()) return;
  MutexLock lock(&mu_);
  for (Waiter* w : due) w->being_woken = false;
  changed_.SignalAll();
}

void ManualClock::SetWallTime(WallTime t) {
  MutexLock lock(&mu_);
  wall_now_ = t;
}

size_t ManualClock::NumWaiters() const {
  MutexLock lock(&mu_);
  return waiters_.size();
}

bool ManualClock::AwaitWaiters(size_t n, std::chrono::milliseconds real_timeout) {
  auto deadline = std::chrono::steady_clock::now() + real_timeout;
  MutexLock lock(&mu_);
  while (waiters_.size() < n) {
    if (changed_.WaitUntil(&mu_, deadline)) return waiters_.size() >= n;
  }
  return true;
}

Backoff::Backoff(BackoffOptions options, uint64_t seed) : options_(options), rng_(seed) {
  assert(options_.base > Clock::Duration::zero());
  assert(options_.max >= options_.base);
  assert(options_.multiplier >= 1.0);
  assert(options_.jitter >= 0.0 && options_.jitter <= 1.0);
  Reset();
}

Clock::Duration Backoff::Next() {
  const double max_ns = std::chrono::duration<double, std::nano>(options_.max).count();
  double nominal = std::min(nominal_ns_, max_ns);
  nominal_ns_ = std::min(nominal * options_.multiplier, max_ns);
  ++attempts_;
  double factor = 1.0;
  if (options_.jitter > 0) {
    std::uniform_real_distribution<double> dist(1.0 - options_.jitter, 1.0);
    factor = dist(rng_);
  }
  return std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double, std::nano>(std::floor(nominal * factor)));
}

void Backoff::Reset() {
  nominal_ns_ = std::chrono::duration<double, std::nano>(options_.base).count();
  attempts_ = 0;
}

}  // namespace sluice
