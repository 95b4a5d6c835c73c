// The production DispatcherFactory and FactoryProvider: a dispatcher manager
// of a changefeed gets the data path of the bootstrapping generation from
// the PathRegistry (opening its stores and sink), and every dispatcher it
// creates is a real dispatcher::EventDispatcher or TableTriggerDispatcher
// registered with that path's event service.
//
// Threads: as the interfaces in dispatchermanager/dispatcher_factory.h. The
// changefeed infos come from a lookup the server provides (the metastore).
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "dispatchermanager/dispatcher_factory.h"
#include "node/changefeed_path.h"

namespace sluice::node {

// The changefeed's info by "<namespace>/<name>", or its error.
using ChangefeedLookup = std::function<Result<meta::ChangefeedInfo>(const std::string& id)>;

class PathFactoryProvider final : public dispatchermanager::FactoryProvider {
 public:
  PathFactoryProvider(PathRegistry* registry, ChangefeedLookup lookup)
      : registry_(registry), lookup_(std::move(lookup)) {}

  Result<std::unique_ptr<dispatchermanager::DispatcherFactory>> Open(
      const dispatchermanager::BootstrapRequest& request) override;

  // Later Open() calls fail with WritePathClosed().
  void Shutdown() { closed_.store(true, std::memory_order_release); }

 private:
  PathRegistry* const registry_;
  const ChangefeedLookup lookup_;
  std::atomic<bool> closed_{false};
};

}  // namespace sluice::node
