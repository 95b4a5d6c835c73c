// Clang thread-safety annotations and the annotated Mutex, MutexLock and
// CondVar that every component uses, so that `-Wthread-safety` (clang builds)
// checks lock discipline at compile time. On compilers without the analysis
// the annotations expand to nothing.
//
// Mutex and CondVar are thread-safe (that is their purpose). A Mutex is not
// recursive.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

// Abseil (pulled in by gRPC) defines some of the same unprefixed macros
// without include guards of its own. Including it first lets the `#ifndef`
// guards below keep its equivalent definitions, whatever the include order.
#if __has_include(<absl/base/thread_annotations.h>)
#include <absl/base/thread_annotations.h>
#endif

#if defined(__clang__)
#define SLUICE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SLUICE_THREAD_ANNOTATION(x)
#endif

// A type that acts as a lock (Mutex below).
#ifndef CAPABILITY
#define CAPABILITY(x) SLUICE_THREAD_ANNOTATION(capability(x))
#endif
// An RAII type that holds a capability for its lifetime (MutexLock below).
#ifndef SCOPED_CAPABILITY
#define SCOPED_CAPABILITY SLUICE_THREAD_ANNOTATION(scoped_lockable)
#endif
// A member that may only be read or written with the given mutex held.
#ifndef GUARDED_BY
#define GUARDED_BY(x) SLUICE_THREAD_ANNOTATION(guarded_by(x))
#endif
// A pointer member whose pointee may only be used with the mutex held.
#ifndef PT_GUARDED_BY
#define PT_GUARDED_BY(x) SLUICE_THREAD_ANNOTATION(pt_guarded_by(x))
#endif
// Lock ordering between mutexes.
#ifndef ACQUIRED_AFTER
#define ACQUIRED_AFTER(...) SLUICE_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#endif
#ifndef ACQUIRED_BEFORE
#define ACQUIRED_BEFORE(...) SLUICE_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#endif
// A function that must be called with the given mutexes held.
#ifndef REQUIRES
#define REQUIRES(...) SLUICE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#endif
#ifndef REQUIRES_SHARED
#define REQUIRES_SHARED(...) SLUICE_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#endif
// A function that must be called without the given mutexes held (it takes
// them itself).
#ifndef EXCLUDES
#define EXCLUDES(...) SLUICE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#endif
// A function that acquires / releases the given mutexes (or `this`).
#ifndef ACQUIRE
#define ACQUIRE(...) SLUICE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#endif
#ifndef RELEASE
#define RELEASE(...) SLUICE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#endif
#ifndef TRY_ACQUIRE
#define TRY_ACQUIRE(...) SLUICE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#endif
// A function that checks at run time that the mutex is held.
#ifndef ASSERT_CAPABILITY
#define ASSERT_CAPABILITY(x) SLUICE_THREAD_ANNOTATION(assert_capability(x))
#endif
// A function that returns a reference to the given mutex.
#ifndef RETURN_CAPABILITY
#define RETURN_CAPABILITY(x) SLUICE_THREAD_ANNOTATION(lock_returned(x))
#endif
// Turns the analysis off for one function. Use sparingly, with a comment.
#ifndef NO_THREAD_SAFETY_ANALYSIS
#define NO_THREAD_SAFETY_ANALYSIS SLUICE_THREAD_ANNOTATION(no_thread_safety_analysis)
#endif

namespace sluice {

class CondVar;

// An exclusive lock around std::mutex that the analysis understands. Prefer
// MutexLock to calling Lock()/Unlock() by hand.
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

  // Tells the analysis that the caller holds this mutex (no run-time check:
  // std::mutex cannot tell who holds it).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for the lifetime of the object.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable used with a Mutex. Every wait may wake spuriously, so
// callers wait in a loop on their own condition. Any thread may signal; a
// waiter must hold the mutex it passes.
class CondVar {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Atomically releases `mu` and blocks until signalled; holds `mu` again
  // on return.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }

  // As Wait(), but also returns once the steady clock reaches `deadline`.
  // Returns true if the deadline has passed. Code whose timeouts tests must
  // control waits through Clock::WaitUntil instead.
  bool WaitUntil(Mutex* mu, SteadyTime deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    bool timed_out = cv_.wait_until(lock, deadline) == std::cv_status::timeout;
    lock.release();
    return timed_out || std::chrono::steady_clock::now() >= deadline;
  }

  // As WaitUntil() with a deadline `timeout` from now.
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout) REQUIRES(mu) {
    return WaitUntil(mu,
                     std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout));
  }

  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace sluice
