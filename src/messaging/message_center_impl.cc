#include "messaging/message_center_impl.h"

#include <fmt/format.h>

#include <deque>
#include <thread>
#include <utility>

#include "common/lifecycle.h"
#include "common/logging.h"

namespace sluice::messaging {

struct MessageCenterImpl::Counters {
  std::atomic<uint64_t> queued_local{0};
  std::atomic<uint64_t> sent_remote{0};
  std::atomic<uint64_t> received_remote{0};
  std::atomic<uint64_t> handled{0};
  std::atomic<uint64_t> handler_errors{0};
  std::atomic<uint64_t> events_dropped{0};
  std::atomic<uint64_t> commands_timed_out{0};
  std::atomic<uint64_t> unknown_topic{0};
  std::atomic<uint64_t> undecodable{0};
  std::atomic<uint64_t> rejected{0};
  std::atomic<uint64_t> dropped_on_deregister{0};
  std::atomic<uint64_t> dropped_on_stop{0};

  static void Inc(std::atomic<uint64_t>& c, uint64_t n = 1) {
    c.fetch_add(n, std::memory_order_relaxed);
  }
};

// One topic: a bounded FIFO queue and the thread that hands its messages to
// the handler one at a time. Push() may be called from any thread; Close()
// and Join() by the center.
class MessageCenterImpl::TopicWorker {
 public:
  TopicWorker(std::string topic, Handler handler, size_t capacity, Clock* clock, Counters* counters)
      : topic_(std::move(topic)),
        handler_(std::move(handler)),
        capacity_(capacity),
        clock_(clock),
        counters_(counters) {}

  ~TopicWorker() {
    Close(Cancelled("topic worker destroyed"));
    thread_.Stop();
  }

  void Start() {
    thread_.Start("msg-" + topic_, [this](StopToken) { Run(); });
  }

  // Queues `msg`. A full queue drops an event (Busy) and makes a command wait
  // up to `timeout` (then Busy). After Close(), returns the close reason.
  Status Push(TargetMessage&& msg, Clock::Duration timeout) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (closed_) return close_reason_;
    if (queue_.size() >= capacity_) {
      if (msg.kind == DeliveryKind::kEvent) {
        Counters::Inc(counters_->events_dropped);
        return Busy(fmt::format("topic '{}' queue full ({}), event {} dropped", topic_, capacity_,
                                MessageTypeName(msg.type)));
      }
      const Clock::TimePoint deadline = clock_->Now() + timeout;
      while (queue_.size() >= capacity_ && !closed_) {
        if (clock_->WaitUntil(&not_full_, &mu_, deadline) && queue_.size() >= capacity_ &&
            !closed_) {
          Counters::Inc(counters_->commands_timed_out);
          return Busy(fmt::format("topic '{}' queue full ({}), command {} timed out", topic_,
                                  capacity_, MessageTypeName(msg.type)));
        }
      }
      if (closed_) return close_reason_;
    }
    queue_.push_back(std::move(msg));
    not_empty_.Signal();
    return Status::Ok();
  }

  // Stops accepting messages (later pushes get `reason`), drops what is
  // queued and wakes blocked senders. Returns how many were dropped. The
  // handler call in progress, if any, finishes; no other starts.
  size_t Close(Status reason) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (closed_) return 0;
    closed_ = true;
    close_reason_ = std::move(reason);
    size_t dropped = queue_.size();
    queue_.clear();
    not_empty_.SignalAll();
    not_full_.SignalAll();
    return dropped;
  }

  // Waits for the delivery thread to end. Call after Close(), never from the
  // delivery thread itself.
  void Join() { thread_.Join(); }

  bool OnDeliveryThread() const {
    return thread_id_.load(std::memory_order_acquire) == std::this_thread::get_id();
  }

  size_t queued() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return queue_.size();
  }

 private:
  void Run() EXCLUDES(mu_) {
    thread_id_.store(std::this_thread::get_id(), std::memory_order_release);
    for (;;) {
      TargetMessage msg;
      {
        MutexLock lock(&mu_);
        while (queue_.empty() && !closed_) not_empty_.Wait(&mu_);
        if (closed_) return;  // Close() dropped and counted the rest.
        msg = std::move(queue_.front());
        queue_.pop_front();
        not_full_.SignalAll();
      }
      Status st = handler_(msg);
      Counters::Inc(counters_->handled);
      if (!st.ok()) {
        Counters::Inc(counters_->handler_errors);
        LOG_WARN(
            "message handler failed: topic={} type={} from={} to={} epoch={} seq={} kind={} "
            "error={}",
            topic_, MessageTypeName(msg.type), msg.from.value(), msg.to.value(), msg.epoch.value(),
            msg.seq, msg.kind == DeliveryKind::kCommand ? "command" : "event", st.ToString());
      }
    }
  }

  const std::string topic_;
  const Handler handler_;
  const size_t capacity_;
  Clock* const clock_;
  Counters* const counters_;

  mutable Mutex mu_;
  CondVar not_empty_;
  CondVar not_full_;
  std::deque<TargetMessage> queue_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  Status close_reason_ GUARDED_BY(mu_);
  std::atomic<std::thread::id> thread_id_{};
  OwnedThread thread_;
};

