// Owned threads (docs/architecture.md, "Invariants": owned threads): every
// thread in Sluice is started through OwnedThread or ThreadGroup, named,
// cancellable through a StopToken, and joined by its owner's Stop(). Nothing
// is ever detached.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/cancel.h"
#include "common/thread_annotations.h"

namespace sluice {

// Passed to a thread body; cancelled when its owner requests a stop. The body
// checks it (or blocks in a wait that takes it) and returns promptly.
using StopToken = CancelToken;
using ThreadBody = std::function<void(StopToken)>;

// One named thread owned by a component.
//
// Lifecycle: Start() once; RequestStop() and Join() any number of times
// (both idempotent); Stop() does both. The destructor stops and joins a
// thread that is still running, so a thread never outlives its owner.
// Concurrency: RequestStop() may be called from any thread, including the
// owned thread itself. Start(), Join() and Stop() are for the owner (Join()
// from the owned thread itself is a programming error and asserts).
class OwnedThread {
 public:
  OwnedThread() = default;
  ~OwnedThread();
  OwnedThread(const OwnedThread&) = delete;
  OwnedThread& operator=(const OwnedThread&) = delete;

  // Runs `body` on a new thread named `name` (the OS shows the first 15
  // bytes). Calling Start() twice is a programming error (asserts).
  void Start(std::string name, ThreadBody body) EXCLUDES(mu_);

  void RequestStop() { source_.Cancel(); }
  // Waits for the body to return. No-op if never started or already joined.
  void Join() EXCLUDES(join_mu_, mu_);
  void Stop() {
    RequestStop();
    Join();
  }

  bool stop_requested() const { return source_.cancelled(); }
  // True from Start() until Join() returns.
  bool joinable() const EXCLUDES(mu_);

 private:
  CancelSource source_;
  Mutex join_mu_ ACQUIRED_BEFORE(mu_);  // Held while joining; serializes Join().
  mutable Mutex mu_;                    // Never held while joining.
  bool started_ GUARDED_BY(mu_) = false;
  bool joined_ GUARDED_BY(mu_) = false;
  std::thread thread_ GUARDED_BY(mu_);
};

// A fixed set of named threads that stop together (e.g. the workers of one
// component). All share one StopToken, so a thread started after
// RequestStop() sees the stop at once.
//
// Same lifecycle and thread rules as OwnedThread: Start() and Join() are for
// the owner; RequestStop() is for anyone; the destructor stops and joins.
class ThreadGroup {
 public:
  ThreadGroup() = default;
  ~ThreadGroup();
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;

  // Starting after Join() is a programming error (asserts).
  void Start(std::string name, ThreadBody body) EXCLUDES(mu_);
  void RequestStop() { source_.Cancel(); }
  // Waits for every body to return. Idempotent.
  void Join() EXCLUDES(join_mu_, mu_);
  void Stop() {
    RequestStop();
    Join();
  }

  bool stop_requested() const { return source_.cancelled(); }
  StopToken token() const { return source_.token(); }
  // Threads started so far (joined ones included).
  size_t size() const EXCLUDES(mu_);

 private:
  CancelSource source_;
  Mutex join_mu_ ACQUIRED_BEFORE(mu_);  // Held while joining; serializes Join().
  mutable Mutex mu_;                    // Never held while joining.
  bool joined_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ GUARDED_BY(mu_);  // Not yet joined.
  size_t started_ GUARDED_BY(mu_) = 0;
};

// The name of the calling thread as the OS knows it ("" if unavailable).
std::string CurrentThreadName();

}  // namespace sluice
