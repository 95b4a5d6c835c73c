#include "dispatchermanager/dispatcher_orchestrator.h"

#include <utility>
#include <vector>

#include "common/logging.h"

namespace sluice::dispatchermanager {
namespace {

// A response of type R that refuses a request with `status`.
template <typename R, typename Request>
R Refusal(const Request& request, Status status) {
  R response;
  response.changefeed_id = request.changefeed_id;
  response.epoch = request.epoch;
  response.status = std::move(status);
  return response;
}

}  // namespace

DispatcherOrchestrator::DispatcherOrchestrator(FactoryProvider* provider) : provider_(provider) {}

std::optional<BootstrapResponse> DispatcherOrchestrator::HandleBootstrap(
    const BootstrapRequest& request) {
  if (fenced()) {
    LogDropped("bootstrap", request.changefeed_id);
    return std::nullopt;
  }
  if (Status st = Validate(request); !st.ok()) return Refusal<BootstrapResponse>(request, st);
  std::shared_ptr<Slot> slot = SlotFor(request.changefeed_id);
  MutexLock lock(&slot->request_mu);
  std::shared_ptr<DispatcherManager> existing = manager(request.changefeed_id);
  std::shared_ptr<DispatcherManager> target = existing;
  if (target == nullptr) {
    Result<std::shared_ptr<DispatcherManager>> created = NewManager(request);
    if (!created.ok()) {
      if (IsQuiet(created.status())) return std::nullopt;
      return Refusal<BootstrapResponse>(request, created.status());
    }
    target = std::move(created).value();
  }
  // A new manager whose bootstrap fails is dropped, never published.
  Result<BootstrapResponse> result = target->Bootstrap(request);
  if (!result.ok()) {
    if (IsQuiet(result.status())) return std::nullopt;
    BootstrapResponse refusal = Refusal<BootstrapResponse>(request, result.status());
    if (result.status().code() == Code::kAborted) {
      // The node's triggers, so that a newer generation can replace them.
      refusal.existing_trigger_id = target->trigger_id(DispatcherMode::kDefault);
      refusal.existing_redo_trigger_id = target->trigger_id(DispatcherMode::kRedo);
    }
    return refusal;
  }
  if (existing == nullptr && !Install(target)) {
    target->LocalFence();
    LogDropped("bootstrap", request.changefeed_id);
    return std::nullopt;
  }
  return std::move(result).value();
}

std::optional<PostBootstrapResponse> DispatcherOrchestrator::HandlePostBootstrap(
    const PostBootstrapRequest& request) {
  if (fenced()) {
    LogDropped("post_bootstrap", request.changefeed_id);
    return std::nullopt;
  }
  if (Status st = Validate(request); !st.ok()) return Refusal<PostBootstrapResponse>(request, st);
  std::shared_ptr<Slot> slot = SlotFor(request.changefeed_id);
  MutexLock lock(&slot->request_mu);
  std::shared_ptr<DispatcherManager> target = manager(request.changefeed_id);
  if (target == nullptr) {
    LOG_WARN("post-bootstrap for a changefeed without dispatcher manager; changefeed={} from={}",
             request.changefeed_id, request.from.value());
    return Refusal<PostBootstrapResponse>(request, NotFound("no dispatcher manager"));
  }
  Status st = target->PostBootstrap(request);
  if (IsQuiet(st)) return std::nullopt;
  PostBootstrapResponse response = Refusal<PostBootstrapResponse>(request, st);
  response.table_trigger_id = request.table_trigger_id;
  return response;
}

std::optional<ScheduleResponse> DispatcherOrchestrator::HandleSchedule(
    const ScheduleRequest& request) {
  if (fenced()) {
    LogDropped("schedule", request.changefeed_id);
    return std::nullopt;
  }
  ScheduleResponse refusal = Refusal<ScheduleResponse>(request, Status::Ok());
  refusal.dispatcher_id = request.config.id;
  if (refusal.status = Validate(request); !refusal.status.ok()) return refusal;
  std::shared_ptr<Slot> slot = SlotFor(request.changefeed_id);
  MutexLock lock(&slot->request_mu);
  std::shared_ptr<DispatcherManager> target = manager(request.changefeed_id);
  if (target == nullptr) {
    LOG_WARN("schedule for a changefeed without dispatcher manager; changefeed={} from={}",
             request.changefeed_id, request.from.value());
    refusal.status = NotFound("no dispatcher manager");
    return refusal;
  }
  Result<ScheduleResponse> result = target->Schedule(request);
  if (result.ok()) return std::move(result).value();
  if (IsQuiet(result.status())) return std::nullopt;
  refusal.status = result.status();
  return refusal;
}

std::optional<CloseResponse> DispatcherOrchestrator::HandleClose(const CloseRequest& request) {
  if (fenced()) {
    LogDropped("close", request.changefeed_id);
    return std::nullopt;
  }
  CloseResponse response = Refusal<CloseResponse>(request, Validate(request));
  if (!response.status.ok()) return response;
  std::shared_ptr<Slot> slot = SlotFor(request.changefeed_id);
  MutexLock lock(&slot->request_mu);
  std::shared_ptr<DispatcherManager> target = manager(request.changefeed_id);
  if (target == nullptr) {
    MutexLock map_lock(&mu_);
    closed_epochs_.Record(request.changefeed_id, request.epoch, request.removed);
    response.success = true;
    return response;
  }
  Result<bool> closed = target->Close(request);
  if (!closed.ok()) {
    if (closed.status().code() != Code::kStaleOwner) {
      if (IsQuiet(closed.status())) return std::nullopt;
      response.status = closed.status();
      return response;
    }
    // The manager belongs to a newer owner: leave it running, but let the
    // stale sender stop resending.
    response.success = true;
    response.superseded = true;
    return response;
  }
  if (*closed) Uninstall(request.changefeed_id, request.epoch, request.removed);
  response.success = *closed;
  return response;
}

void DispatcherOrchestrator::LocalFence() {
  if (!fenced_.exchange(true, std::memory_order_acq_rel)) {
    LOG_WARN("dispatcher orchestrator local fence");
  }
  std::vector<std::shared_ptr<DispatcherManager>> managers;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, m] : managers_) managers.push_back(m);
  }
  for (const auto& m : managers) m->LocalFence();
}

