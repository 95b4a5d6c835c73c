#include "dispatchermanager/dispatcher_manager.h"

#include <utility>

#include "common/logging.h"

namespace sluice::dispatchermanager {
namespace {

std::string_view TriggerKind(DispatcherMode mode) {
  return mode == DispatcherMode::kRedo ? "table_trigger_redo" : "table_trigger_event";
}

std::string OptionalIdString(const std::optional<DispatcherId>& id) {
  return id.has_value() ? IdString(*id) : "none";
}

}  // namespace

DispatcherManager::DispatcherManager(std::string changefeed_id, bool redo_enabled,
                                     std::unique_ptr<DispatcherFactory> factory)
    : changefeed_id_(std::move(changefeed_id)),
      redo_enabled_(redo_enabled),
      factory_(std::move(factory)) {}

Result<BootstrapResponse> DispatcherManager::Bootstrap(const BootstrapRequest& request) {
  MutexLock lock(&fence_mu_);
  if (closed_) return WritePathClosed("dispatcher manager is closed");
  if (!fence_.CanTakeOwnership(request.from, request.epoch)) {
    LOG_WARN(
        "drop stale maintainer bootstrap request; changefeed={} from={} request_epoch={} "
        "owner={} owner_epoch={}",
        changefeed_id_, request.from.value(), request.epoch.value(), fence_.owner().value(),
        fence_.epoch().value());
    return StaleOwner("bootstrap from a stale maintainer");
  }
  if (request.redo_trigger_id.has_value() && !redo_enabled_) {
    return InvalidArgument("redo trigger dispatcher named but redo is disabled");
  }
  if (closing_) {
    // The previous owner began closing everything. Only a newer epoch may
    // take the manager over, and only once every dispatcher has closed (the
    // owner's close resends and the status collections finish them); it
    // then starts empty. Until then the maintainer retries.
    if (request.epoch <= fence_.epoch() || !dispatchers_.empty()) {
      return Aborted("dispatcher manager is still closing the previous owner's dispatchers");
    }
    FinishClosing();
  }
  RETURN_IF_ERROR(AwaitClosingTriggers());
  bool replacing = false;
  for (DispatcherMode mode : {DispatcherMode::kDefault, DispatcherMode::kRedo}) {
    Status valid = ValidateTrigger(
        mode, mode == DispatcherMode::kRedo ? request.redo_trigger_id : request.table_trigger_id);
    if (valid.ok()) continue;
    if (!MayReplaceTrigger(mode, request)) return valid;
    replacing = true;
  }
  bool changed = fence_.owner() != request.from || fence_.epoch() != request.epoch;
  // The sink writes for the new generation before the generation owns the
  // manager (a refused claim leaves both as they were).
  if (changed) RETURN_IF_ERROR(factory_->OnOwnerChanged(request.from, request.epoch));
  if (!fence_.TryTakeOwnership(request.from, request.epoch)) {
    return Internal("bootstrap admitted but ownership not taken");
  }
  // The fence moved first: the old owner can no longer use the trigger.
  if (replacing) RETURN_IF_ERROR(CloseReplacedTriggers(request));
  RETURN_IF_ERROR(
      EnsureTrigger(DispatcherMode::kDefault, request.table_trigger_id, request.start_ts));
  RETURN_IF_ERROR(EnsureTrigger(DispatcherMode::kRedo, request.redo_trigger_id, request.start_ts));
  if (fenced()) {
    LOG_INFO("dispatcher manager fenced during bootstrap; changefeed={} epoch={}", changefeed_id_,
             request.epoch.value());
    return WritePathClosed("dispatcher manager is fenced");
  }
  return Snapshot();
}

Status DispatcherManager::PostBootstrap(const PostBootstrapRequest& request) {
  MutexLock lock(&fence_mu_);
  if (closed_) return WritePathClosed("dispatcher manager is closed");
  if (fenced()) return WritePathClosed("dispatcher manager is fenced");
  RETURN_IF_ERROR(Admit(request.from, request.epoch, "post_bootstrap"));
  if (!table_trigger_id_.has_value()) {
    LOG_ERROR("post-bootstrap without table trigger dispatcher; changefeed={} requested={}",
              changefeed_id_, IdString(request.table_trigger_id));
    return NotFound("post-bootstrap but there is no table trigger dispatcher");
  }
  if (*table_trigger_id_ != request.table_trigger_id) {
    LOG_ERROR(
        "post-bootstrap table trigger dispatcher id mismatch; changefeed={} expected={} "
        "actual={}",
        changefeed_id_, IdString(*table_trigger_id_), IdString(request.table_trigger_id));
    return Aborted("post-bootstrap names another table trigger dispatcher");
  }
  RETURN_IF_ERROR(InitializeTrigger(DispatcherMode::kDefault, request.schemas));
  if (redo_trigger_id_.has_value()) {
    RETURN_IF_ERROR(InitializeTrigger(DispatcherMode::kRedo, request.redo_schemas));
  }
  if (fenced()) {
    LOG_INFO("dispatcher manager fenced during post-bootstrap; changefeed={} epoch={}",
             changefeed_id_, request.epoch.value());
    return WritePathClosed("dispatcher manager is fenced");
  }
  return Status::Ok();
}

Result<ScheduleResponse> DispatcherManager::Schedule(const ScheduleRequest& request) {
  MutexLock lock(&fence_mu_);
  if (closed_) return WritePathClosed("dispatcher manager is closed");
  RETURN_IF_ERROR(Admit(request.from, request.epoch, "schedule"));
  if (request.config.mode == DispatcherMode::kRedo && !redo_enabled_) {
    return InvalidArgument("redo dispatcher scheduled but redo is disabled");
  }
  DropStaleOperator(request.config.id);
  if (request.action == ScheduleAction::kCreate) return ScheduleCreate(request);
  return ScheduleRemove(request);
}

Result<bool> DispatcherManager::Close(const CloseRequest& request) {
  MutexLock lock(&fence_mu_);
  if (closed_) return true;
  RETURN_IF_ERROR(Admit(request.from, request.epoch, "close"));
  closing_ = true;
  if (!FinishClosing()) return false;
  closed_ = true;
  LOG_INFO("dispatcher manager closed; changefeed={} epoch={} removed={}", changefeed_id_,
           request.epoch.value(), request.removed);
  return true;
}

bool DispatcherManager::FinishClosing() {
  bool all_closed = true;
  for (auto& [id, entry] : dispatchers_) {
    entry.removing = true;
    if (!entry.handle->TryClose()) all_closed = false;
  }
  if (!all_closed) return false;
  dispatchers_.clear();
  operators_.clear();
  table_trigger_id_.reset();
  redo_trigger_id_.reset();
  closing_ = false;
  return true;
}

std::vector<DispatcherStatus> DispatcherManager::CollectStatuses() {
  MutexLock lock(&fence_mu_);
  std::vector<DispatcherStatus> statuses;
  std::vector<DispatcherId> removing;
  for (const auto& [id, entry] : dispatchers_) {
    if (entry.removing) removing.push_back(id);
  }
  for (DispatcherId id : removing) {
    DispatcherConfig config = dispatchers_.at(id).config;
    if (FinishRemoveIfClosed(id)) {
      statuses.push_back(DispatcherStatus{config, ComponentState::kStopped, Ts{}});
    }
  }
  for (const auto& [id, entry] : dispatchers_) statuses.push_back(StatusOf(entry));
  return statuses;
}

std::vector<dispatcher::BlockStatus> DispatcherManager::PendingBlockStatuses() const {
  MutexLock lock(&fence_mu_);
  std::vector<dispatcher::BlockStatus> out;
  for (const auto& [id, entry] : dispatchers_) {
    if (entry.removing) continue;
    if (auto s = entry.handle->pending_block_status()) out.push_back(std::move(*s));
  }
  return out;
}

void DispatcherManager::LocalFence() {
  if (fenced_.exchange(true, std::memory_order_acq_rel)) return;
  LOG_WARN("dispatcher manager local fence; changefeed={}", changefeed_id_);
  factory_->CloseWritePath();
}

NodeId DispatcherManager::owner() const {
  MutexLock lock(&fence_mu_);
  return fence_.owner();
}

MaintainerEpoch DispatcherManager::epoch() const {
  MutexLock lock(&fence_mu_);
  return fence_.epoch();
}

std::optional<DispatcherId> DispatcherManager::trigger_id(DispatcherMode mode) const {
  MutexLock lock(&fence_mu_);
  return mode == DispatcherMode::kRedo ? redo_trigger_id_ : table_trigger_id_;
}

std::vector<ScheduleRequest> DispatcherManager::operators() const {
  MutexLock lock(&fence_mu_);
  std::vector<ScheduleRequest> out;
  for (const auto& [id, op] : operators_) out.push_back(op);
  return out;
}

bool DispatcherManager::FenceLockIsFree() const {
  if (!fence_mu_.TryLock()) return false;
  fence_mu_.Unlock();
  return true;
}

Status DispatcherManager::Admit(const NodeId& from, MaintainerEpoch epoch,
                                std::string_view request) const {
  if (fence_.Allows(from, epoch)) return Status::Ok();
  LOG_WARN(
      "drop stale maintainer request; request={} changefeed={} from={} request_epoch={} "
      "owner={} owner_epoch={}",
      request, changefeed_id_, from.value(), epoch.value(), fence_.owner().value(),
      fence_.epoch().value());
  return StaleOwner("request from a stale maintainer");
}

std::optional<DispatcherId>& DispatcherManager::TriggerSlot(DispatcherMode mode) {
  return mode == DispatcherMode::kRedo ? redo_trigger_id_ : table_trigger_id_;
}

Status DispatcherManager::ValidateTrigger(DispatcherMode mode,
                                          const std::optional<DispatcherId>& requested) const {
  const std::optional<DispatcherId>& current =
      mode == DispatcherMode::kRedo ? redo_trigger_id_ : table_trigger_id_;
  if (!current.has_value() || current == requested) return Status::Ok();
  if (!requested.has_value()) {
    LOG_ERROR(
        "table trigger dispatcher present during bootstrap naming none; changefeed={} kind={} "
        "actual={}",
        changefeed_id_, TriggerKind(mode), IdString(*current));
    return Aborted("table trigger dispatcher present during bootstrap naming none");
  }
  LOG_ERROR(
      "table trigger dispatcher id mismatch during bootstrap; changefeed={} kind={} "
      "expected={} actual={}",
      changefeed_id_, TriggerKind(mode), OptionalIdString(requested), IdString(*current));
  return Aborted("table trigger dispatcher id mismatch during bootstrap");
}

MaintainerEpoch& DispatcherManager::TriggerEpoch(DispatcherMode mode) {
  return mode == DispatcherMode::kRedo ? redo_trigger_epoch_ : table_trigger_epoch_;
}

bool DispatcherManager::MayReplaceTrigger(DispatcherMode mode,
                                          const BootstrapRequest& request) const {
  const std::optional<DispatcherId>& current =
      mode == DispatcherMode::kRedo ? redo_trigger_id_ : table_trigger_id_;
  const std::optional<DispatcherId>& replace =
      mode == DispatcherMode::kRedo ? request.replace_redo_trigger_id : request.replace_trigger_id;
  const MaintainerEpoch created =
      mode == DispatcherMode::kRedo ? redo_trigger_epoch_ : table_trigger_epoch_;
  // Epoch 0 (a maintainer without epochs) never replaces anything.
  return current.has_value() && replace == current && request.epoch.value() != 0 &&
         request.epoch > created;
}

Status DispatcherManager::AwaitClosingTriggers() {
  for (DispatcherMode mode : {DispatcherMode::kDefault, DispatcherMode::kRedo}) {
    std::optional<DispatcherId> current = TriggerSlot(mode);
    if (!current.has_value()) continue;
    auto it = dispatchers_.find(*current);
    if (it == dispatchers_.end() || !it->second.removing) continue;
    if (!FinishRemoveIfClosed(*current)) {
      return Aborted("the table trigger dispatcher is still closing");
    }
  }
  return Status::Ok();
}

Status DispatcherManager::CloseReplacedTriggers(const BootstrapRequest& request) {
  bool all_closed = true;
  for (DispatcherMode mode : {DispatcherMode::kDefault, DispatcherMode::kRedo}) {
    const std::optional<DispatcherId>& requested =
        mode == DispatcherMode::kRedo ? request.redo_trigger_id : request.table_trigger_id;
    std::optional<DispatcherId> current = TriggerSlot(mode);
    if (!current.has_value() || current == requested) continue;
    LOG_INFO("replacing table trigger dispatcher; changefeed={} kind={} old={} epoch={}",
             changefeed_id_, TriggerKind(mode), IdString(*current), request.epoch.value());
    auto it = dispatchers_.find(*current);
    if (it == dispatchers_.end()) {
      TriggerSlot(mode).reset();  // Nothing left to close.
      continue;
    }
    it->second.removing = true;
    if (!FinishRemoveIfClosed(*current)) all_closed = false;
  }
  if (!all_closed) return Aborted("the replaced table trigger dispatcher is still closing");
  return Status::Ok();
}

Status DispatcherManager::EnsureTrigger(DispatcherMode mode,
                                        const std::optional<DispatcherId>& requested, Ts start_ts) {
  std::optional<DispatcherId>& current = TriggerSlot(mode);
  if (!requested.has_value()) return Status::Ok();
  if (current.has_value()) {
    TriggerEpoch(mode) = std::max(TriggerEpoch(mode), fence_.epoch());  // Adopted.
    return Status::Ok();
  }
  DispatcherConfig config = TableTriggerConfig(*requested, mode, start_ts);
  Result<std::unique_ptr<DispatcherHandle>> handle = factory_->Create(config);
  if (!handle.ok()) {
    if (IsWritePathClosed(handle.status())) {
      LOG_INFO(
          "write path closed while creating table trigger dispatcher; changefeed={} kind={} "
          "status={}",
          changefeed_id_, TriggerKind(mode), handle.status().ToString());
    } else {
      LOG_ERROR("failed to create table trigger dispatcher; changefeed={} kind={} status={}",
                changefeed_id_, TriggerKind(mode), handle.status().ToString());
    }
    return handle.status();
  }
  dispatchers_[config.id] = Entry{config, std::move(handle).value(), false};
  current = config.id;
  TriggerEpoch(mode) = fence_.epoch();
  return Status::Ok();
}

Status DispatcherManager::InitializeTrigger(DispatcherMode mode,
                                            const std::vector<SchemaInfo>& schemas) {
  const std::optional<DispatcherId>& id = TriggerSlot(mode);
  auto it = dispatchers_.find(*id);
  if (it == dispatchers_.end()) return Internal("table trigger dispatcher id without dispatcher");
  Status st = it->second.handle->InitializeTables(schemas);
  if (st.ok()) return st;
  if (IsWritePathClosed(st)) {
    LOG_INFO(
        "write path closed while initializing table trigger dispatcher; changefeed={} kind={} "
        "status={}",
        changefeed_id_, TriggerKind(mode), st.ToString());
  } else {
    LOG_ERROR("failed to initialize table trigger dispatcher; changefeed={} kind={} status={}",
              changefeed_id_, TriggerKind(mode), st.ToString());
  }
  return st;
}

BootstrapResponse DispatcherManager::Snapshot() const {
  BootstrapResponse response;
  response.changefeed_id = changefeed_id_;
  response.epoch = fence_.epoch();
  for (const auto& [id, entry] : dispatchers_) response.spans.push_back(StatusOf(entry));
  if (table_trigger_id_.has_value()) {
    const Entry& trigger = dispatchers_.at(*table_trigger_id_);
    // Where the trigger really started: the sink may have moved it past
    // DDLs it already ran.
    response.checkpoint_ts =
        std::max(trigger.config.start_ts, trigger.handle->effective_start_ts());
  }
  if (redo_trigger_id_.has_value()) {
    response.redo_checkpoint_ts = dispatchers_.at(*redo_trigger_id_).config.start_ts;
  }
  response.operators = SnapshotOperators();
  return response;
}

std::vector<ScheduleRequest> DispatcherManager::SnapshotOperators() const {
  std::vector<ScheduleRequest> out;
  for (const auto& [id, op] : operators_) {
    if (!fence_.Allows(op.from, op.epoch)) {
      // A stale remove is kept only while this snapshot reports its
      // dispatcher: the new owner then restores the cleanup intent.
      if (op.action != ScheduleAction::kRemove || dispatchers_.count(id) == 0) continue;
      LOG_INFO(
          "include stale remove operator in bootstrap response; changefeed={} dispatcher={} "
          "operator_epoch={} owner_epoch={}",
          changefeed_id_, IdString(id), op.epoch.value(), fence_.epoch().value());
    }
    out.push_back(op);
  }
  return out;
}

void DispatcherManager::DropStaleOperator(DispatcherId id) {
  auto it = operators_.find(id);
  if (it == operators_.end() || fence_.Allows(it->second.from, it->second.epoch)) return;
  LOG_INFO("replace stale operator; changefeed={} dispatcher={} operator_epoch={} owner_epoch={}",
           changefeed_id_, IdString(id), it->second.epoch.value(), fence_.epoch().value());
  operators_.erase(it);
}

Result<ScheduleResponse> DispatcherManager::ScheduleCreate(const ScheduleRequest& request) {
  const DispatcherId id = request.config.id;
  if (auto it = dispatchers_.find(id); it != dispatchers_.end()) {
    return ScheduleReply(request, StatusOf(it->second).state);  // Idempotent.
  }
  operators_[id] = request;
  Result<std::unique_ptr<DispatcherHandle>> handle = factory_->Create(request.config);
  operators_.erase(id);
  if (!handle.ok()) {
    if (IsWritePathClosed(handle.status())) {
      LOG_INFO("write path closed while creating dispatcher; changefeed={} dispatcher={}",
               changefeed_id_, IdString(id));
    } else {
      LOG_ERROR("failed to create dispatcher; changefeed={} dispatcher={} status={}",
                changefeed_id_, IdString(id), handle.status().ToString());
    }
    return handle.status();
  }
  dispatchers_[id] = Entry{request.config, std::move(handle).value(), false};
  return ScheduleReply(request, ComponentState::kWorking);
}

ScheduleResponse DispatcherManager::ScheduleRemove(const ScheduleRequest& request) {
  const DispatcherId id = request.config.id;
  auto it = dispatchers_.find(id);
  // Nothing to clean up: answer Stopped without keeping an operator that no
  // removal would ever finish.
  if (it == dispatchers_.end()) return ScheduleReply(request, ComponentState::kStopped);
  operators_[id] = request;
  it->second.removing = true;
  if (FinishRemoveIfClosed(id)) return ScheduleReply(request, ComponentState::kStopped);
  return ScheduleReply(request, ComponentState::kStopping);
}

bool DispatcherManager::FinishRemoveIfClosed(DispatcherId id) {
  auto it = dispatchers_.find(id);
  if (it == dispatchers_.end() || !it->second.handle->TryClose()) return false;
  dispatchers_.erase(it);
  if (auto op = operators_.find(id);
      op != operators_.end() && op->second.action == ScheduleAction::kRemove) {
    operators_.erase(op);
  }
  if (table_trigger_id_ == id) table_trigger_id_.reset();
  if (redo_trigger_id_ == id) redo_trigger_id_.reset();
  return true;
}

DispatcherStatus DispatcherManager::StatusOf(const Entry& entry) const {
  ComponentState state = entry.removing ? ComponentState::kStopping : entry.handle->state();
  return DispatcherStatus{entry.config, state, entry.handle->checkpoint_ts()};
}

ScheduleResponse DispatcherManager::ScheduleReply(const ScheduleRequest& request,
                                                  ComponentState state) const {
  ScheduleResponse response;
  response.changefeed_id = changefeed_id_;
  response.epoch = request.epoch;
  response.dispatcher_id = request.config.id;
  response.state = state;
  return response;
}

}  // namespace sluice::dispatchermanager
