// BasicDispatcher: what the table-span EventDispatcher and the changefeed's
// TableTriggerDispatcher share (TiCDC downstreamadapter/dispatcher
// basic_dispatcher.go). It receives one span's events from the event
// service, in order, and:
//   - hands DML to the sink, tracking it in TableProgress; the sink's
//     PostFlush removes it and acks its bytes back to the event service;
//   - stops at a DDL until every earlier DML is flushed (without blocking a
//     thread: the last flush resumes it), then either writes it itself or,
//     for a DDL that needs the maintainer's barrier, reports WAITING and
//     waits for Write or Pass, carries it out and reports DONE; events
//     arriving meanwhile wait in an inbox (their DML bytes stay unacked, so
//     the event service's budget bounds the inbox);
//   - reports DDLs that add or drop tables (tables_to_add / tables_to_drop);
//   - stops on the first error (sink status, DDL write, event service) and
//     reports it once, as a DispatcherError carrying the failing ts.
//
// Threads: the EventConsumer callbacks come from one event-service worker at
// a time; PostFlush from the sink's threads; HandleBarrierAction from the
// maintainer's thread. DDL writes and the events held behind a DDL run on
// the BlockEventExecutor. Every public method is thread-safe. Dispatchers
// live in shared_ptrs (callbacks keep them alive until they have run); the
// sink and the executor are borrowed and must outlive them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>

#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "dispatcher/block_event_executor.h"
#include "dispatcher/block_status.h"
#include "dispatcher/table_progress.h"
#include "event/events.h"
#include "eventservice/event_service.h"
#include "sink/sink.h"

