// Enumerations and the case-insensitive name shared by every TiDB schema
// object. Numeric values are TiDB's and appear as-is in its JSON; values the
// enums do not name are kept, never rejected, because TiDB adds actions and
// states over time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::model {

// DDL action of a job (TiDB `model.ActionType`, a byte). 46 and 48 are
// retired numbers and 66 was never assigned.
enum class ActionType : uint8_t {
  kNone = 0,
  kCreateSchema = 1,
  kDropSchema = 2,
  kCreateTable = 3,
  kDropTable = 4,
  kAddColumn = 5,
  kDropColumn = 6,
  kAddIndex = 7,
  kDropIndex = 8,
  kAddForeignKey = 9,
  kDropForeignKey = 10,
  kTruncateTable = 11,
  kModifyColumn = 12,
  kRebaseAutoId = 13,
  kRenameTable = 14,
  kSetDefaultValue = 15,
  kShardRowId = 16,
  kModifyTableComment = 17,
  kRenameIndex = 18,
  kAddTablePartition = 19,
  kDropTablePartition = 20,
  kCreateView = 21,
  kModifyTableCharsetAndCollate = 22,
  kTruncateTablePartition = 23,
  kDropView = 24,
  kRecoverTable = 25,
  kModifySchemaCharsetAndCollate = 26,
  kLockTable = 27,
  kUnlockTable = 28,
  kRepairTable = 29,
  kSetTiFlashReplica = 30,
  kUpdateTiFlashReplicaStatus = 31,
  kAddPrimaryKey = 32,
  kDropPrimaryKey = 33,
  kCreateSequence = 34,
  kAlterSequence = 35,
  kDropSequence = 36,
  kAddColumns = 37,   // Retired: TiDB now uses kMultiSchemaChange.
  kDropColumns = 38,  // Retired: TiDB now uses kMultiSchemaChange.
  kModifyTableAutoIdCache = 39,
  kRebaseAutoRandomBase = 40,
  kAlterIndexVisibility = 41,
  kExchangeTablePartition = 42,
  kAddCheckConstraint = 43,
  kDropCheckConstraint = 44,
  kAlterCheckConstraint = 45,
  kRenameTables = 47,
  kAlterTableAttributes = 49,
  kAlterTablePartitionAttributes = 50,
  kCreatePlacementPolicy = 51,
  kAlterPlacementPolicy = 52,
  kDropPlacementPolicy = 53,
  kAlterTablePartitionPlacement = 54,
  kModifySchemaDefaultPlacement = 55,
  kAlterTablePlacement = 56,
  kAlterCacheTable = 57,
  kAlterTableStatsOptions = 58,
  kAlterNoCacheTable = 59,
  kCreateTables = 60,
  kMultiSchemaChange = 61,
  kFlashbackCluster = 62,
  kRecoverSchema = 63,
  kReorganizePartition = 64,
  kAlterTtlInfo = 65,
  kAlterTtlRemove = 67,
  kCreateResourceGroup = 68,
  kAlterResourceGroup = 69,
  kDropResourceGroup = 70,
  kAlterTablePartitioning = 71,
  kRemovePartitioning = 72,
  kAddColumnarIndex = 73,
  kModifyEngineAttribute = 74,
  kAlterTableMode = 75,
  kRefreshMeta = 76,
  kModifySchemaReadOnly = 77,
};

// TiDB's display name of an action ("create table"), "none" if unknown.
std::string_view ActionTypeName(ActionType type);

// Lifecycle state of a job (TiDB `model.JobState`, an int32).
enum class JobState : int32_t {
  kNone = 0,
  kRunning = 1,
  kRollingback = 2,
  kRollbackDone = 3,
  kDone = 4,
  kCancelled = 5,
  kSynced = 6,
  kCancelling = 7,
  kQueueing = 8,
  kPaused = 9,
  kPausing = 10,
};

// TiDB's display name of a job state ("done"), "none" if unknown.
std::string_view JobStateName(JobState state);

// Online-schema-change state of a schema object (TiDB `model.SchemaState`).
enum class SchemaState : uint8_t {
  kNone = 0,
  kDeleteOnly = 1,
  kWriteOnly = 2,
  kWriteReorganization = 3,
  kDeleteReorganization = 4,
  kPublic = 5,
  kReplicaOnly = 6,
  kGlobalTxnOnly = 7,
};

// TiDB's display name of a schema state ("write only"), "none" if unknown.
std::string_view SchemaStateName(SchemaState state);

// Partitioning method (TiDB `PartitionType`, a Go int). kNone is used while a
// DDL keeps a non-partitioned table as a single partition.
enum class PartitionType : int64_t {
  kNone = 0,
  kRange = 1,
  kHash = 2,
  kList = 3,
  kKey = 4,
  kSystemTime = 5,
};

// Index method (TiDB `IndexType`). Numbers above kHypo differ between TiDB
// versions (vector, inverted, hybrid) and are kept as raw values.
enum class IndexType : int64_t {
  kInvalid = 0,
  kBtree = 1,
  kHash = 2,
  kRtree = 3,
  kHypo = 4,
};

// A name with its lower-case form, JSON {"O": original, "L": lower}. TiDB
// compares names through `lower`; `original` is what users typed.
struct CIStr {
  std::string original;
  std::string lower;

  // Builds both forms. Lower-casing is ASCII-only; TiDB lower-cases Unicode,
  // so names parsed from TiDB keep TiDB's own `lower`.
  static CIStr From(std::string_view name);

  bool operator==(const CIStr&) const = default;
};

// ASCII lower-case copy of `s`.
std::string AsciiLower(std::string_view s);

}  // namespace sluice::model
