// Value types of the simulated MVCC store: mutations, locks, write records,
// typed transaction errors and the rows handed to the CDC layer. Plain values,
// no threading concerns. Keys here are raw (not memcomparable) user keys.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/status.h"
#include "common/strong_id.h"

namespace sluice::simkv {

// What a transaction does to one key. kLock writes nothing visible; it only
// takes part in conflict detection (SELECT ... FOR UPDATE in TiDB). TiKV's CDC
// emits no rows for kLock mutations.
enum class MutationOp : uint8_t { kPut, kDelete, kLock };

// The kind of a committed write record. kRollback records mark a rolled-back
// start ts so that a late prewrite of that transaction is refused.
enum class WriteKind : uint8_t { kPut, kDelete, kLock, kRollback };

std::string_view MutationOpName(MutationOp op);
std::string_view WriteKindName(WriteKind kind);
WriteKind WriteKindOf(MutationOp op);

struct Mutation {
  MutationOp op = MutationOp::kPut;
  std::string key;
  std::string value;  // Only meaningful for kPut.

  static Mutation Put(std::string key, std::string value) {
    return {MutationOp::kPut, std::move(key), std::move(value)};
  }
  static Mutation Delete(std::string key) { return {MutationOp::kDelete, std::move(key), {}}; }
  static Mutation Lock(std::string key) { return {MutationOp::kLock, std::move(key), {}}; }
};

// A Percolator lock as stored on a key and as reported in errors.
struct LockInfo {
  std::string key;
  std::string primary;
  Ts start_ts;
  MutationOp op = MutationOp::kPut;
  std::string value;
  uint64_t ttl_ms = 0;
  Ts min_commit_ts;
};

enum class TxnErrorKind : uint8_t {
  kWriteConflict,     // A write with commit_ts >= start_ts exists on the key.
  kKeyIsLocked,       // Another transaction holds a lock (see TxnError::lock).
  kTxnLockNotFound,   // Commit found neither the lock nor a commit record.
  kTxnRolledBack,     // The transaction was rolled back on this key.
  kAlreadyCommitted,  // Rollback of a transaction that committed the key.
  kCommitTsExpired,   // commit_ts is below the lock's min_commit_ts.
  kBelowGcSafePoint,  // A ts at or below the GC safe point was used.
  kInvalidArgument,   // Malformed request (no keys, duplicates, bad ts).
};

std::string_view TxnErrorKindName(TxnErrorKind kind);

// A typed transaction error. `key` is the key that failed; `lock` is set for
// kKeyIsLocked; conflict_* describe the conflicting write for kWriteConflict.
struct TxnError {
  TxnErrorKind kind = TxnErrorKind::kInvalidArgument;
  std::string key;
  std::optional<LockInfo> lock;
  Ts conflict_start_ts;
  Ts conflict_commit_ts;
  std::string detail;

  // Keys appear redacted (common/logging.h Redact), like everything logged.
  std::string ToString() const;
  // The Status view: write conflicts, locks and rollbacks are kAborted
  // (retry the transaction), a stale ts is kGcSafepointExceeded, lost locks
  // and bad requests are kInvalidArgument, kAlreadyCommitted is kAlreadyExists.
  Status ToStatus() const;
};

// A value or a TxnError.
template <typename T>
class [[nodiscard]] TxnResult {
 public:
  TxnResult(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design.
  TxnResult(TxnError error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  const TxnError& error() const {
    assert(!ok());
    return std::get<TxnError>(v_);
  }
  Status status() const { return ok() ? Status::Ok() : error().ToStatus(); }

 private:
  std::variant<T, TxnError> v_;
};

// OK or a TxnError, for operations without a value.
class [[nodiscard]] TxnStatus {
 public:
  TxnStatus() = default;
  TxnStatus(TxnError error) : error_(std::move(error)) {}  // NOLINT: implicit by design.

  bool ok() const { return !error_.has_value(); }
  const TxnError& error() const {
    assert(!ok());
    return *error_;
  }
  Status status() const { return ok() ? Status::Ok() : error_->ToStatus(); }

 private:
  std::optional<TxnError> error_;
};

struct KvPair {
  std::string key;
  std::string value;
  friend bool operator==(const KvPair&, const KvPair&) = default;
};

// One committed change as the incremental scan yields it (a COMMITTED row).
// old_value is the value visible just before commit_ts (absent for inserts
// and for deletes of a missing key).
struct CommittedRow {
  std::string key;
  Ts start_ts;
  Ts commit_ts;
  WriteKind kind = WriteKind::kPut;  // kPut or kDelete only.
  std::string value;
  std::optional<std::string> old_value;
};

// A lock present at an incremental-scan snapshot, to be sent as a PREWRITE row
// so that its later COMMIT finds a match. old_value as of the lock's start ts.
struct PrewriteRow {
  LockInfo lock;
  std::optional<std::string> old_value;
};

// The state of a transaction as seen at its primary key.
struct TxnState {
  enum class Kind : uint8_t { kLocked, kCommitted, kRolledBack, kNotFound };
  Kind kind = Kind::kNotFound;
  Ts commit_ts;                  // For kCommitted.
  std::optional<LockInfo> lock;  // For kLocked.
};

}  // namespace sluice::simkv
