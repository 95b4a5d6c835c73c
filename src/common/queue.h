// Queues between threads: BoundedMpscQueue for back-pressure (Push blocks
// while full) and UnboundedMpscQueue for producers that must never wait for
// space (gRPC completion threads, persisted callbacks).
//
// Both are multi-producer queues meant for one consumer thread. They are
// safe with several consumers too, but then which consumer gets which item is
// unspecified. Items pushed by one producer are popped in the order pushed.
// Close() ends the stream: later pushes fail; pops return what is left and
// then report the end. Every method is thread-safe.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <deque>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "common/cancel.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace sluice {
namespace queue_internal {

// The shared implementation; capacity 0 means unbounded.
template <typename T>
class QueueCore {
 public:
  explicit QueueCore(size_t capacity) : capacity_(capacity) {}

  // Moves from `item` only on success.
  Status Push(T&& item, const CancelToken& token) EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      if (closed_) return Cancelled("queue closed");
      if (token.cancelled()) return Cancelled("queue push cancelled");
      if (!FullLocked()) {
        PushLocked(std::move(item));
        return Status::Ok();
      }
    }
    CancelCallback on_cancel(token, [this] {
      MutexLock lock(&mu_);
      not_full_.SignalAll();
    });
    MutexLock lock(&mu_);
    ++blocked_pushers_;
    while (FullLocked() && !closed_ && !token.cancelled()) not_full_.Wait(&mu_);
    --blocked_pushers_;
    if (closed_) return Cancelled("queue closed");
    if (token.cancelled()) return Cancelled("queue push cancelled");
    PushLocked(std::move(item));
    return Status::Ok();
  }

  bool TryPush(T&& item) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (closed_ || FullLocked()) return false;
    PushLocked(std::move(item));
    return true;
  }

  // Blocks until an item is available, or returns nullopt once the queue is
  // closed and empty or `token` is cancelled.
  std::optional<T> Pop(const CancelToken& token) EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      if (!items_.empty()) return PopLocked();
      if (closed_ || token.cancelled()) return std::nullopt;
    }
    CancelCallback on_cancel(token, [this] {
      MutexLock lock(&mu_);
      not_empty_.SignalAll();
    });
    MutexLock lock(&mu_);
    while (items_.empty() && !closed_ && !token.cancelled()) not_empty_.Wait(&mu_);
    if (items_.empty()) return std::nullopt;
    return PopLocked();
  }

  std::optional<T> TryPop() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (items_.empty()) return std::nullopt;
    return PopLocked();
  }

  // Waits like Pop(), then moves up to `max` items to the end of `*out`.
  // Returns how many were moved (0: closed and empty, or cancelled).
  size_t PopAll(std::vector<T>* out, const CancelToken& token, size_t max) EXCLUDES(mu_) {
    if (max == 0) return 0;
    std::optional<T> first = Pop(token);
    if (!first.has_value()) return 0;
    out->push_back(std::move(*first));
    return 1 + TryPopAll(out, max - 1);
  }

  size_t TryPopAll(std::vector<T>* out, size_t max) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    size_t n = std::min(max, items_.size());
    for (size_t i = 0; i < n; ++i) {
      out->push_back(std::move(items_.front()));
      items_.pop_front();
    }
    if (n > 0) not_full_.SignalAll();
    return n;
  }

  void Close() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    closed_ = true;
    not_empty_.SignalAll();
    not_full_.SignalAll();
  }

  bool closed() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return closed_;
  }

  size_t size() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return items_.size();
  }

  size_t capacity() const { return capacity_; }

  // Callers of Push() waiting for room now.
  size_t blocked_pushers() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return blocked_pushers_;
  }

 private:
  bool FullLocked() const REQUIRES(mu_) { return capacity_ != 0 && items_.size() >= capacity_; }

  void PushLocked(T&& item) REQUIRES(mu_) {
    items_.push_back(std::move(item));
    not_empty_.Signal();
  }

  T PopLocked() REQUIRES(mu_) {
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.Signal();
    return item;
  }

  const size_t capacity_;
  mutable Mutex mu_;
  CondVar not_empty_;
  CondVar not_full_;
  std::deque<T> items_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  size_t blocked_pushers_ GUARDED_BY(mu_) = 0;
};

}  // namespace queue_internal

// A queue holding at most `capacity` items (> 0). Push blocks while it is
// full, which slows the producer down instead of dropping data.
template <typename T>
class BoundedMpscQueue {
 public:
  static constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();

  explicit BoundedMpscQueue(size_t capacity) : core_(capacity) { assert(capacity > 0); }
  BoundedMpscQueue(const BoundedMpscQueue&) = delete;
  BoundedMpscQueue& operator=(const BoundedMpscQueue&) = delete;

  // Blocks while the queue is full. Returns Cancelled if the queue is closed
  // or `token` is cancelled first; `item` is moved from only on success.
  Status Push(T&& item, const CancelToken& token = {}) {
    return core_.Push(std::move(item), token);
  }
  // Never blocks. False (and `item` untouched) if full or closed.
  bool TryPush(T&& item) { return core_.TryPush(std::move(item)); }

  // Blocks until an item is available. nullopt once the queue is closed and
  // drained, or if `token` is cancelled.
  std::optional<T> Pop(const CancelToken& token = {}) { return core_.Pop(token); }
  std::optional<T> TryPop() { return core_.TryPop(); }
  // Blocks like Pop(), then appends up to `max` items to `*out`. Returns the
  // number appended; 0 means closed and drained, or cancelled.
  size_t PopAll(std::vector<T>* out, const CancelToken& token = {}, size_t max = kNoLimit) {
    return core_.PopAll(out, token, max);
  }
  // Appends up to `max` items without blocking; returns how many.
  size_t TryPopAll(std::vector<T>* out, size_t max = kNoLimit) { return core_.TryPopAll(out, max); }

  // Wakes every blocked caller; later pushes fail, pops drain what is left.
  void Close() { core_.Close(); }
  bool closed() const { return core_.closed(); }
  size_t size() const { return core_.size(); }
  size_t capacity() const { return core_.capacity(); }
  // Producers blocked in Push() now (a snapshot, for tests and metrics).
  size_t blocked_pushers() const { return core_.blocked_pushers(); }

 private:
  queue_internal::QueueCore<T> core_;
};

// A queue without a size limit: Push never waits for space, so it is safe on
// paths that must not block (it only takes a mutex briefly). Whoever feeds it
// must bound its input another way, e.g. with a ByteQuota.
template <typename T>
class UnboundedMpscQueue {
 public:
  static constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();

  UnboundedMpscQueue() : core_(0) {}
  UnboundedMpscQueue(const UnboundedMpscQueue&) = delete;
  UnboundedMpscQueue& operator=(const UnboundedMpscQueue&) = delete;

  // False (and `item` untouched) only if the queue is closed.
  bool Push(T&& item) { return core_.TryPush(std::move(item)); }

  std::optional<T> Pop(const CancelToken& token = {}) { return core_.Pop(token); }
  std::optional<T> TryPop() { return core_.TryPop(); }
  size_t PopAll(std::vector<T>* out, const CancelToken& token = {}, size_t max = kNoLimit) {
    return core_.PopAll(out, token, max);
  }
  size_t TryPopAll(std::vector<T>* out, size_t max = kNoLimit) { return core_.TryPopAll(out, max); }

  void Close() { core_.Close(); }
  bool closed() const { return core_.closed(); }
  size_t size() const { return core_.size(); }

 private:
  queue_internal::QueueCore<T> core_;
};

}  // namespace sluice
