// Watch cursors of the etcd store: each owns one etcd Watch stream and a
// reader thread that queues its events. When the stream breaks (etcd
// restarted, connection lost), the reader reconnects with backoff and
// creates the watch again from the revision after the last event it
// received, so the consumer sees every event once, in order.
#include <random>

#include "common/lifecycle.h"
#include "meta/etcd_store.h"

namespace sluice::meta {

class EtcdMetaStore::Cursor final : public WatchCursor {
 public:
  Cursor(EtcdMetaStore* store, std::string prefix, Revision next)
      : store_(store), prefix_(std::move(prefix)), next_(next), resume_(next) {}
  ~Cursor() override;

  void Start() {
    reader_.Start("meta-etcd-watch", [this](const StopToken& token) { ReadLoop(token); });
  }
  // The store stopped: Next() returns kCancelled, the stream ends.
  void Cancel() EXCLUDES(mu_);

  Result<std::vector<WatchEvent>> Poll() override EXCLUDES(mu_);
  Result<std::vector<WatchEvent>> Next(const CancelToken& token, Clock::TimePoint deadline) override
      EXCLUDES(mu_);
  Revision next_revision() const override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return next_;
  }

 private:
  void ReadLoop(const StopToken& token) EXCLUDES(mu_);
  // Runs one stream from resume_ until it ends; returns why it ended.
  Status RunStream(const std::shared_ptr<Conn>& conn, const StopToken& token, bool* progressed)
      EXCLUDES(mu_);
  Status Deliver(const etcdserverpb::WatchResponse& response) EXCLUDES(mu_);
  std::vector<WatchEvent> TakeLocked() REQUIRES(mu_);
  // Ends the current stream and keeps new ones from starting.
  void StopStream() REQUIRES(mu_);

  EtcdMetaStore* const store_;
  const std::string prefix_;

  mutable Mutex mu_;
  CondVar cv_;  // Events, an error, a cancel.
  std::vector<WatchEvent> pending_ GUARDED_BY(mu_);
  Status error_ GUARDED_BY(mu_);            // Terminal: compacted or a broken answer.
  bool cancelled_ GUARDED_BY(mu_) = false;  // The store stopped.
  bool closing_ GUARDED_BY(mu_) = false;    // No new stream may start.
  Revision next_ GUARDED_BY(mu_);           // The consumer's next revision.
  Revision resume_ GUARDED_BY(mu_);         // Where a new stream starts.
  grpc::ClientContext* context_ GUARDED_BY(mu_) = nullptr;
  OwnedThread reader_;
};

void EtcdMetaStore::CancelCursor(Cursor* cursor) { cursor->Cancel(); }

void EtcdMetaStore::Forget(Cursor* cursor) {
  MutexLock lock(&mu_);
  cursors_.erase(cursor);
}

Result<std::unique_ptr<WatchCursor>> EtcdMetaStore::Watch(const std::string& prefix,
                                                          Revision from_revision) {
  if (from_revision < 0) return InvalidArgument("metastore: negative watch revision");
  ASSIGN_OR_RETURN(Revision current, CurrentRevision());
  const Revision next = from_revision == 0 ? current + 1 : from_revision;
  if (next <= current) {
    // A read at that revision fails typed ("compacted") if etcd dropped it.
    etcdserverpb::RangeRequest probe;
    probe.set_key(ns_.ProbeKey());
    probe.set_count_only(true);
    probe.set_revision(next);
    RETURN_IF_ERROR(Range(probe, "watch from revision " + std::to_string(next)).status());
  }
  auto cursor = std::make_unique<Cursor>(this, prefix, next);
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("etcd metastore stopped");
    cursors_.insert(cursor.get());
  }
  cursor->Start();
  return std::unique_ptr<WatchCursor>(std::move(cursor));
}

EtcdMetaStore::Cursor::~Cursor() {
  store_->Forget(this);
  {
    MutexLock lock(&mu_);
    StopStream();
  }
  reader_.Stop();
}

void EtcdMetaStore::Cursor::Cancel() {
  {
    MutexLock lock(&mu_);
    cancelled_ = true;
    StopStream();
    cv_.SignalAll();
  }
  // Outside mu_: the reader's stop callback takes it.
  reader_.RequestStop();
}