MessageCenterImpl::MessageCenterImpl(MessageCenterOptions options)
    : options_(std::move(options)), counters_(std::make_unique<Counters>()) {
  assert(options_.queue_capacity > 0);
  assert(options_.clock != nullptr);
}

MessageCenterImpl::~MessageCenterImpl() { Stop(); }

Status MessageCenterImpl::Start() {
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("message center stopped");
    if (started_) return Status::Ok();
    started_ = true;
  }
  if (options_.transport != nullptr) {
    options_.transport->SetReceiver(
        [this](heartbeatpb::MessageEnvelope envelope) { return Receive(std::move(envelope)); });
  }
  return Status::Ok();
}

void MessageCenterImpl::Stop() {
  std::map<std::string, std::shared_ptr<TopicWorker>, std::less<>> workers;
  std::vector<std::shared_ptr<TopicWorker>> retired;
  bool had_receiver;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    had_receiver = started_;
    workers.swap(workers_);
    retired.swap(retired_);
  }
  // Close first: it wakes senders and transport receives blocked on a full
  // queue, so removing the receiver below does not wait for them.
  for (auto& [topic, worker] : workers) {
    Counters::Inc(counters_->dropped_on_stop, worker->Close(Cancelled("message center stopped")));
  }
  if (had_receiver && options_.transport != nullptr) options_.transport->SetReceiver(nullptr);
  for (auto& [topic, worker] : workers) worker->Join();
  for (auto& worker : retired) worker->Join();
}

Status MessageCenterImpl::RegisterHandler(std::string_view topic, Handler handler) {
  if (topic.empty()) return InvalidArgument("empty topic");
  if (!handler) return InvalidArgument(fmt::format("null handler for topic '{}'", topic));
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("message center stopped");
  if (workers_.contains(topic)) {
    return AlreadyExists(fmt::format("topic '{}' already has a handler", topic));
  }
  auto worker =
      std::make_shared<TopicWorker>(std::string(topic), std::move(handler), options_.queue_capacity,
                                    options_.clock, counters_.get());
  worker->Start();
  workers_.emplace(std::string(topic), std::move(worker));
  return Status::Ok();
}

void MessageCenterImpl::DeregisterHandler(std::string_view topic) {
  std::shared_ptr<TopicWorker> worker;
  bool from_own_handler;
  {
    MutexLock lock(&mu_);
    auto it = workers_.find(topic);
    if (it == workers_.end()) return;
    worker = std::move(it->second);
    workers_.erase(it);
    // Called from the handler itself: it cannot join its own thread. The
    // thread ends after this call returns; Stop() joins it. Retired in the
    // same critical section, so a concurrent Stop() sees it in one place.
    from_own_handler = worker->OnDeliveryThread();
    if (from_own_handler) retired_.push_back(worker);
  }
  Counters::Inc(counters_->dropped_on_deregister,
                worker->Close(NotFound(fmt::format("topic '{}' was deregistered", topic))));
  if (!from_own_handler) worker->Join();
}

Status MessageCenterImpl::SendEvent(TargetMessage msg) {
  return Send(std::move(msg), DeliveryKind::kEvent);
}

Status MessageCenterImpl::SendCommand(TargetMessage msg) {
  return Send(std::move(msg), DeliveryKind::kCommand);
}