std::shared_ptr<DispatcherManager> DispatcherOrchestrator::manager(
    const std::string& changefeed_id) const {
  MutexLock lock(&mu_);
  auto it = managers_.find(changefeed_id);
  return it == managers_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<DispatcherManager>> DispatcherOrchestrator::managers() const {
  MutexLock lock(&mu_);
  std::vector<std::shared_ptr<DispatcherManager>> out;
  for (const auto& [id, m] : managers_) out.push_back(m);
  return out;
}

std::optional<MaintainerEpoch> DispatcherOrchestrator::closed_epoch(
    const std::string& changefeed_id) const {
  MutexLock lock(&mu_);
  return closed_epochs_.Get(changefeed_id);
}

std::shared_ptr<DispatcherOrchestrator::Slot> DispatcherOrchestrator::SlotFor(
    const std::string& changefeed_id) {
  MutexLock lock(&mu_);
  std::shared_ptr<Slot>& slot = slots_[changefeed_id];
  if (slot == nullptr) slot = std::make_shared<Slot>();
  return slot;
}

Result<std::shared_ptr<DispatcherManager>> DispatcherOrchestrator::NewManager(
    const BootstrapRequest& request) {
  {
    MutexLock lock(&mu_);
    if (closed_epochs_.BlocksBootstrap(request.changefeed_id, request.epoch)) {
      LOG_WARN(
          "drop stale maintainer bootstrap request after close; changefeed={} from={} "
          "request_epoch={} closed_epoch={}",
          request.changefeed_id, request.from.value(), request.epoch.value(),
          closed_epochs_.Get(request.changefeed_id)->value());
      return StaleOwner("bootstrap of a closed maintainer epoch");
    }
  }
  Result<std::unique_ptr<DispatcherFactory>> factory = provider_->Open(request);
  if (!factory.ok()) {
    if (IsWritePathClosed(factory.status())) {
      LOG_INFO("write path closed while creating dispatcher manager; changefeed={} status={}",
               request.changefeed_id, factory.status().ToString());
    } else {
      LOG_ERROR("failed to create dispatcher manager; changefeed={} status={}",
                request.changefeed_id, factory.status().ToString());
    }
    return factory.status();
  }
  return std::make_shared<DispatcherManager>(request.changefeed_id, request.redo_enabled,
                                             std::move(factory).value());
}

bool DispatcherOrchestrator::Install(const std::shared_ptr<DispatcherManager>& manager) {
  MutexLock lock(&mu_);
  if (fenced()) return false;
  managers_[manager->changefeed_id()] = manager;
  return true;
}

void DispatcherOrchestrator::Uninstall(const std::string& changefeed_id, MaintainerEpoch epoch,
                                       bool removed) {
  MutexLock lock(&mu_);
  managers_.erase(changefeed_id);
  closed_epochs_.Record(changefeed_id, epoch, removed);
}

bool DispatcherOrchestrator::IsQuiet(const Status& status) const {
  return IsWritePathClosed(status) || (!status.ok() && fenced());
}

void DispatcherOrchestrator::LogDropped(std::string_view request,
                                        const std::string& changefeed_id) const {
  LOG_INFO("dispatcher orchestrator fenced, drop request; request={} changefeed={}", request,
           changefeed_id);
}

}  // namespace sluice::dispatchermanager
