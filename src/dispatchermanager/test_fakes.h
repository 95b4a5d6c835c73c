// Stateful fakes for dispatchermanager tests: a changefeed's "world" that
// records every dispatcher created and closed and every owner change, in
// order, and fails on command; a factory and handles over it; a provider
// that hands out factories per changefeed; and a log capture. Thread-safe.
#pragma once

#include <spdlog/sinks/ostream_sink.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/logging.h"
#include "common/thread_annotations.h"
#include "dispatchermanager/dispatcher_factory.h"

namespace sluice::dispatchermanager::testing {

inline DispatcherId Did(uint64_t high, uint64_t low) { return DispatcherId{high, low}; }

struct FakeEvent {
  enum class Kind { kCreate, kClose, kOwner };
  Kind kind;
  DispatcherId id;
  NodeId owner;
  MaintainerEpoch epoch;
};

class FakeWorld {
 public:
  // Commands.
  void FailNextCreate(Status status) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    fail_next_create_ = std::move(status);
  }
  void FailInitialize(Status status) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    fail_initialize_ = std::move(status);
  }
  // While held, dispatchers do not finish closing.
  void HoldClose(bool hold) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    hold_close_ = hold;
  }
  // Runs inside InitializeTables, with no fake lock held.
  void SetInitializeHook(std::function<void()> hook) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    initialize_hook_ = std::move(hook);
  }
  void CloseWritePath() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    write_path_closed_ = true;
  }

  // Observations.
  std::vector<FakeEvent> events() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return events_;
  }
  int CountEvents(FakeEvent::Kind kind) const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    int n = 0;
    for (const FakeEvent& e : events_) n += e.kind == kind ? 1 : 0;
    return n;
  }
  bool created(DispatcherId id) const EXCLUDES(mu_) { return Has(FakeEvent::Kind::kCreate, id); }
  bool closed(DispatcherId id) const EXCLUDES(mu_) { return Has(FakeEvent::Kind::kClose, id); }
  bool write_path_closed() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return write_path_closed_;
  }
  std::vector<std::vector<SchemaInfo>> initializations() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return initializations_;
  }

  // Holds dispatcher `id` at a barrier (its pending WAITING status), or
  // releases it (nullopt).
  void SetPendingBlock(DispatcherId id, std::optional<dispatcher::BlockStatus> status)
      EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (status.has_value()) {
      pending_blocks_[id] = std::move(*status);
    } else {
      pending_blocks_.erase(id);
    }
  }
  std::optional<dispatcher::BlockStatus> PendingBlock(DispatcherId id) const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = pending_blocks_.find(id);
    if (it == pending_blocks_.end()) return std::nullopt;
    return it->second;
  }

  // Called by the fakes.
  Status Create(const DispatcherConfig& config) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (write_path_closed_) return WritePathClosed("fake write path closed");
    if (fail_next_create_.has_value()) {
      Status st = *fail_next_create_;
      fail_next_create_.reset();
      return st;
    }
    events_.push_back({FakeEvent::Kind::kCreate, config.id, {}, {}});
    return Status::Ok();
  }
  Status Initialize(const std::vector<SchemaInfo>& schemas) EXCLUDES(mu_) {
    std::function<void()> hook;
    {
      MutexLock lock(&mu_);
      hook = initialize_hook_;
    }
    if (hook) hook();
    MutexLock lock(&mu_);
    if (write_path_closed_) return WritePathClosed("fake write path closed");
    if (fail_initialize_.has_value()) return *fail_initialize_;
    initializations_.push_back(schemas);
    return Status::Ok();
  }
  bool TryClose(DispatcherId id) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (hold_close_) return false;
    events_.push_back({FakeEvent::Kind::kClose, id, {}, {}});
    return true;
  }
  void OwnerChanged(const NodeId& owner, MaintainerEpoch epoch) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    events_.push_back({FakeEvent::Kind::kOwner, {}, owner, epoch});
  }

 private:
  bool Has(FakeEvent::Kind kind, DispatcherId id) const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    for (const FakeEvent& e : events_) {
      if (e.kind == kind && e.id == id) return true;
    }
    return false;
  }

  mutable Mutex mu_;
  std::vector<FakeEvent> events_ GUARDED_BY(mu_);
  std::map<DispatcherId, dispatcher::BlockStatus> pending_blocks_ GUARDED_BY(mu_);
  std::optional<Status> fail_next_create_ GUARDED_BY(mu_);
  std::optional<Status> fail_initialize_ GUARDED_BY(mu_);
  std::function<void()> initialize_hook_ GUARDED_BY(mu_);
  std::vector<std::vector<SchemaInfo>> initializations_ GUARDED_BY(mu_);
  bool hold_close_ GUARDED_BY(mu_) = false;
  bool write_path_closed_ GUARDED_BY(mu_) = false;
};