Status MessageCenterImpl::Send(TargetMessage msg, DeliveryKind kind) {
  msg.from = options_.self;
  msg.kind = kind;
  if (Status st = CheckConsistent(msg); !st.ok()) {
    Counters::Inc(counters_->rejected);
    return st;
  }
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("message center stopped");
    msg.seq = ++next_seq_[msg.to];
  }
  if (msg.to == options_.self) return DeliverLocal(std::move(msg));
  if (options_.transport == nullptr) {
    return Unavailable(fmt::format("no transport to reach node '{}'", msg.to.value()));
  }
  ASSIGN_OR_RETURN(heartbeatpb::MessageEnvelope envelope, EncodeEnvelope(msg));
  Status st = options_.transport->Send(std::move(envelope));
  if (st.ok()) Counters::Inc(counters_->sent_remote);
  return st;
}

Status MessageCenterImpl::DeliverLocal(TargetMessage msg) {
  Result<std::shared_ptr<TopicWorker>> worker = FindWorker(msg.topic);
  if (!worker.ok()) {
    if (worker.status().code() == Code::kNotFound) Counters::Inc(counters_->unknown_topic);
    return worker.status();
  }
  Status st = (*worker)->Push(std::move(msg), options_.command_timeout);
  if (st.ok()) {
    Counters::Inc(counters_->queued_local);
  } else if (st.code() == Code::kNotFound) {
    Counters::Inc(counters_->unknown_topic);  // Deregistered since FindWorker.
  }
  return st;
}

Status MessageCenterImpl::Receive(heartbeatpb::MessageEnvelope envelope) {
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("message center stopped");
  }
  Counters::Inc(counters_->received_remote);
  Result<TargetMessage> decoded = DecodeEnvelope(envelope);
  if (!decoded.ok()) {
    Counters::Inc(decoded.status().code() == Code::kCorruption ? counters_->undecodable
                                                               : counters_->rejected);
    LOG_WARN("dropping message: from={} to={} topic={} type={} seq={} error={}", envelope.from(),
             envelope.to(), envelope.topic(), envelope.type(), envelope.seq(),
             decoded.status().ToString());
    return decoded.status();
  }
  TargetMessage msg = std::move(decoded).value();
  if (msg.to != options_.self) {
    Counters::Inc(counters_->rejected);
    LOG_WARN("dropping message for another node: {} self={}", msg.HeaderString(),
             options_.self.value());
    return ProtocolViolation(fmt::format("message for node '{}' arrived at node '{}'",
                                         msg.to.value(), options_.self.value()));
  }
  std::string header = msg.HeaderString();
  Status st = DeliverLocal(std::move(msg));
  if (st.code() == Code::kNotFound) {
    LOG_WARN("dropping message for unknown topic: {} error={}", header, st.ToString());
  } else if (!st.ok()) {
    LOG_DEBUG("message not queued: {} error={}", header, st.ToString());
  }
  return st;
}

Result<std::shared_ptr<MessageCenterImpl::TopicWorker>> MessageCenterImpl::FindWorker(
    std::string_view topic) const {
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("message center stopped");
  auto it = workers_.find(topic);
  if (it == workers_.end()) {
    return NotFound(
        fmt::format("no handler for topic '{}' on node '{}'", topic, options_.self.value()));
  }
  return it->second;
}

MessageCenterStats MessageCenterImpl::stats() const {
  auto load = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  MessageCenterStats s;
  s.queued_local = load(counters_->queued_local);
  s.sent_remote = load(counters_->sent_remote);
  s.received_remote = load(counters_->received_remote);
  s.handled = load(counters_->handled);
  s.handler_errors = load(counters_->handler_errors);
  s.events_dropped = load(counters_->events_dropped);
  s.commands_timed_out = load(counters_->commands_timed_out);
  s.unknown_topic = load(counters_->unknown_topic);
  s.undecodable = load(counters_->undecodable);
  s.rejected = load(counters_->rejected);
  s.dropped_on_deregister = load(counters_->dropped_on_deregister);
  s.dropped_on_stop = load(counters_->dropped_on_stop);
  return s;
}

size_t MessageCenterImpl::QueuedFor(std::string_view topic) const {
  Result<std::shared_ptr<TopicWorker>> worker = FindWorker(topic);
  return worker.ok() ? (*worker)->queued() : 0;
}

}  // namespace sluice::messaging
