#include "filter/filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace sluice::filter {
namespace {

std::string_view DmlEventName(DmlType type) {
  switch (type) {
    case DmlType::kInsert:
      return kInsert;
    case DmlType::kUpdate:
      return kUpdate;
    case DmlType::kDelete:
      return kDelete;
  }
  return {};
}

Status CheckNoExpressions(const EventFilterRule& rule, size_t index) {
  const std::pair<std::string_view, const std::string*> exprs[] = {
      {"ignore-insert-value-expr", &rule.ignore_insert_value_expr},
      {"ignore-update-new-value-expr", &rule.ignore_update_new_value_expr},
      {"ignore-update-old-value-expr", &rule.ignore_update_old_value_expr},
      {"ignore-delete-value-expr", &rule.ignore_delete_value_expr},
  };
  for (const auto& [key, value] : exprs) {
    if (!value->empty()) {
      return NotSupported(fmt::format(
          "event-filters[{}]: {} is set, but expression filters are not implemented; remove it "
          "or filter these rows downstream",
          index, key));
    }
  }
  if (!rule.ignore_update_only_columns.empty()) {
    return NotSupported(fmt::format(
        "event-filters[{}]: ignore-update-only-columns is set, but it is not implemented", index));
  }
  return Status::Ok();
}

}  // namespace

bool Filter::EventRule::Applies(std::string_view schema, std::string_view table,
                                bool schema_level) const {
  if (schema_level || table.empty()) return matcher.MatchSchema(schema);
  return matcher.MatchTable(schema, table);
}

bool Filter::EventRule::HasEvent(std::string_view name) const {
  return std::find(events.begin(), events.end(), name) != events.end();
}

Result<Filter::EventRule> Filter::MakeEventRule(const EventFilterRule& rule, size_t index,
                                                bool case_sensitive) {
  EventRule out;
  Result<TableFilter> matcher = TableFilter::Parse(rule.matcher, case_sensitive);
  if (!matcher.ok()) {
    return matcher.status().WithContext(fmt::format("event-filters[{}].matcher", index));
  }
  out.matcher = std::move(matcher).value();
  for (const std::string& name : rule.ignore_event) {
    Result<std::string_view> canonical = CanonicalIgnoreEvent(name);
    if (!canonical.ok()) {
      return canonical.status().WithContext(fmt::format("event-filters[{}].ignore-event", index));
    }
    out.all_dml = out.all_dml || *canonical == kAllDml;
    out.all_ddl = out.all_ddl || *canonical == kAllDdl;
    out.alter_table = out.alter_table || *canonical == kAlterTable;
    out.events.push_back(*canonical);
  }
  for (const std::string& pattern : rule.ignore_sql) {
    // TiCDC compiles "(?i)" + the patterns joined by "|".
    Result<GoRegex> re = GoRegex::Compile(pattern, /*icase=*/true);
    if (!re.ok())
      return re.status().WithContext(fmt::format("event-filters[{}].ignore-sql", index));
    out.ignore_sql.push_back(std::move(re).value());
  }
  RETURN_IF_ERROR(CheckNoExpressions(rule, index));
  return out;
}

Result<std::shared_ptr<const Filter>> Filter::Make(const FilterConfig& config) {
  static const std::vector<std::string> kDefaultRules{"*.*"};
  const std::vector<std::string>& rules = config.rules.empty() ? kDefaultRules : config.rules;
  std::shared_ptr<Filter> f(new Filter());
  Result<TableFilter> table_filter = TableFilter::Parse(rules, config.case_sensitive);
  if (!table_filter.ok()) return table_filter.status().WithContext("filter.rules");
  f->table_filter_ = std::move(table_filter).value();
  for (size_t i = 0; i < config.event_filters.size(); ++i) {
    ASSIGN_OR_RETURN(EventRule rule,
                     MakeEventRule(config.event_filters[i], i, config.case_sensitive));
    f->event_rules_.push_back(std::move(rule));
  }
  f->ignore_start_ts_ = config.ignore_txn_start_ts;
  std::sort(f->ignore_start_ts_.begin(), f->ignore_start_ts_.end());
  f->ignore_start_ts_.erase(std::unique(f->ignore_start_ts_.begin(), f->ignore_start_ts_.end()),
                            f->ignore_start_ts_.end());
  return std::shared_ptr<const Filter>(std::move(f));
}

Status Filter::Validate(const FilterConfig& config) { return Make(config).status(); }

bool Filter::ShouldIgnoreTable(std::string_view schema, std::string_view table) const {
  return IsSysSchema(schema) || !table_filter_.MatchTable(schema, table);
}

bool Filter::ShouldIgnoreSchema(std::string_view schema) const {
  return IsSysSchema(schema) || !table_filter_.MatchSchema(schema);
}

bool Filter::ShouldIgnoreStartTs(uint64_t start_ts) const {
  return std::binary_search(ignore_start_ts_.begin(), ignore_start_ts_.end(), start_ts);
}

bool Filter::ShouldIgnoreDml(DmlType type, std::string_view schema, std::string_view table,
                             uint64_t start_ts) const {
  if (ShouldIgnoreStartTs(start_ts) || ShouldIgnoreTable(schema, table)) return true;
  const std::string_view event = DmlEventName(type);
  for (const EventRule& rule : event_rules_) {
    if (!rule.all_dml && !rule.HasEvent(event)) continue;
    if (rule.Applies(schema, table, /*schema_level=*/false)) return true;
  }
  return false;
}

bool Filter::ShouldDiscardDdl(model::ActionType action, std::string_view schema,
                              std::string_view table) const {
  if (!IsAllowedDdl(action)) return true;
  if (IsSchemaDdl(action)) return ShouldIgnoreSchema(schema);
  return ShouldIgnoreTable(schema, table);
}

bool Filter::ShouldIgnoreDdl(model::ActionType action, std::string_view schema,
                             std::string_view table, std::string_view query,
                             uint64_t start_ts) const {
  if (ShouldIgnoreStartTs(start_ts)) return true;
  if (event_rules_.empty() || !IsFilterableDdl(action)) return false;
  const std::string_view event = DdlEventTypeName(action);
  const bool alter_table = IsAlterTableSubtype(action);
  const bool schema_level = IsSchemaDdl(action);
  for (const EventRule& rule : event_rules_) {
    if (!rule.Applies(schema, table, schema_level)) continue;
    if (rule.all_ddl || rule.HasEvent(event) || (alter_table && rule.alter_table)) return true;
    if (query.empty()) continue;
    for (const GoRegex& re : rule.ignore_sql) {
      if (re.Search(query)) return true;
    }
  }
  return false;
}

}  // namespace sluice::filter
