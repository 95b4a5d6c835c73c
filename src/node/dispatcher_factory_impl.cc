#include "node/dispatcher_factory_impl.h"

namespace sluice::node {

namespace {

using dispatchermanager::ComponentState;
using dispatchermanager::DispatcherConfig;
using dispatchermanager::DispatcherHandle;
using dispatchermanager::SchemaInfo;
using dispatchermanager::WritePathClosed;

class PathDispatcherHandle final : public DispatcherHandle {
 public:
  PathDispatcherHandle(std::shared_ptr<ChangefeedPath> path,
                       std::shared_ptr<dispatcher::BasicDispatcher> dispatcher, Ts start)
      : path_(std::move(path)), dispatcher_(std::move(dispatcher)), start_(start) {}
  ~PathDispatcherHandle() override { path_->RemoveDispatcher(dispatcher_->id()); }

  // Working until closed (by a remove or the write fence), stopped once
  // nothing it handed to the sink is in flight any more.
  ComponentState state() const override {
    if (!closed_ && !dispatcher_->Closed()) return ComponentState::kWorking;
    return dispatcher_->Drained() ? ComponentState::kStopped : ComponentState::kStopping;
  }
  Ts checkpoint_ts() const override { return dispatcher_->checkpoint(); }
  Ts effective_start_ts() const override { return start_; }
  std::optional<dispatcher::BlockStatus> pending_block_status() const override {
    return dispatcher_->pending_block_status();
  }
  // The trigger learns every table from the event service's DDL stream, so
  // the initial list needs no action beyond the write-path check.
  Status InitializeTables(const std::vector<SchemaInfo>&) override {
    if (path_->Find(dispatcher_->id()) == nullptr) {
      return WritePathClosed("dispatcher already closed");
    }
    return Status::Ok();
  }
  // Closes at once; reports closed only when the dispatcher is drained (a
  // sink flush in flight is not closed yet), so a remove waits for it.
  bool TryClose() override {
    if (!closed_) {
      path_->RemoveDispatcher(dispatcher_->id());
      closed_ = true;
    }
    return dispatcher_->Drained();
  }

 private:
  const std::shared_ptr<ChangefeedPath> path_;
  const std::shared_ptr<dispatcher::BasicDispatcher> dispatcher_;
  const Ts start_;
  bool closed_ = false;
};

class PathDispatcherFactory final : public dispatchermanager::DispatcherFactory {
 public:
  explicit PathDispatcherFactory(std::shared_ptr<ChangefeedPath> path) : path_(std::move(path)) {}

  Result<std::unique_ptr<DispatcherHandle>> Create(const DispatcherConfig& config) override {
    if (closed_.load(std::memory_order_acquire)) {
      return WritePathClosed("write path of " + path_->changefeed() + " closed");
    }
    ASSIGN_OR_RETURN(Ts start, path_->AddDispatcher(config));
    std::shared_ptr<dispatcher::BasicDispatcher> d = path_->Find(config.id);
    if (d == nullptr) return WritePathClosed("dispatcher closed while it was created");
    return std::unique_ptr<DispatcherHandle>(new PathDispatcherHandle(path_, std::move(d), start));
  }

  // A newer maintainer generation takes over the dispatchers of this path:
  // the sink claims its epoch downstream first.
  Status OnOwnerChanged(const NodeId& owner, MaintainerEpoch epoch) override {
    return path_->AdoptEpoch(epoch);
  }

  // The local fence: no new dispatcher, and every dispatcher of this
  // generation stops handing rows and DDLs to the sink now.
  void CloseWritePath() override {
    closed_.store(true, std::memory_order_release);
    path_->FenceWrites();
  }

 private:
  const std::shared_ptr<ChangefeedPath> path_;
  std::atomic<bool> closed_{false};
};

}  // namespace

Result<std::unique_ptr<dispatchermanager::DispatcherFactory>> PathFactoryProvider::Open(
    const dispatchermanager::BootstrapRequest& request) {
  if (closed_.load(std::memory_order_acquire)) return WritePathClosed("node shutting down");
  ASSIGN_OR_RETURN(meta::ChangefeedInfo info, lookup_(request.changefeed_id));
  ASSIGN_OR_RETURN(std::shared_ptr<ChangefeedPath> path,
                   registry_->Acquire(info, request.epoch, request.start_ts));
  return std::unique_ptr<dispatchermanager::DispatcherFactory>(
      new PathDispatcherFactory(std::move(path)));
}

}  // namespace sluice::node
