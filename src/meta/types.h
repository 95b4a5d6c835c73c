// The value types of the metastore's key-value model, which follows etcd v3:
// a store-wide revision that every committed write bumps by one, per-key
// create/mod revisions and versions, transactions of compares then puts and
// deletes, watch events and leases. Plain values, no threading concerns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/strong_id.h"

namespace sluice::meta {

// A store-wide revision. 0 means "none" (no write yet, or a key that does not
// exist); the first committed write makes revision 1.
using Revision = int64_t;

// A lease (etcd: LeaseID). 0 means "no lease".
struct LeaseIdTag {};
using LeaseId = StrongId<LeaseIdTag, int64_t>;

// One key as stored. `version` counts puts since the key was (re)created.
struct KeyValue {
  std::string key;
  std::string value;
  Revision create_revision = 0;
  Revision mod_revision = 0;
  int64_t version = 0;
  LeaseId lease;

  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

// A compare of a transaction (etcd: Compare). A key that does not exist has
// create_revision, mod_revision and version 0 and no lease, so
// CreateRevisionIs(key, 0) means "absent"; a kValue compare on a missing key
// never holds (whatever the op), as in etcd.
struct Compare {
  enum class Target { kVersion, kCreateRevision, kModRevision, kValue, kLease };
  enum class Op { kEqual, kNotEqual, kLess, kGreater };

  std::string key;
  Target target = Target::kModRevision;
  Op op = Op::kEqual;
  int64_t number = 0;  // For every target but kValue.
  std::string value;   // For kValue.

  static Compare ModRevisionIs(std::string key, Revision revision);
  static Compare CreateRevisionIs(std::string key, Revision revision);
  static Compare Absent(std::string key) { return CreateRevisionIs(std::move(key), 0); }
  static Compare ValueIs(std::string key, std::string value);
};

// A write of a transaction: put (optionally attached to a lease, which must
// exist) or delete of one key.
struct TxnOp {
  enum class Type { kPut, kDelete };

  Type type = Type::kPut;
  std::string key;
  std::string value;
  LeaseId lease;

  static TxnOp Put(std::string key, std::string value, LeaseId lease = LeaseId());
  static TxnOp Delete(std::string key);
};

// If every compare holds, `success` is applied, else `failure`; either way
// atomically, at one new revision (or none if nothing changed).
struct TxnRequest {
  std::vector<Compare> compares;
  std::vector<TxnOp> success;
  std::vector<TxnOp> failure;
};

struct TxnResponse {
  bool succeeded = false;
  // The store revision after the transaction: the new revision if it changed
  // something, else the current one.
  Revision revision = 0;
};

// The result of a read, taken at store revision `revision`.
struct RangeResult {
  std::vector<KeyValue> kvs;  // In key order.
  Revision revision = 0;
};

// One change seen by a watch. For kDelete, `kv` has the key, mod_revision =
// the deleting revision and an empty value (etcd does the same).
struct WatchEvent {
  enum class Type { kPut, kDelete };

  Type type = Type::kPut;
  KeyValue kv;

  friend bool operator==(const WatchEvent&, const WatchEvent&) = default;
};

// True if `key` starts with `prefix`.
inline bool HasPrefix(const std::string& key, const std::string& prefix) {
  return key.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace sluice::meta
