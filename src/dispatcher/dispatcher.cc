#include "dispatcher/dispatcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "common/logging.h"

namespace sluice::dispatcher {

BasicDispatcher::BasicDispatcher(DispatcherOptions options)
    : options_(std::move(options)),
      progress_(options_.start_ts),
      last_done_ts_(options_.start_ts) {}

Status BasicDispatcher::Validate(const DispatcherOptions& options) {
  if (options.sink == nullptr) return InvalidArgument("dispatcher: no sink");
  if (options.executor == nullptr) return InvalidArgument("dispatcher: no block event executor");
  return Status::Ok();
}

// ---- events from the event service ----

void BasicDispatcher::OnDml(event::DmlEventPtr dml) {
  CheckSink();
  size_t bytes = dml->ApproximateBytes();
  Item item;
  item.kind = 'M';
  item.dml = std::move(dml);
  item.bytes = bytes;
  Enqueue(std::move(item));
}

void BasicDispatcher::OnDdl(event::DdlEventPtr ddl) {
  CheckSink();
  Item item;
  item.kind = 'D';
  item.ddl = std::move(ddl);
  Enqueue(std::move(item));
}

void BasicDispatcher::OnResolved(Ts ts) {
  CheckSink();
  Item item;
  item.kind = 'R';
  item.ts = ts;
  Enqueue(std::move(item));
}

void BasicDispatcher::OnError(Status status, Ts failing_ts) {
  Fail(status.WithContext("event service"), failing_ts);
}

void BasicDispatcher::Enqueue(Item item) {
  size_t dropped_bytes = 0;
  bool drain = false;
  {
    MutexLock lock(&mu_);
    if (stage_ == Stage::kFailed || stage_ == Stage::kClosed) {
      // Dropped; its credit goes back so the service's accounting stays exact.
      dropped_bytes = item.bytes;
    } else {
      if (item.kind == 'R' && !inbox_.empty() && inbox_.back().kind == 'R') {
        inbox_.back().ts = std::max(inbox_.back().ts, item.ts);  // Coalesce marks.
      } else {
        inbox_.push_back(std::move(item));
      }
      if (!draining_ && stage_ == Stage::kRunning) draining_ = drain = true;
    }
  }
  Ack(dropped_bytes);
  if (drain) Drain();
}

void BasicDispatcher::Drain() {
  for (;;) {
    Item item;
    {
      MutexLock lock(&mu_);
      if (inbox_.empty() || stage_ != Stage::kRunning) {
        draining_ = false;
        return;
      }
      item = std::move(inbox_.front());
      inbox_.pop_front();
    }
    switch (item.kind) {
      case 'M':
        ProcessDml(std::move(item.dml), item.bytes);
        break;
      case 'D':
        ProcessDdl(item.ddl);
        break;
      case 'R':
        progress_.UpdateResolved(item.ts);
        break;
    }
  }
}

void BasicDispatcher::ProcessDml(event::DmlEventPtr dml, size_t bytes) {
  if (!AcceptsDml() || dml->commit_ts <= progress_.resolved_ts()) {
    LOG_WARN("dispatcher {}-{}: dropping DML at commit ts {} (resolved {})", options_.id.high,
             options_.id.low, dml->commit_ts.value(), progress_.resolved_ts().value());
    Ack(bytes);
    return;
  }
  bool stopped = false;
  {
    MutexLock lock(&mu_);
    stopped = StoppedLocked();
    if (!stopped) ++sink_calls_;
  }
  if (stopped) {
    Ack(bytes);
    return;
  }
  const Ts commit = dml->commit_ts;
  const Ts start = dml->start_ts;
  progress_.Add(commit, start);
  std::shared_ptr<BasicDispatcher> self = shared_from_this();
  dml->AddPostFlush([self, commit, start, bytes] { self->OnFlushed(commit, start, bytes); });
  options_.sink->AddDmlEvent(std::move(dml));
  EndSinkCall();
}

void BasicDispatcher::EndSinkCall() {
  MutexLock lock(&mu_);
  --sink_calls_;
}

void BasicDispatcher::OnFlushed(Ts commit_ts, Ts start_ts, size_t bytes) {
  progress_.Remove(commit_ts, start_ts);
  Ack(bytes);
  bool submit = false;
  Ts ts;
  {
    MutexLock lock(&mu_);
    if (stage_ == Stage::kWaitingFlush && !step_submitted_ && progress_.Empty()) {
      step_submitted_ = submit = true;
      ts = pending_ddl_->finished_ts;
    }
  }
  if (submit) Submit(&BasicDispatcher::AfterFlush, ts);
}

// ---- block events ----

void BasicDispatcher::ProcessDdl(const event::DdlEventPtr& ddl) {
  if (ddl->finished_ts <= progress_.resolved_ts()) {
    LOG_WARN("dispatcher {}-{}: dropping stale DDL at {}", options_.id.high, options_.id.low,
             ddl->finished_ts.value());
    return;
  }
  DdlRoute route = RouteDdl(*ddl);
  if (route == DdlRoute::kSkip) return;
  bool submit;
  {
    MutexLock lock(&mu_);
    if (stage_ != Stage::kRunning) return;
    pending_ddl_ = ddl;
    pending_route_ = route;
    stage_ = Stage::kWaitingFlush;
    // A flush completing from here on sees kWaitingFlush and submits; one
    // completed before leaves the progress empty for this check.
    step_submitted_ = submit = progress_.Empty();
  }
  LOG_INFO("dispatcher {}-{}: DDL at {} ({}): {}", options_.id.high, options_.id.low,
           ddl->finished_ts.value(), route == DdlRoute::kBarrier ? "barrier" : "local", ddl->query);
  if (submit) Submit(&BasicDispatcher::AfterFlush, ddl->finished_ts);
}

void BasicDispatcher::Submit(void (BasicDispatcher::*step)(), Ts ts) {
  std::shared_ptr<BasicDispatcher> self = shared_from_this();
  if (!options_.executor->Submit([self, step] { ((*self).*step)(); })) {
    Fail(Cancelled("block event executor stopped"), ts);
  }
}

void BasicDispatcher::AfterFlush() {
  CheckSink();
  event::DdlEventPtr ddl;
  DdlRoute route;
  {
    MutexLock lock(&mu_);
    if (stage_ != Stage::kWaitingFlush) return;
    ddl = pending_ddl_;
    route = pending_route_;
    stage_ = route == DdlRoute::kBarrier ? Stage::kWaitingAction : Stage::kExecuting;
    if (route != DdlRoute::kBarrier) ++sink_calls_;
  }
  if (route == DdlRoute::kBarrier) {
    Report(BlockStage::kWaiting, /*is_blocked=*/true, ddl, ddl->finished_ts);
    return;
  }
  Status st = options_.sink->WriteBlockEvent(*ddl);
  EndSinkCall();
  if (!st.ok()) {
    Fail(st.WithContext(fmt::format("write DDL at {}", ddl->finished_ts.value())),
         ddl->finished_ts);
    return;
  }
  // Written without the barrier: only a change of the table set is reported
  // (the maintainer adds or removes dispatchers).
  bool changes_tables = !ddl->tables_to_add.empty() || !ddl->tables_to_drop.empty();
  FinishBlockEvent(ddl,
                   changes_tables ? std::optional<BlockStage>(BlockStage::kNone) : std::nullopt);
}

void BasicDispatcher::HandleBarrierAction(Ts block_ts, BarrierAction action) {
  enum { kIgnore, kRun, kAckAgain } what = kIgnore;
  {
    MutexLock lock(&mu_);
    if (stage_ == Stage::kFailed || stage_ == Stage::kClosed) return;
    Ts pending = pending_ddl_ ? pending_ddl_->finished_ts : Ts(0);
    if (block_ts <= last_done_ts_) {
      what = kAckAgain;  // Done already (possibly still finishing): DONE again.
    } else if (pending_ddl_ && block_ts == pending) {
      if (stage_ == Stage::kWaitingAction) {
        stage_ = Stage::kExecuting;
        pending_action_ = action;
        what = kRun;
      }
    } else if (pending_ddl_ && block_ts < pending) {
      what = kAckAgain;  // An earlier event this dispatcher has moved past.
    }
  }
  if (what == kRun) Submit(&BasicDispatcher::Execute, block_ts);
  if (what == kAckAgain) Report(BlockStage::kDone, /*is_blocked=*/true, nullptr, block_ts);
}

void BasicDispatcher::Execute() {
  event::DdlEventPtr ddl;
  BarrierAction action;
  {
    MutexLock lock(&mu_);
    if (stage_ != Stage::kExecuting) return;
    ddl = pending_ddl_;
    action = pending_action_;
  }
  if (action == BarrierAction::kWrite) {
    CheckSink();
    {
      MutexLock lock(&mu_);
      if (StoppedLocked()) return;
      ++sink_calls_;
    }
    Status st = options_.sink->WriteBlockEvent(*ddl);
    EndSinkCall();
    if (!st.ok()) {
      Fail(st.WithContext(fmt::format("write DDL at {}", ddl->finished_ts.value())),
           ddl->finished_ts);
      return;
    }
  }
  FinishBlockEvent(ddl, BlockStage::kDone);
}

void BasicDispatcher::FinishBlockEvent(const event::DdlEventPtr& ddl,
                                       std::optional<BlockStage> report) {
  progress_.Pass(ddl->finished_ts);
  {
    MutexLock lock(&mu_);
    if (stage_ != Stage::kExecuting) return;
    last_done_ts_ = ddl->finished_ts;
  }
  // Reported before the next events go on, as TiCDC reports DONE first.
  if (report.has_value()) {
    Report(*report, /*is_blocked=*/*report == BlockStage::kDone, ddl, ddl->finished_ts);
  }
  {
    MutexLock lock(&mu_);
    if (stage_ != Stage::kExecuting) return;
    pending_ddl_ = nullptr;
    stage_ = Stage::kRunning;
    step_submitted_ = false;
    if (draining_ || inbox_.empty()) return;
    draining_ = true;
  }
  Drain();  // The events held behind the DDL, on this executor thread.
}

void BasicDispatcher::Report(BlockStage stage, bool is_blocked, const event::DdlEventPtr& ddl,
                             Ts ts) const {
  if (!options_.on_block_status) return;
  BlockStatus s;
  s.dispatcher_id = options_.id;
  s.block_ts = ts;
  s.stage = stage;
  s.is_blocked = is_blocked;
  if (ddl) {
    s.blocked_tables = ddl->blocked;
    s.tables_to_add = ddl->tables_to_add;
    s.tables_to_drop = ddl->tables_to_drop;
    s.ddl = ddl;
  }
  options_.on_block_status(s);
}

// ---- status, errors, lifecycle ----

void BasicDispatcher::CheckSink() {
  Status st = options_.sink->status();
  if (!st.ok()) Fail(st.WithContext("sink"), Ts(checkpoint().value() + 1));
}

void BasicDispatcher::Fail(const Status& status, Ts failing_ts) {
  std::deque<Item> dropped;
  {
    MutexLock lock(&mu_);
    if (stage_ == Stage::kFailed || stage_ == Stage::kClosed) return;
    stage_ = Stage::kFailed;
    status_ = status;
    dropped.swap(inbox_);
  }
  for (const Item& item : dropped) Ack(item.bytes);
  LOG_WARN("dispatcher {}-{} of table {} stopped at ts {}: {}", options_.id.high, options_.id.low,
           options_.table_id, failing_ts.value(), status.ToString());
  if (options_.on_error) {
    options_.on_error(DispatcherError{options_.id, status, failing_ts, checkpoint()});
  }
}

void BasicDispatcher::Close() {
  std::deque<Item> dropped;
  {
    MutexLock lock(&mu_);
    if (stage_ == Stage::kClosed) return;
    stage_ = Stage::kClosed;
    dropped.swap(inbox_);
  }
  for (const Item& item : dropped) Ack(item.bytes);
}

bool BasicDispatcher::Stopped() const {
  MutexLock lock(&mu_);
  return StoppedLocked();
}

bool BasicDispatcher::Closed() const {
  MutexLock lock(&mu_);
  return stage_ == Stage::kClosed;
}

bool BasicDispatcher::Drained() const {
  {
    MutexLock lock(&mu_);
    if (!StoppedLocked() || sink_calls_ > 0) return false;
  }
  // The sink is asked without the dispatcher's lock held.
  return progress_.Empty() || !options_.sink->status().ok();
}

Status BasicDispatcher::status() const {
  MutexLock lock(&mu_);
  return status_;
}

bool BasicDispatcher::blocked() const {
  MutexLock lock(&mu_);
  return pending_ddl_ != nullptr && stage_ != Stage::kFailed && stage_ != Stage::kClosed;
}

std::optional<BlockStatus> BasicDispatcher::pending_block_status() const {
  event::DdlEventPtr ddl;
  {
    MutexLock lock(&mu_);
    if (pending_route_ != DdlRoute::kBarrier || pending_ddl_ == nullptr) return std::nullopt;
    if (stage_ != Stage::kWaitingAction && stage_ != Stage::kExecuting) return std::nullopt;
    ddl = pending_ddl_;
  }
  BlockStatus s;
  s.dispatcher_id = options_.id;
  s.block_ts = ddl->finished_ts;
  s.stage = BlockStage::kWaiting;
  s.is_blocked = true;
  s.blocked_tables = ddl->blocked;
  s.tables_to_add = ddl->tables_to_add;
  s.tables_to_drop = ddl->tables_to_drop;
  s.ddl = ddl;
  return s;
}

void BasicDispatcher::Ack(size_t bytes) const {
  if (bytes > 0 && options_.ack_bytes) options_.ack_bytes(bytes);
}

}  // namespace sluice::dispatcher
