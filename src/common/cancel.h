// Cooperative cancellation: a CancelSource owned by whoever may cancel (a
// component's Stop(), an unsubscribe), CancelTokens handed to the work, and
// CancelCallback to wake a blocked wait when cancellation happens.
//
// All three are thin wrappers over std::stop_source / std::stop_token /
// std::stop_callback. Sources and tokens are cheap to copy and thread-safe:
// any thread may cancel or check at any time.
#pragma once

#include <functional>
#include <stop_token>
#include <string>
#include <utility>

#include "common/status.h"

namespace sluice {

// Observes whether a CancelSource was cancelled. A default-constructed token
// is never cancelled.
class CancelToken {
 public:
  CancelToken() = default;

  bool cancelled() const { return token_.stop_requested(); }

  // False for a default-constructed token (nothing can cancel it).
  bool can_be_cancelled() const { return token_.stop_possible(); }

  // Cancelled(`what` + " cancelled") if cancelled, else OK.
  Status Check(std::string_view what = "operation") const {
    if (!cancelled()) return Status::Ok();
    return Cancelled(std::string(what) + " cancelled");
  }

 private:
  friend class CancelSource;
  friend class CancelCallback;
  explicit CancelToken(std::stop_token token) : token_(std::move(token)) {}

  std::stop_token token_;
};

// The cancelling side. Copies share the same state. Cancellation is
// permanent.
class CancelSource {
 public:
  CancelSource() = default;

  CancelToken token() const { return CancelToken(source_.get_token()); }

  // Cancels and runs every registered callback on this thread. Returns true
  // if this call did the cancelling (false if it was already cancelled).
  bool Cancel() { return source_.request_stop(); }

  bool cancelled() const { return source_.stop_requested(); }

 private:
  std::stop_source source_;
};

// Runs `fn` once when `token` is cancelled: on the cancelling thread, or
// right here in the constructor if the token is already cancelled. The
// destructor deregisters; if `fn` is running on another thread at that moment
// it waits for `fn` to return. Therefore:
//  - construct it *before* taking a lock that `fn` also takes, and
//  - destroy it *after* releasing that lock
// (declare it before the MutexLock in the same scope).
class CancelCallback {
 public:
  CancelCallback(const CancelToken& token, std::function<void()> fn)
      : callback_(token.token_, std::move(fn)) {}
  CancelCallback(const CancelCallback&) = delete;
  CancelCallback& operator=(const CancelCallback&) = delete;

 private:
  std::stop_callback<std::function<void()>> callback_;
};

}  // namespace sluice
