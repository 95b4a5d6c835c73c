#include "filter/event_types.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "filter/text.h"

namespace sluice::filter {
namespace {

using model::ActionType;

struct DdlEntry {
  ActionType action;
  std::string_view event;
  bool filterable;  // the event filter can classify the event type
  bool alter_table;
};

// TiCDC's ddlWhiteListMap with alterTableSubType folded in.
constexpr std::array kDdlTable = {
    // Schema DDLs.
    DdlEntry{ActionType::kCreateSchema, "create database", true, false},
    DdlEntry{ActionType::kDropSchema, "drop database", true, false},
    DdlEntry{ActionType::kModifySchemaCharsetAndCollate, "modify schema charset and collate", true,
             false},
    // Table DDLs.
    DdlEntry{ActionType::kCreateTable, "create table", true, false},
    DdlEntry{ActionType::kCreateTables, "create table", true, false},
    DdlEntry{ActionType::kDropTable, "drop table", true, false},
    DdlEntry{ActionType::kTruncateTable, "truncate table", true, false},
    DdlEntry{ActionType::kRenameTable, "rename table", true, true},
    DdlEntry{ActionType::kRenameTables, "rename table", true, true},
    DdlEntry{ActionType::kRecoverTable, "recover table", true, false},
    DdlEntry{ActionType::kModifyTableComment, "modify table comment", true, true},
    DdlEntry{ActionType::kModifyTableCharsetAndCollate, "modify table charset and collate", true,
             true},
    // Views.
    DdlEntry{ActionType::kCreateView, "create view", true, false},
    DdlEntry{ActionType::kDropView, "drop view", true, false},
    // Partitions.
    DdlEntry{ActionType::kAddTablePartition, "add table partition", true, true},
    DdlEntry{ActionType::kDropTablePartition, "drop table partition", true, true},
    DdlEntry{ActionType::kTruncateTablePartition, "truncate table partition", true, true},
    DdlEntry{ActionType::kExchangeTablePartition, "exchange table partition", true, true},
    DdlEntry{ActionType::kReorganizePartition, "reorganize table partition", true, true},
    DdlEntry{ActionType::kAlterTablePartitioning, "alter table partitioning", true, true},
    DdlEntry{ActionType::kRemovePartitioning, "remove table partitioning", true, true},
    // Columns.
    DdlEntry{ActionType::kAddColumn, "add column", true, true},
    DdlEntry{ActionType::kDropColumn, "drop column", true, true},
    DdlEntry{ActionType::kModifyColumn, "modify column", true, true},
    DdlEntry{ActionType::kSetDefaultValue, "set default value", true, true},
    // Indexes and keys.
    DdlEntry{ActionType::kRebaseAutoId, "rebase auto id", true, true},
    DdlEntry{ActionType::kAddPrimaryKey, "add primary key", true, true},
    DdlEntry{ActionType::kDropPrimaryKey, "drop primary key", true, true},
    DdlEntry{ActionType::kAddIndex, "create index", true, true},
    DdlEntry{ActionType::kDropIndex, "drop index", true, true},
    DdlEntry{ActionType::kRenameIndex, "rename index", true, true},
    DdlEntry{ActionType::kAlterIndexVisibility, "alter index visibility", true, true},
    // TTL.
    DdlEntry{ActionType::kAlterTtlInfo, "alter ttl info", true, true},
    DdlEntry{ActionType::kAlterTtlRemove, "alter ttl remove", true, true},
    DdlEntry{ActionType::kMultiSchemaChange, "multi schema change", true, true},
    // Replicated, but TiCDC's event filter cannot classify them.
    DdlEntry{ActionType::kAddForeignKey, "add foreign key", false, false},
    DdlEntry{ActionType::kDropForeignKey, "drop foreign key", false, false},
    // Retired by TiDB 6.2 (now kMultiSchemaChange), still seen from 6.1.
    DdlEntry{ActionType::kAddColumns, "add column", true, true},
    DdlEntry{ActionType::kDropColumns, "drop column", true, true},
};

// TiCDC's SupportedEventTypes minus the names its binlog filter rejects.
constexpr std::array<std::string_view, 41> kIgnoreEvents = {
    kAllDml,
    kAllDdl,
    kInsert,
    kUpdate,
    kDelete,
    kAlterTable,
    "create schema",
    "drop schema",
    "create database",
    "drop database",
    "modify schema charset and collate",
    "create table",
    "drop table",
    "truncate table",
    "rename table",
    "recover table",
    "modify table comment",
    "modify table charset and collate",
    "create view",
    "drop view",
    "add table partition",
    "drop table partition",
    "truncate table partition",
    "exchange table partition",
    "reorganize table partition",
    "alter table partitioning",
    "remove table partitioning",
    "add column",
    "drop column",
    "modify column",
    "set default value",
    "rebase auto id",
    "add primary key",
    "drop primary key",
    "create index",
    "drop index",
    "rename index",
    "alter index visibility",
    "alter ttl info",
    "alter ttl remove",
    "multi schema change",
};

constexpr std::array<std::string_view, 10> kSysSchemas = {
    "mysql",
    "sys",
    "information_schema",
    "performance_schema",
    "metrics_schema",
    "inspection_schema",
    "workload_schema",
    "dm_heartbeat",
    "tidb_cdc",
    "lightning_task_info",
};

const DdlEntry* FindDdl(ActionType action) {
  const auto* it = std::find_if(kDdlTable.begin(), kDdlTable.end(),
                                [action](const DdlEntry& e) { return e.action == action; });
  return it == kDdlTable.end() ? nullptr : it;
}

}  // namespace

std::string_view DdlEventTypeName(ActionType action) {
  const DdlEntry* e = FindDdl(action);
  return e == nullptr ? std::string_view() : e->event;
}

bool IsAllowedDdl(ActionType action) { return FindDdl(action) != nullptr; }

bool IsFilterableDdl(ActionType action) {
  const DdlEntry* e = FindDdl(action);
  return e != nullptr && e->filterable;
}

bool IsSchemaDdl(ActionType action) {
  return action == ActionType::kCreateSchema || action == ActionType::kDropSchema ||
         action == ActionType::kModifySchemaCharsetAndCollate;
}

bool IsAlterTableSubtype(ActionType action) {
  const DdlEntry* e = FindDdl(action);
  return e != nullptr && e->alter_table;
}

Result<std::string_view> CanonicalIgnoreEvent(std::string_view name) {
  if (name == "create schema") return std::string_view("create database");
  if (name == "drop schema") return std::string_view("drop database");
  const auto* it = std::find(kIgnoreEvents.begin(), kIgnoreEvents.end(), name);
  if (it == kIgnoreEvents.end()) {
    return InvalidArgument(fmt::format("invalid ignore event type \"{}\"", name));
  }
  return *it;
}

std::span<const std::string_view> SupportedIgnoreEvents() { return kIgnoreEvents; }

bool IsSysSchema(std::string_view schema) {
  std::string buf;
  const std::string_view lower = text::FoldCase(schema, &buf);
  return std::find(kSysSchemas.begin(), kSysSchemas.end(), lower) != kSysSchemas.end();
}

}  // namespace sluice::filter