void EtcdMetaStore::Cursor::StopStream() {
  closing_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

std::vector<WatchEvent> EtcdMetaStore::Cursor::TakeLocked() {
  std::vector<WatchEvent> out;
  out.swap(pending_);
  if (!out.empty()) next_ = out.back().kv.mod_revision + 1;
  return out;
}

Result<std::vector<WatchEvent>> EtcdMetaStore::Cursor::Poll() {
  MutexLock lock(&mu_);
  if (!pending_.empty()) return TakeLocked();
  if (!error_.ok()) return error_;
  if (cancelled_) return Cancelled("etcd metastore stopped");
  return std::vector<WatchEvent>();
}

Result<std::vector<WatchEvent>> EtcdMetaStore::Cursor::Next(const CancelToken& token,
                                                            Clock::TimePoint deadline) {
  CancelCallback wake(token, [this] {
    MutexLock lock(&mu_);
    cv_.SignalAll();
  });
  Clock* clock = store_->options_.clock;
  MutexLock lock(&mu_);
  while (true) {
    if (!pending_.empty()) return TakeLocked();
    if (!error_.ok()) return error_;
    if (cancelled_) return Cancelled("etcd metastore stopped");
    if (token.cancelled()) return Cancelled("watch cancelled");
    if (clock->WaitUntil(&cv_, &mu_, deadline) && pending_.empty() && error_.ok() && !cancelled_ &&
        !token.cancelled()) {
      return Timeout("watch: no event before the deadline");
    }
  }
}

void EtcdMetaStore::Cursor::ReadLoop(const StopToken& token) {
  Backoff backoff(store_->options_.reconnect_backoff, std::random_device()());
  CancelCallback wake(token, [this] {
    MutexLock lock(&mu_);
    cv_.SignalAll();
  });
  while (!token.cancelled()) {
    Result<std::shared_ptr<Conn>> conn = store_->Current();
    Status ended = conn.status();
    bool progressed = false;
    if (conn.ok()) ended = RunStream(*conn, token, &progressed);
    if (token.cancelled()) return;
    if (ended.code() == Code::kCancelled) {  // The store stopped.
      Cancel();
      return;
    }
    if (ended.code() == Code::kNotFound || ended.code() == Code::kProtocolViolation) {
      MutexLock lock(&mu_);
      error_ = ended;
      cv_.SignalAll();
      return;
    }
    if (conn.ok()) store_->MarkBroken(*conn);
    if (progressed) backoff.Reset();
    const Clock::TimePoint retry_at = store_->options_.clock->Now() + backoff.Next();
    MutexLock lock(&mu_);
    while (!token.cancelled() && !store_->options_.clock->WaitUntil(&cv_, &mu_, retry_at)) {
    }
  }
}

Status EtcdMetaStore::Cursor::RunStream(const std::shared_ptr<Conn>& conn, const StopToken& token,
                                        bool* progressed) {
  grpc::ClientContext context;
  context.set_wait_for_ready(true);  // A long-lived stream: no deadline.
  etcdserverpb::WatchRequest request;
  etcdserverpb::WatchCreateRequest* create = request.mutable_create_request();
  auto [start, end] = store_->ns_.PrefixRange(prefix_);
  create->set_key(start);
  create->set_range_end(end);
  {
    MutexLock lock(&mu_);
    if (closing_ || token.cancelled()) return Cancelled("watch cancelled");
    context_ = &context;
    create->set_start_revision(resume_);
  }
  const Revision from = create->start_revision();
  auto stream = conn->watch->Watch(&context);
  Status ended = Unavailable("etcd watch stream at " + conn->address + " ended");
  if (stream->Write(request)) {
    etcdserverpb::WatchResponse response;
    while (stream->Read(&response)) {
      if (response.compact_revision() != 0) {
        ended = NotFound("compacted: etcd watch from revision " + std::to_string(from) +
                         ", etcd compacted up to " + std::to_string(response.compact_revision()));
        break;
      }
      if (response.canceled()) {
        ended = Unavailable("etcd cancelled the watch: " + response.cancel_reason());
        break;
      }
      ended = Deliver(response);
      if (!ended.ok()) break;
      *progressed = true;
      ended = Unavailable("etcd watch stream at " + conn->address + " ended");
    }
  }
  context.TryCancel();
  grpc::Status finished = stream->Finish();
  {
    MutexLock lock(&mu_);
    context_ = nullptr;
  }
  if (!finished.ok() && ended.code() == Code::kUnavailable && !token.cancelled()) {
    ended = etcd::FromGrpc(finished, "watch at " + conn->address);
    if (ended.code() != Code::kNotFound) ended = Unavailable(std::string(ended.message()));
  }
  return ended;
}

Status EtcdMetaStore::Cursor::Deliver(const etcdserverpb::WatchResponse& response) {
  std::vector<WatchEvent> events;
  events.reserve(static_cast<size_t>(response.events_size()));
  for (const mvccpb::Event& event : response.events()) {
    ASSIGN_OR_RETURN(WatchEvent e, etcd::EventFromProto(event, store_->ns_));
    events.push_back(std::move(e));
  }
  if (events.empty()) return Status::Ok();
  MutexLock lock(&mu_);
  if (events.front().kv.mod_revision < resume_) {
    return ProtocolViolation("etcd watch went back from revision " + std::to_string(resume_) +
                             " to " + std::to_string(events.front().kv.mod_revision));
  }
  resume_ = events.back().kv.mod_revision + 1;
  for (WatchEvent& e : events) pending_.push_back(std::move(e));
  cv_.SignalAll();
  return Status::Ok();
}

}  // namespace sluice::meta
