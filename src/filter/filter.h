// A changefeed's filter, as TiCDC's `pkg/filter`: which tables and DDLs a
// changefeed replicates (`filter.rules`, system schemas, the DDL allow-list)
// and which events it leaves out (`[[filter.event-filters]]` by event type or
// DDL text, `filter.ignore-txn-start-ts`).
//
// A Filter is immutable once made and is shared as shared_ptr<const Filter>;
// every method may be called from any number of threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/types.h"
#include "common/status.h"
#include "filter/event_types.h"
#include "filter/go_regex.h"
#include "filter/table_filter.h"

namespace sluice::filter {

// One `[[filter.event-filters]]` entry. Field names follow the TOML keys.
struct EventFilterRule {
  std::vector<std::string> matcher;       // table-filter rules scoping the entry
  std::vector<std::string> ignore_event;  // event type names, e.g. "insert", "add column"
  std::vector<std::string> ignore_sql;    // Go regexes searched in DDL text, case-insensitive
  // Expression filters. Not implemented: a non-empty value makes Make fail
  // with NotSupported (an empty string means unset, as in TiCDC).
  std::string ignore_insert_value_expr;
  std::string ignore_update_new_value_expr;
  std::string ignore_update_old_value_expr;
  std::string ignore_delete_value_expr;
  std::vector<std::string> ignore_update_only_columns;  // not implemented either
};

// The `[filter]` section plus the top-level `case-sensitive` key.
struct FilterConfig {
  std::vector<std::string> rules{"*.*"};  // empty means {"*.*"}, as in TiCDC
  bool case_sensitive = false;
  std::vector<uint64_t> ignore_txn_start_ts;
  std::vector<EventFilterRule> event_filters;
};

enum class DmlType { kInsert, kUpdate, kDelete };

class Filter {
 public:
  // Validates and compiles `config`. InvalidArgument names the bad rule,
  // event type or regex; NotSupported for expression filters and `@file`
  // rule imports.
  static Result<std::shared_ptr<const Filter>> Make(const FilterConfig& config);

  // The error Make would return, or OK.
  static Status Validate(const FilterConfig& config);

  // True if the changefeed does not replicate `schema`.`table`: a system
  // schema, or `filter.rules` do not accept it.
  bool ShouldIgnoreTable(std::string_view schema, std::string_view table) const;

  // True if no table of `schema` can be replicated: a system schema, or
  // `filter.rules` reject the whole schema.
  bool ShouldIgnoreSchema(std::string_view schema) const;

  // True if `start_ts` is in `ignore-txn-start-ts`.
  bool ShouldIgnoreStartTs(uint64_t start_ts) const;

  // True if a row change is left out: its transaction's start ts is ignored,
  // its table is ignored, or an event filter whose matcher accepts the table
  // ignores this DML type ("insert" / "update" / "delete" / "all dml").
  bool ShouldIgnoreDml(DmlType type, std::string_view schema, std::string_view table,
                       uint64_t start_ts) const;

  // True if a DDL is discarded: neither applied to the changefeed's schema
  // nor sent downstream. That is a DDL action outside TiCDC's allow-list, a
  // schema DDL (IsSchemaDdl) on an ignored schema, or another DDL on an
  // ignored table. Call this before ShouldIgnoreDdl.
  bool ShouldDiscardDdl(model::ActionType action, std::string_view schema,
                        std::string_view table) const;

  // True if a DDL that is not discarded is still not sent downstream (it is
  // applied to the schema): its start ts is ignored, or an event filter whose
  // matcher accepts the DDL's table (its schema, for schema DDLs or an empty
  // `table`) ignores its event type, "all ddl", "alter table" for the
  // alter-table family, or matches `query` with an `ignore-sql` regex.
  bool ShouldIgnoreDdl(model::ActionType action, std::string_view schema, std::string_view table,
                       std::string_view query, uint64_t start_ts) const;

  const TableFilter& table_filter() const { return table_filter_; }

 private:
  struct EventRule {
    TableFilter matcher;
    std::vector<std::string_view> events;  // canonical names, static storage
    bool all_dml = false;
    bool all_ddl = false;
    bool alter_table = false;
    std::vector<GoRegex> ignore_sql;

    bool Applies(std::string_view schema, std::string_view table, bool schema_level) const;
    bool HasEvent(std::string_view name) const;
  };

  Filter() = default;
  static Result<EventRule> MakeEventRule(const EventFilterRule& rule, size_t index,
                                         bool case_sensitive);

  TableFilter table_filter_;
  std::vector<EventRule> event_rules_;
  std::vector<uint64_t> ignore_start_ts_;  // sorted, unique
};

}  // namespace sluice::filter
