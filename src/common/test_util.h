// Helpers for tests that coordinate threads without sleeping: a one-shot
// Notification and a bounded poll on a condition. Thread-safe. Meant for
// tests; production code waits on its own conditions.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "common/thread_annotations.h"

namespace sluice {

// A flag that one thread sets once and others wait for, with a timeout.
class Notification {
 public:
  void Notify() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    notified_ = true;
    cv_.SignalAll();
  }

  bool HasBeenNotified() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return notified_;
  }

  // Waits up to `timeout` (real time); returns whether Notify() happened.
  bool WaitFor(std::chrono::milliseconds timeout = std::chrono::seconds(5)) EXCLUDES(mu_) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    MutexLock lock(&mu_);
    while (!notified_) {
      if (cv_.WaitUntil(&mu_, deadline)) return notified_;
    }
    return true;
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  bool notified_ GUARDED_BY(mu_) = false;
};

// Re-evaluates `condition` (yielding in between) until it holds or `timeout`
// of real time passes. Returns whether it held. For states that have no
// condition variable to wait on, such as "a thread is now blocked in X".
inline bool PollUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace sluice
