#include "dispatcher/table_trigger_dispatcher.h"

#include <algorithm>
#include <utility>

namespace sluice::dispatcher {

Result<std::shared_ptr<TableTriggerDispatcher>> TableTriggerDispatcher::Create(
    DispatcherOptions options) {
  RETURN_IF_ERROR(Validate(options));
  if (options.table_id != event::kTableTriggerTableId) {
    return InvalidArgument("table-trigger dispatcher must have the DDL span's table id");
  }
  return std::shared_ptr<TableTriggerDispatcher>(new TableTriggerDispatcher(std::move(options)));
}

BasicDispatcher::DdlRoute TableTriggerDispatcher::RouteDdl(const event::DdlEvent& ddl) const {
  if (ddl.blocked.influence != event::InfluenceType::kNormal) return DdlRoute::kBarrier;
  const std::vector<int64_t>& ids = ddl.blocked.table_ids;
  bool mine =
      ids.empty() || std::find(ids.begin(), ids.end(), event::kTableTriggerTableId) != ids.end();
  if (!mine) return DdlRoute::kSkip;
  bool others = std::any_of(ids.begin(), ids.end(),
                            [](int64_t id) { return id != event::kTableTriggerTableId; });
  return others ? DdlRoute::kBarrier : DdlRoute::kWriteLocally;
}

}  // namespace sluice::dispatcher
