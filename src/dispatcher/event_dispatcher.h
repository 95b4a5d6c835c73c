// EventDispatcher: the dispatcher of one table span (TiCDC
// downstreamadapter/dispatcher/event_dispatcher.go). It writes the span's
// DML to the sink and the DDLs of its table: a DDL of this table alone (on a
// complete table) is written here once earlier DML is flushed; any other DDL
// (several tables, a database, everything, or a table split across
// dispatchers) goes through the maintainer's barrier. See BasicDispatcher
// for threads and ownership.
#pragma once

#include <memory>

#include "common/status.h"
#include "dispatcher/dispatcher.h"

namespace sluice::dispatcher {

class EventDispatcher final : public BasicDispatcher {
 public:
  // InvalidArgument without a sink or an executor.
  static Result<std::shared_ptr<EventDispatcher>> Create(DispatcherOptions options);

 protected:
  DdlRoute RouteDdl(const event::DdlEvent& ddl) const override;
  bool AcceptsDml() const override { return true; }

 private:
  explicit EventDispatcher(DispatcherOptions options) : BasicDispatcher(std::move(options)) {}
};

}  // namespace sluice::dispatcher