class FakeHandle : public DispatcherHandle {
 public:
  FakeHandle(std::shared_ptr<FakeWorld> world, DispatcherConfig config)
      : world_(std::move(world)), config_(std::move(config)) {}
  ComponentState state() const override { return ComponentState::kWorking; }
  Ts checkpoint_ts() const override { return config_.start_ts; }
  Status InitializeTables(const std::vector<SchemaInfo>& schemas) override {
    return world_->Initialize(schemas);
  }
  bool TryClose() override {
    if (!closed_) closed_ = world_->TryClose(config_.id);
    return closed_;
  }
  std::optional<dispatcher::BlockStatus> pending_block_status() const override {
    return world_->PendingBlock(config_.id);
  }

 private:
  const std::shared_ptr<FakeWorld> world_;
  const DispatcherConfig config_;
  bool closed_ = false;
};

class FakeFactory : public DispatcherFactory {
 public:
  explicit FakeFactory(std::shared_ptr<FakeWorld> world) : world_(std::move(world)) {}
  Result<std::unique_ptr<DispatcherHandle>> Create(const DispatcherConfig& config) override {
    RETURN_IF_ERROR(world_->Create(config));
    return std::unique_ptr<DispatcherHandle>(std::make_unique<FakeHandle>(world_, config));
  }
  void CloseWritePath() override { world_->CloseWritePath(); }
  Status OnOwnerChanged(const NodeId& owner, MaintainerEpoch epoch) override {
    world_->OwnerChanged(owner, epoch);
    return Status::Ok();
  }

 private:
  const std::shared_ptr<FakeWorld> world_;
};

class FakeProvider : public FactoryProvider {
 public:
  std::shared_ptr<FakeWorld> world(const std::string& changefeed_id) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    std::shared_ptr<FakeWorld>& w = worlds_[changefeed_id];
    if (w == nullptr) w = std::make_shared<FakeWorld>();
    return w;
  }
  void FailNextOpen(Status status) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    fail_next_open_ = std::move(status);
  }
  int opens() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return opens_;
  }
  Result<std::unique_ptr<DispatcherFactory>> Open(const BootstrapRequest& request) override {
    {
      MutexLock lock(&mu_);
      if (fail_next_open_.has_value()) {
        Status st = *fail_next_open_;
        fail_next_open_.reset();
        return st;
      }
      ++opens_;
    }
    return std::unique_ptr<DispatcherFactory>(
        std::make_unique<FakeFactory>(world(request.changefeed_id)));
  }

 private:
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<FakeWorld>> worlds_ GUARDED_BY(mu_);
  std::optional<Status> fail_next_open_ GUARDED_BY(mu_);
  int opens_ GUARDED_BY(mu_) = 0;
};

// Sends the process log to a string while alive.
class LogCapture {
 public:
  LogCapture() {
    logging::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(out_), logging::Level::kInfo);
  }
  ~LogCapture() { logging::Init(logging::Level::kInfo).IgnoreError(); }
  std::string Output() {
    logging::Flush();
    return out_.str();
  }
  // The lines of the output that contain `text`.
  std::vector<std::string> LinesWith(const std::string& text) {
    std::istringstream in(Output());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      if (line.find(text) != std::string::npos) lines.push_back(line);
    }
    return lines;
  }

 private:
  std::ostringstream out_;
};

// Request builders.
inline BootstrapRequest Boot(const std::string& node, uint64_t epoch,
                             std::optional<DispatcherId> trigger = std::nullopt,
                             const std::string& changefeed = "cf") {
  BootstrapRequest r;
  r.changefeed_id = changefeed;
  r.from = NodeId(node);
  r.epoch = MaintainerEpoch(epoch);
  r.start_ts = Ts(100);
  r.table_trigger_id = trigger;
  return r;
}

inline ScheduleRequest Sched(const std::string& node, uint64_t epoch, ScheduleAction action,
                             DispatcherId id, const std::string& changefeed = "cf") {
  ScheduleRequest r;
  r.changefeed_id = changefeed;
  r.from = NodeId(node);
  r.epoch = MaintainerEpoch(epoch);
  r.action = action;
  r.config.id = id;
  r.config.table_id = TableId(static_cast<int64_t>(id.low));
  r.config.span = TableRecordSpan(r.config.table_id);
  r.config.start_ts = Ts(200);
  return r;
}

inline PostBootstrapRequest PostBoot(const std::string& node, uint64_t epoch, DispatcherId trigger,
                                     const std::string& changefeed = "cf") {
  PostBootstrapRequest r;
  r.changefeed_id = changefeed;
  r.from = NodeId(node);
  r.epoch = MaintainerEpoch(epoch);
  r.table_trigger_id = trigger;
  r.schemas = {SchemaInfo{1, "db", {TableInfo{TableId(10), "t"}}}};
  return r;
}

inline CloseRequest CloseReq(const std::string& node, uint64_t epoch, bool removed = false,
                             const std::string& changefeed = "cf") {
  CloseRequest r;
  r.changefeed_id = changefeed;
  r.from = NodeId(node);
  r.epoch = MaintainerEpoch(epoch);
  r.removed = removed;
  return r;
}

}  // namespace sluice::dispatchermanager::testing
