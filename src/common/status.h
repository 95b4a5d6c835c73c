// Status and Result<T>: errors as values.
//
// Every error carries a Code. Each code is classified exactly once (in
// status.cc) as retryable (back off and retry the smallest unit: region,
// subscription, changefeed) or fatal for its changefeed. A Status is cheap to
// copy when OK (no allocation). Thread-compatible: distinct objects may be
// used from distinct threads.
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sluice {

enum class Code : int {
  kOk = 0,
  kCancelled,            // The operation was cancelled (shutdown, unsubscribe).
  kInvalidArgument,      // A caller passed something malformed (API, config, CLI).
  kNotFound,             // A named thing does not exist.
  kAlreadyExists,        // A create collided with an existing thing.
  kCorruption,           // Bytes from outside (wire, disk) do not decode.
  kProtocolViolation,    // A peer broke the protocol (TiKV, PD, etcd, node).
  kUnavailable,          // A peer cannot be reached right now.
  kTimeout,              // A deadline passed.
  kBusy,                 // A peer asked us to back off (server busy, congested).
  kResourceExhausted,    // A quota or limit was hit.
  kEpochMismatch,        // Region epoch or maintainer epoch is stale.
  kStaleOwner,           // A fenced-off owner tried to act.
  kAborted,              // A compare-and-swap or transaction lost a race.
  kIoError,              // Local disk or OS failure.
  kNotSupported,         // A feature we do not implement.
  kIncompatible,         // Version or cluster-id mismatch with the upstream.
  kGcSafepointExceeded,  // Start ts is below the upstream GC safepoint.
  kInternal,             // An invariant of our own code broke.
};

// Number of codes; kept in step with the enum by status_test.cc.
inline constexpr int kNumCodes = static_cast<int>(Code::kInternal) + 1;

// Whether an error of this code should be retried with backoff (true) or is
// fatal for the unit that owns it (false). kOk is neither; returns false.
bool IsRetryable(Code code);

// Stable lower-case name of a code, e.g. "corruption".
std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  std::string_view message() const { return rep_ ? std::string_view(rep_->message) : ""; }
  bool retryable() const { return IsRetryable(code()); }

  // "ok" or "<code name>: <message>".
  std::string ToString() const;

  // Returns a status with the same code and "context: message".
  Status WithContext(std::string_view context) const;

  // Marks a status as deliberately ignored.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct Rep {
    Code code;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;
};

// Shorthand constructors.
Status Cancelled(std::string msg);
Status InvalidArgument(std::string msg);
Status NotFound(std::string msg);
Status AlreadyExists(std::string msg);
Status Corruption(std::string msg);
Status ProtocolViolation(std::string msg);
Status Unavailable(std::string msg);
Status Timeout(std::string msg);
Status Busy(std::string msg);
Status ResourceExhausted(std::string msg);
Status EpochMismatch(std::string msg);
Status StaleOwner(std::string msg);
Status Aborted(std::string msg);
Status IoError(std::string msg);
Status NotSupported(std::string msg);
Status Incompatible(std::string msg);
Status Internal(std::string msg);

// Result<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design.
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace sluice

#define SLUICE_CONCAT_INNER(a, b) a##b
#define SLUICE_CONCAT(a, b) SLUICE_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if it is not OK.
#define RETURN_IF_ERROR(expr)      \
  do {                             \
    ::sluice::Status _st = (expr); \
    if (!_st.ok()) return _st;     \
  } while (0)

// ASSIGN_OR_RETURN(auto x, ResultExpr()): binds the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL(SLUICE_CONCAT(_res_, __LINE__), lhs, rexpr)
#define ASSIGN_OR_RETURN_IMPL(res, lhs, rexpr) \
  auto res = (rexpr);                          \
  if (!res.ok()) return res.status();          \
  lhs = std::move(res).value()
