#include "dispatcher/event_dispatcher.h"

#include <utility>

namespace sluice::dispatcher {

Result<std::shared_ptr<EventDispatcher>> EventDispatcher::Create(DispatcherOptions options) {
  RETURN_IF_ERROR(Validate(options));
  return std::shared_ptr<EventDispatcher>(new EventDispatcher(std::move(options)));
}

BasicDispatcher::DdlRoute EventDispatcher::RouteDdl(const event::DdlEvent& ddl) const {
  // TiCDC shouldBlock: several tables, a database or everything; or a table
  // whose span is split, where no single dispatcher may write alone.
  if (ddl.NeedsBarrier() || !options().complete_table) return DdlRoute::kBarrier;
  return DdlRoute::kWriteLocally;
}

}  // namespace sluice::dispatcher
