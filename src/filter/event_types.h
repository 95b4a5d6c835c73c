// TiCDC's vocabulary for event filters: which DDL actions a changefeed
// replicates at all (its allow-list), the event type name of each (TiCDC's
// binlog-filter `EventType`, e.g. "add column"), the names accepted in
// `ignore-event`, and the system schemas that are never replicated.
// Pure functions over static tables, safe from any thread.
#pragma once

#include <span>
#include <string_view>

#include "codec/model/types.h"
#include "common/status.h"

namespace sluice::filter {

// Event type names that are not DDL actions.
inline constexpr std::string_view kAllDml = "all dml";
inline constexpr std::string_view kAllDdl = "all ddl";
inline constexpr std::string_view kInsert = "insert";
inline constexpr std::string_view kUpdate = "update";
inline constexpr std::string_view kDelete = "delete";
inline constexpr std::string_view kAlterTable = "alter table";

// The event type name of an allow-listed DDL action ("create database" for
// kCreateSchema, "create index" for kAddIndex, "add column" for kAddColumn
// and the retired kAddColumns); "" for an action TiCDC does not replicate.
std::string_view DdlEventTypeName(model::ActionType action);

// Whether TiCDC replicates this DDL action at all (ddlWhiteListMap). Other
// actions are discarded: neither applied to the schema nor sent downstream.
bool IsAllowedDdl(model::ActionType action);

// Whether event filters can ignore this action by type or by SQL. False for
// actions that are not allowed and for the foreign-key actions, which TiCDC
// allows but its event filter cannot classify.
bool IsFilterableDdl(model::ActionType action);

// Database-level actions: create/drop schema, modify schema charset.
bool IsSchemaDdl(model::ActionType action);

// Actions that an `ignore-event = ["alter table"]` entry also ignores
// (TiCDC's alterTableSubType).
bool IsAlterTableSubtype(model::ActionType action);

// The canonical form of one `ignore-event` entry: the name itself, or
// "create database" / "drop database" for the aliases "create schema" /
// "drop schema". Names are case-sensitive, as in TiCDC. An unknown name gives
// InvalidArgument.
Result<std::string_view> CanonicalIgnoreEvent(std::string_view name);

// Every name CanonicalIgnoreEvent accepts, aliases included.
std::span<const std::string_view> SupportedIgnoreEvents();

// Schemas never replicated, compared case-insensitively: TiDB's system
// schemas (mysql, sys, information_schema, performance_schema,
// metrics_schema, inspection_schema, workload_schema, dm_heartbeat) and
// TiCDC's own (tidb_cdc, lightning_task_info).
bool IsSysSchema(std::string_view schema);

}  // namespace sluice::filter
