#include "node/filtering_sink.h"

#include <algorithm>
#include <utility>

#include "common/logging.h"
#include "filter/event_types.h"

namespace sluice::node {

namespace {

using model::ActionType;

// ShouldDiscardDdl with the names that decide for each action (see the
// header).
bool ShouldDiscard(const filter::Filter& f, const event::DdlEvent& ddl) {
  switch (ddl.type) {
    case ActionType::kRenameTable:
      return f.ShouldDiscardDdl(ddl.type, ddl.prev_schema_name, ddl.prev_table_name);
    case ActionType::kExchangeTablePartition:
      return f.ShouldDiscardDdl(ddl.type, ddl.schema_name, ddl.table_name) &&
             f.ShouldDiscardDdl(ddl.type, ddl.prev_schema_name, ddl.prev_table_name);
    case ActionType::kCreateTables:
    case ActionType::kRenameTables:
      if (!filter::IsAllowedDdl(ddl.type)) return true;
      if (ddl.tables_to_add.empty()) return f.ShouldIgnoreSchema(ddl.schema_name);
      return std::all_of(ddl.tables_to_add.begin(), ddl.tables_to_add.end(),
                         [&f](const event::TableRef& t) {
                           return f.ShouldIgnoreTable(t.schema_name, t.table_name);
                         });
    default:
      return f.ShouldDiscardDdl(ddl.type, ddl.schema_name, ddl.table_name);
  }
}

}  // namespace

bool ShouldSkipDdl(const filter::Filter& filter, const event::DdlEvent& ddl) {
  return ShouldDiscard(filter, ddl) ||
         filter.ShouldIgnoreDdl(ddl.type, ddl.schema_name, ddl.table_name, ddl.query,
                                ddl.start_ts.value());
}

FilteringSink::FilteringSink(std::unique_ptr<sink::Sink> inner,
                             std::shared_ptr<const filter::Filter> filter)
    : inner_(std::move(inner)), filter_(std::move(filter)) {}

Status FilteringSink::WriteBlockEvent(const event::DdlEvent& ddl) {
  if (!ShouldSkipDdl(*filter_, ddl)) return inner_->WriteBlockEvent(ddl);
  skipped_ddls_.fetch_add(1, std::memory_order_relaxed);
  LOG_INFO("DDL left out by the changefeed filter; job={} finished_ts={} type={} query={}",
           ddl.job_id, ddl.finished_ts.value(), static_cast<int>(ddl.type), RedactText(ddl.query));
  return inner_->status();
}

}  // namespace sluice::node
