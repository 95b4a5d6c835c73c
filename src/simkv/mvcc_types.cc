#include "simkv/mvcc_types.h"

#include <string>

#include "common/logging.h"

namespace sluice::simkv {

std::string_view MutationOpName(MutationOp op) {
  switch (op) {
    case MutationOp::kPut:
      return "put";
    case MutationOp::kDelete:
      return "delete";
    case MutationOp::kLock:
      return "lock";
  }
  return "unknown";
}

std::string_view WriteKindName(WriteKind kind) {
  switch (kind) {
    case WriteKind::kPut:
      return "put";
    case WriteKind::kDelete:
      return "delete";
    case WriteKind::kLock:
      return "lock";
    case WriteKind::kRollback:
      return "rollback";
  }
  return "unknown";
}

WriteKind WriteKindOf(MutationOp op) {
  switch (op) {
    case MutationOp::kPut:
      return WriteKind::kPut;
    case MutationOp::kDelete:
      return WriteKind::kDelete;
    case MutationOp::kLock:
      return WriteKind::kLock;
  }
  return WriteKind::kLock;
}

std::string_view TxnErrorKindName(TxnErrorKind kind) {
  switch (kind) {
    case TxnErrorKind::kWriteConflict:
      return "write conflict";
    case TxnErrorKind::kKeyIsLocked:
      return "key is locked";
    case TxnErrorKind::kTxnLockNotFound:
      return "txn lock not found";
    case TxnErrorKind::kTxnRolledBack:
      return "txn rolled back";
    case TxnErrorKind::kAlreadyCommitted:
      return "already committed";
    case TxnErrorKind::kCommitTsExpired:
      return "commit ts expired";
    case TxnErrorKind::kBelowGcSafePoint:
      return "below gc safe point";
    case TxnErrorKind::kInvalidArgument:
      return "invalid argument";
  }
  return "unknown";
}

std::string TxnError::ToString() const {
  std::string out(TxnErrorKindName(kind));
  if (!key.empty()) out += " on key " + Redact(key);
  if (lock.has_value()) {
    out += " (lock start_ts=" + std::to_string(lock->start_ts.value()) +
           ", primary=" + Redact(lock->primary) + ")";
  }
  if (kind == TxnErrorKind::kWriteConflict) {
    out += " (conflict start_ts=" + std::to_string(conflict_start_ts.value()) +
           ", commit_ts=" + std::to_string(conflict_commit_ts.value()) + ")";
  }
  if (!detail.empty()) out += ": " + detail;
  return out;
}

Status TxnError::ToStatus() const {
  switch (kind) {
    case TxnErrorKind::kWriteConflict:
    case TxnErrorKind::kKeyIsLocked:
    case TxnErrorKind::kTxnRolledBack:
    case TxnErrorKind::kCommitTsExpired:
      return Aborted(ToString());
    case TxnErrorKind::kAlreadyCommitted:
      return AlreadyExists(ToString());
    case TxnErrorKind::kBelowGcSafePoint:
      return Status(Code::kGcSafepointExceeded, ToString());
    case TxnErrorKind::kTxnLockNotFound:
    case TxnErrorKind::kInvalidArgument:
      return InvalidArgument(ToString());
  }
  return Internal(ToString());
}

}  // namespace sluice::simkv
