#include "codec/model/types.h"

#include <algorithm>
#include <array>
#include <utility>

namespace sluice::model {
namespace {

using ActionName = std::pair<ActionType, std::string_view>;

// TiDB's ActionMap strings.
constexpr std::array kActionNames = {
    ActionName{ActionType::kCreateSchema, "create schema"},
    ActionName{ActionType::kDropSchema, "drop schema"},
    ActionName{ActionType::kCreateTable, "create table"},
    ActionName{ActionType::kDropTable, "drop table"},
    ActionName{ActionType::kAddColumn, "add column"},
    ActionName{ActionType::kDropColumn, "drop column"},
    ActionName{ActionType::kAddIndex, "add index"},
    ActionName{ActionType::kDropIndex, "drop index"},
    ActionName{ActionType::kAddForeignKey, "add foreign key"},
    ActionName{ActionType::kDropForeignKey, "drop foreign key"},
    ActionName{ActionType::kTruncateTable, "truncate table"},
    ActionName{ActionType::kModifyColumn, "modify column"},
    ActionName{ActionType::kRebaseAutoId, "rebase auto_increment ID"},
    ActionName{ActionType::kRenameTable, "rename table"},
    ActionName{ActionType::kSetDefaultValue, "set default value"},
    ActionName{ActionType::kShardRowId, "shard row ID"},
    ActionName{ActionType::kModifyTableComment, "modify table comment"},
    ActionName{ActionType::kRenameIndex, "rename index"},
    ActionName{ActionType::kAddTablePartition, "add partition"},
    ActionName{ActionType::kDropTablePartition, "drop partition"},
    ActionName{ActionType::kCreateView, "create view"},
    ActionName{ActionType::kModifyTableCharsetAndCollate, "modify table charset and collate"},
    ActionName{ActionType::kTruncateTablePartition, "truncate partition"},
    ActionName{ActionType::kDropView, "drop view"},
    ActionName{ActionType::kRecoverTable, "recover table"},
    ActionName{ActionType::kModifySchemaCharsetAndCollate, "modify schema charset and collate"},
    ActionName{ActionType::kLockTable, "lock table"},
    ActionName{ActionType::kUnlockTable, "unlock table"},
    ActionName{ActionType::kRepairTable, "repair table"},
    ActionName{ActionType::kSetTiFlashReplica, "set tiflash replica"},
    ActionName{ActionType::kUpdateTiFlashReplicaStatus, "update tiflash replica status"},
    ActionName{ActionType::kAddPrimaryKey, "add primary key"},
    ActionName{ActionType::kDropPrimaryKey, "drop primary key"},
    ActionName{ActionType::kCreateSequence, "create sequence"},
    ActionName{ActionType::kAlterSequence, "alter sequence"},
    ActionName{ActionType::kDropSequence, "drop sequence"},
    ActionName{ActionType::kModifyTableAutoIdCache, "modify auto id cache"},
    ActionName{ActionType::kRebaseAutoRandomBase, "rebase auto_random ID"},
    ActionName{ActionType::kAlterIndexVisibility, "alter index visibility"},
    ActionName{ActionType::kExchangeTablePartition, "exchange partition"},
    ActionName{ActionType::kAddCheckConstraint, "add check constraint"},
    ActionName{ActionType::kDropCheckConstraint, "drop check constraint"},
    ActionName{ActionType::kAlterCheckConstraint, "alter check constraint"},
    ActionName{ActionType::kRenameTables, "rename tables"},
    ActionName{ActionType::kAlterTableAttributes, "alter table attributes"},
    ActionName{ActionType::kAlterTablePartitionAttributes, "alter table partition attributes"},
    ActionName{ActionType::kCreatePlacementPolicy, "create placement policy"},
    ActionName{ActionType::kAlterPlacementPolicy, "alter placement policy"},
    ActionName{ActionType::kDropPlacementPolicy, "drop placement policy"},
    ActionName{ActionType::kAlterTablePartitionPlacement, "alter table partition placement"},
    ActionName{ActionType::kModifySchemaDefaultPlacement, "modify schema default placement"},
    ActionName{ActionType::kAlterTablePlacement, "alter table placement"},
    ActionName{ActionType::kAlterCacheTable, "alter table cache"},
    ActionName{ActionType::kAlterTableStatsOptions, "alter table statistics options"},
    ActionName{ActionType::kAlterNoCacheTable, "alter table nocache"},
    ActionName{ActionType::kCreateTables, "create tables"},
    ActionName{ActionType::kMultiSchemaChange, "alter table multi-schema change"},
    ActionName{ActionType::kFlashbackCluster, "flashback cluster"},
    ActionName{ActionType::kRecoverSchema, "flashback schema"},
    ActionName{ActionType::kReorganizePartition, "alter table reorganize partition"},
    ActionName{ActionType::kAlterTtlInfo, "alter table ttl"},
    ActionName{ActionType::kAlterTtlRemove, "alter table no_ttl"},
    ActionName{ActionType::kCreateResourceGroup, "create resource group"},
    ActionName{ActionType::kAlterResourceGroup, "alter resource group"},
    ActionName{ActionType::kDropResourceGroup, "drop resource group"},
    ActionName{ActionType::kAlterTablePartitioning, "alter table partition by"},
    ActionName{ActionType::kRemovePartitioning, "alter table remove partitioning"},
    ActionName{ActionType::kAddColumnarIndex, "add columnar index"},
    ActionName{ActionType::kModifyEngineAttribute, "modify engine attribute"},
    ActionName{ActionType::kAlterTableMode, "alter table mode"},
    ActionName{ActionType::kRefreshMeta, "refresh meta"},
    ActionName{ActionType::kModifySchemaReadOnly, "modify schema read only"},
};

constexpr std::array<std::string_view, 11> kJobStateNames = {
    "none",   "running",    "rollingback", "rollback done", "done",    "cancelled",
    "synced", "cancelling", "queueing",    "paused",        "pausing",
};

constexpr std::array<std::string_view, 8> kSchemaStateNames = {
    "none",   "delete only",  "write only",      "write reorganization", "delete reorganization",
    "public", "replica only", "global txn only",
};

}  // namespace

std::string_view ActionTypeName(ActionType type) {
  const auto* it = std::find_if(kActionNames.begin(), kActionNames.end(),
                                [type](const ActionName& entry) { return entry.first == type; });
  return it == kActionNames.end() ? "none" : it->second;
}

std::string_view JobStateName(JobState state) {
  const auto index = static_cast<int32_t>(state);
  if (index < 0 || index >= static_cast<int32_t>(kJobStateNames.size())) return "none";
  return kJobStateNames[index];
}

std::string_view SchemaStateName(SchemaState state) {
  const auto index = static_cast<size_t>(state);
  return index < kSchemaStateNames.size() ? kSchemaStateNames[index] : "none";
}

CIStr CIStr::From(std::string_view name) { return CIStr{std::string(name), AsciiLower(name)}; }

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace sluice::model