namespace sluice::dispatcher {

struct DispatcherOptions {
  DispatcherId id;
  // Physical table id of the span; event::kTableTriggerTableId for
  // the table-trigger dispatcher.
  int64_t table_id = 0;
  Ts start_ts;
  // False for one span of a table split across several dispatchers: then
  // even a DDL of this table alone goes through the barrier.
  bool complete_table = true;
  sink::Sink* sink = nullptr;
  BlockEventExecutor* executor = nullptr;
  // Hands flushed DML bytes back (EventService::Ack for this id).
  std::function<void(size_t bytes)> ack_bytes;
  std::function<void(const BlockStatus&)> on_block_status;
  std::function<void(const DispatcherError&)> on_error;
};

class BasicDispatcher : public eventservice::EventConsumer,
                        public std::enable_shared_from_this<BasicDispatcher> {
 public:
  ~BasicDispatcher() override = default;
  BasicDispatcher(const BasicDispatcher&) = delete;
  BasicDispatcher& operator=(const BasicDispatcher&) = delete;

  DispatcherId id() const { return options_.id; }
  int64_t table_id() const { return options_.table_id; }

  // eventservice::EventConsumer.
  void OnDml(event::DmlEventPtr dml) override;
  void OnDdl(event::DdlEventPtr ddl) override;
  void OnResolved(Ts ts) override;
  void OnError(Status status, Ts failing_ts) override;

  // The maintainer's answer for the block event at `block_ts`. An answer for
  // an event already done is acknowledged with DONE again; one for an event
  // not yet waiting is ignored (the maintainer resends).
  void HandleBarrierAction(Ts block_ts, BarrierAction action);

  // Everything with commit ts <= checkpoint() is written downstream.
  Ts checkpoint() const { return progress_.Checkpoint(); }
  Ts resolved_ts() const { return progress_.resolved_ts(); }
  // OK, or the error the dispatcher stopped with.
  Status status() const EXCLUDES(mu_);
  // True while a DDL holds the dispatcher's events.
  bool blocked() const EXCLUDES(mu_);
  // The WAITING status of the barrier DDL in progress, if any (for a new
  // maintainer's bootstrap).
  std::optional<BlockStatus> pending_block_status() const EXCLUDES(mu_);

  // Fails the dispatcher if the sink has failed. Runs on every event; also
  // for the owner's periodic check.
  void CheckSink();
  // Stops: queued events are dropped (their bytes acked), nothing more goes
  // to the sink and no more reports are made. A hand-off to the sink that
  // started before Close() may still finish; none starts after it returns.
  // Idempotent.
  void Close() EXCLUDES(mu_);
  // True once the dispatcher is closed (or failed) and nothing it handed to
  // the sink is still in flight: no hand-off is running and every DML it
  // gave the sink is flushed (or the sink has failed, so none ever will
  // be). Until then a remove of this dispatcher is not finished.
  bool Drained() const EXCLUDES(mu_);
  // True once closed or failed: nothing new goes to the sink.
  bool Stopped() const EXCLUDES(mu_);
  // True once closed (a remove or the write fence), not merely failed.
  bool Closed() const EXCLUDES(mu_);

 protected:
  enum class DdlRoute {
    kWriteLocally,  // This dispatcher writes it once earlier DML is flushed.
    kBarrier,       // WAITING, then the maintainer's Write or Pass.
    kSkip,          // Not this dispatcher's to handle.
  };

  explicit BasicDispatcher(DispatcherOptions options);
  static Status Validate(const DispatcherOptions& options);

  virtual DdlRoute RouteDdl(const event::DdlEvent& ddl) const = 0;
  virtual bool AcceptsDml() const = 0;

  const DispatcherOptions& options() const { return options_; }

 private:
  enum class Stage { kRunning, kWaitingFlush, kWaitingAction, kExecuting, kFailed, kClosed };
  struct Item {
    char kind = 0;  // 'M', 'D' or 'R'
    event::DmlEventPtr dml;
    event::DdlEventPtr ddl;
    Ts ts;
    size_t bytes = 0;
  };

  void Enqueue(Item item) EXCLUDES(mu_);
  void Drain() EXCLUDES(mu_);
  void ProcessDml(event::DmlEventPtr dml, size_t bytes) EXCLUDES(mu_);
  void ProcessDdl(const event::DdlEventPtr& ddl) EXCLUDES(mu_);
  void OnFlushed(Ts commit_ts, Ts start_ts, size_t bytes) EXCLUDES(mu_);
  void AfterFlush() EXCLUDES(mu_);
  void Execute() EXCLUDES(mu_);
  // Marks the DDL done, reports `report` if set and goes on with the inbox.
  void FinishBlockEvent(const event::DdlEventPtr& ddl, std::optional<BlockStage> report)
      EXCLUDES(mu_);
  void Submit(void (BasicDispatcher::*step)(), Ts ts) EXCLUDES(mu_);
  void Report(BlockStage stage, bool is_blocked, const event::DdlEventPtr& ddl, Ts ts) const;
  void Fail(const Status& status, Ts failing_ts) EXCLUDES(mu_);
  bool StoppedLocked() const REQUIRES(mu_) {
    return stage_ == Stage::kFailed || stage_ == Stage::kClosed;
  }
  // Ends a hand-off to the sink counted in sink_calls_.
  void EndSinkCall() EXCLUDES(mu_);
  void Ack(size_t bytes) const;

  const DispatcherOptions options_;
  TableProgress progress_;

  // Taken before progress_'s own lock, never after it.
  mutable Mutex mu_;
  std::deque<Item> inbox_ GUARDED_BY(mu_);
  bool draining_ GUARDED_BY(mu_) = false;
  Stage stage_ GUARDED_BY(mu_) = Stage::kRunning;
  event::DdlEventPtr pending_ddl_ GUARDED_BY(mu_);
  DdlRoute pending_route_ GUARDED_BY(mu_) = DdlRoute::kSkip;
  bool step_submitted_ GUARDED_BY(mu_) = false;
  BarrierAction pending_action_ GUARDED_BY(mu_) = BarrierAction::kPass;
  Ts last_done_ts_ GUARDED_BY(mu_);
  Status status_ GUARDED_BY(mu_);
  // Hand-offs to the sink running now (AddDmlEvent, WriteBlockEvent). One
  // starts only while the dispatcher is not stopped, checked under mu_.
  int sink_calls_ GUARDED_BY(mu_) = 0;
};

}  // namespace sluice::dispatcher
