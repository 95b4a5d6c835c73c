#include "common/byte_quota.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "common/logging.h"

namespace sluice {

ByteQuota::ByteQuota(uint64_t capacity) : capacity_(capacity) {}

ByteQuota::~ByteQuota() {
  MutexLock lock(&mu_);
  assert(waiters_.empty() && "ByteQuota destroyed with blocked Acquire() calls");
}

Status ByteQuota::Acquire(uint64_t bytes, const CancelToken& token) {
  {
    MutexLock lock(&mu_);
    if (closed_) return Cancelled("byte quota closed");
    if (token.cancelled()) return Cancelled("quota acquire cancelled");
    if (waiters_.empty() && FitsLocked(bytes)) {
      in_flight_ += bytes;
      return Status::Ok();
    }
  }

  // Slow path: queue up. The callback is registered before the lock is taken
  // and deregistered after it is dropped (see CancelCallback).
  Waiter self(bytes);
  CancelCallback on_cancel(token, [this, &self] {
    MutexLock lock(&mu_);
    self.cv.Signal();
  });
  MutexLock lock(&mu_);
  waiters_.push_back(&self);
  // The front may fit already if releases happened since the fast path.
  GrantLocked();
  while (!self.granted && !closed_ && !token.cancelled()) self.cv.Wait(&mu_);
  if (self.granted) return Status::Ok();  // A grant wins over a late cancel.

  bool was_front = waiters_.front() == &self;
  waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &self));
  // The next waiter may have been held back only by this one.
  if (was_front) GrantLocked();
  return closed_ ? Cancelled("byte quota closed") : Cancelled("quota acquire cancelled");
}

bool ByteQuota::TryAcquire(uint64_t bytes) {
  MutexLock lock(&mu_);
  if (closed_ || !waiters_.empty() || !FitsLocked(bytes)) return false;
  in_flight_ += bytes;
  return true;
}

void ByteQuota::Release(uint64_t bytes) {
  MutexLock lock(&mu_);
  assert(bytes <= in_flight_ && "ByteQuota::Release of more bytes than in flight");
  if (bytes > in_flight_) {
    LOG_ERROR("byte quota released {} bytes with only {} in flight", bytes, in_flight_);
    bytes = in_flight_;
  }
  in_flight_ -= bytes;
  GrantLocked();
}

void ByteQuota::GrantLocked() {
  if (closed_) return;
  while (!waiters_.empty()) {
    Waiter* front = waiters_.front();
    if (!FitsLocked(front->bytes)) break;
    in_flight_ += front->bytes;
    front->granted = true;
    waiters_.pop_front();
    front->cv.Signal();
  }
}

void ByteQuota::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  for (Waiter* w : waiters_) w->cv.Signal();
}

uint64_t ByteQuota::InFlight() const {
  MutexLock lock(&mu_);
  return in_flight_;
}

size_t ByteQuota::NumWaiting() const {
  MutexLock lock(&mu_);
  return waiters_.size();
}

QuotaLease::QuotaLease(QuotaLease&& other) noexcept
    : quota_(std::exchange(other.quota_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

QuotaLease& QuotaLease::operator=(QuotaLease&& other) noexcept {
  if (this != &other) {
    Release();
    quota_ = std::exchange(other.quota_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Status QuotaLease::Acquire(ByteQuota* quota, uint64_t bytes, const CancelToken& token,
                           QuotaLease* lease) {
  RETURN_IF_ERROR(quota->Acquire(bytes, token));
  *lease = QuotaLease(quota, bytes);
  return Status::Ok();
}

void QuotaLease::Release() {
  if (quota_ != nullptr) quota_->Release(bytes_);
  quota_ = nullptr;
  bytes_ = 0;
}

}  // namespace sluice
