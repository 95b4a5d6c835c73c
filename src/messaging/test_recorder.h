// For messaging tests: a handler that records what it gets (with bounded
// waits on the count) and a gate a handler can block on. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "common/test_util.h"
#include "common/thread_annotations.h"
#include "messaging/message_center.h"

namespace sluice::messaging {

class Recorder {
 public:
  // A handler that records each message and returns `result`.
  Handler AsHandler(Status result = Status::Ok()) {
    return [this, result](const TargetMessage& msg) {
      Record(msg);
      return result;
    };
  }

  void Record(const TargetMessage& msg) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    messages_.push_back(msg);
    cv_.SignalAll();
  }

  // Waits (real time) until at least `n` messages were recorded.
  bool WaitFor(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5))
      EXCLUDES(mu_) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    MutexLock lock(&mu_);
    while (messages_.size() < n) {
      if (cv_.WaitUntil(&mu_, deadline)) return messages_.size() >= n;
    }
    return true;
  }

  std::vector<TargetMessage> messages() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return messages_;
  }

  size_t size() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return messages_.size();
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<TargetMessage> messages_ GUARDED_BY(mu_);
};

// A handler blocks in Pass() until the test opens the gate; `entered` tells
// the test that a handler is inside.
struct Gate {
  Notification entered;
  Notification open;

  void Pass() {
    entered.Notify();
    open.WaitFor(std::chrono::seconds(10));
  }
};

}  // namespace sluice::messaging
