#include "common/status.h"

namespace sluice {

bool IsRetryable(Code code) {
  switch (code) {
    case Code::kUnavailable:
    case Code::kTimeout:
    case Code::kBusy:
    case Code::kResourceExhausted:
    case Code::kEpochMismatch:
    case Code::kAborted:
    case Code::kIoError:
    // A protocol violation or corrupt bytes from a peer fail the smallest unit,
    // which is retried from its checkpoint (docs/architecture.md,
    // "Invariants": bad input is an error, not a crash).
    case Code::kProtocolViolation:
    case Code::kCorruption:
      return true;
    case Code::kOk:
    case Code::kCancelled:
    case Code::kInvalidArgument:
    case Code::kNotFound:
    case Code::kAlreadyExists:
    case Code::kStaleOwner:
    case Code::kNotSupported:
    case Code::kIncompatible:
    case Code::kGcSafepointExceeded:
    case Code::kInternal:
      return false;
  }
  return false;
}

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kCancelled:
      return "cancelled";
    case Code::kInvalidArgument:
      return "invalid_argument";
    case Code::kNotFound:
      return "not_found";
    case Code::kAlreadyExists:
      return "already_exists";
    case Code::kCorruption:
      return "corruption";
    case Code::kProtocolViolation:
      return "protocol_violation";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kTimeout:
      return "timeout";
    case Code::kBusy:
      return "busy";
    case Code::kResourceExhausted:
      return "resource_exhausted";
    case Code::kEpochMismatch:
      return "epoch_mismatch";
    case Code::kStaleOwner:
      return "stale_owner";
    case Code::kAborted:
      return "aborted";
    case Code::kIoError:
      return "io_error";
    case Code::kNotSupported:
      return "not_supported";
    case Code::kIncompatible:
      return "incompatible";
    case Code::kGcSafepointExceeded:
      return "gc_safepoint_exceeded";
    case Code::kInternal:
      return "internal";
  }
  return "unknown";
}

Status::Status(Code code, std::string message)
    : rep_(code == Code::kOk ? nullptr
                             : std::make_shared<const Rep>(Rep{code, std::move(message)})) {}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(CodeName(code()));
  if (!rep_->message.empty()) {
    out += ": ";
    out += rep_->message;
  }
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string msg(context);
  msg += ": ";
  msg += message();
  return Status(code(), std::move(msg));
}

Status Cancelled(std::string m) { return Status(Code::kCancelled, std::move(m)); }
Status InvalidArgument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
Status AlreadyExists(std::string m) { return Status(Code::kAlreadyExists, std::move(m)); }
Status Corruption(std::string m) { return Status(Code::kCorruption, std::move(m)); }
Status ProtocolViolation(std::string m) { return Status(Code::kProtocolViolation, std::move(m)); }
Status Unavailable(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
Status Timeout(std::string m) { return Status(Code::kTimeout, std::move(m)); }
Status Busy(std::string m) { return Status(Code::kBusy, std::move(m)); }
Status ResourceExhausted(std::string m) { return Status(Code::kResourceExhausted, std::move(m)); }
Status EpochMismatch(std::string m) { return Status(Code::kEpochMismatch, std::move(m)); }
Status StaleOwner(std::string m) { return Status(Code::kStaleOwner, std::move(m)); }
Status Aborted(std::string m) { return Status(Code::kAborted, std::move(m)); }
Status IoError(std::string m) { return Status(Code::kIoError, std::move(m)); }
Status NotSupported(std::string m) { return Status(Code::kNotSupported, std::move(m)); }
Status Incompatible(std::string m) { return Status(Code::kIncompatible, std::move(m)); }
Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }

}  // namespace sluice
