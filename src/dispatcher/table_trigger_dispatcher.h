// TableTriggerDispatcher: the changefeed's DDL dispatcher (TiCDC's
// EventDispatcher on the DDL span, table id 0), on the maintainer's node. It
// receives every DDL of the upstream (the event service's table-trigger
// registration) and resolved marks, never DML. It follows the blocked-table
// convention of TiCDC's schema store, where table id 0
// (event::kTableTriggerTableId) stands for this dispatcher:
//   - blocked tables only {0} (CREATE TABLE, CREATE DATABASE, ...): written
//     here, no barrier; tables to add are reported (stage kNone);
//   - blocked tables {0, others} (DROP TABLE, TRUNCATE, RENAME, ...) or a
//     database / all influence (DROP DATABASE, ...): WAITING in the barrier
//     with the tables to add and drop; the maintainer picks the writer;
//   - blocked tables without 0 (ALTER of one table): not this dispatcher's;
//     the table's own dispatcher writes it.
// See BasicDispatcher for threads and ownership.
#pragma once

#include <memory>

#include "common/status.h"
#include "dispatcher/dispatcher.h"

namespace sluice::dispatcher {

class TableTriggerDispatcher final : public BasicDispatcher {
 public:
  // InvalidArgument without a sink or an executor, or with a table id other
  // than event::kTableTriggerTableId.
  static Result<std::shared_ptr<TableTriggerDispatcher>> Create(DispatcherOptions options);

 protected:
  DdlRoute RouteDdl(const event::DdlEvent& ddl) const override;
  bool AcceptsDml() const override { return false; }

 private:
  explicit TableTriggerDispatcher(DispatcherOptions options)
      : BasicDispatcher(std::move(options)) {}
};

}  // namespace sluice::dispatcher
