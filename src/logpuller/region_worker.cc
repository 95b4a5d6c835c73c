#include "logpuller/region_worker.h"

#include <algorithm>
#include <atomic>

#include "common/hash.h"
#include "common/logging.h"

namespace sluice::logpuller {

// One state per region of every subscription: a subscription of 100,000 idle
// one-region tables must stay within ~2 KiB each (bench/README.md), so the
// state must fit jemalloc's 128-byte size class.
static_assert(sizeof(RegionState) <= 128, "RegionState grew past its size class");

struct RegionWorkerPool::Message {
  enum class Kind { kEvents, kResolved, kStart, kStreamBroken, kDropRun, kSendFailed };
  Kind kind = Kind::kEvents;
  uint64_t stream_id = 0;
  uint64_t request_id = 0;
  uint64_t region_id = 0;
  Ts ts;
  MessageBytes bytes;  // What `events` point into.
  std::vector<RegionEventRef> events;
  std::vector<uint64_t> regions;
  std::unique_ptr<RegionState> state;
  Status status;
};

struct RegionWorkerPool::Shard {
  Mutex mu;
  CondVar not_empty;  // The worker waits here.
  CondVar not_full;   // Producers of the data path wait here.
  std::deque<Message> data GUARDED_BY(mu);
  std::deque<Message> control GUARDED_BY(mu);
  bool closed GUARDED_BY(mu) = false;
  bool worker_waiting GUARDED_BY(mu) = false;
  size_t producers_waiting GUARDED_BY(mu) = 0;
  // Owned by the shard's thread: (request id, region id) -> state.
  std::map<std::pair<uint64_t, uint64_t>, std::unique_ptr<RegionState>> states;
  std::atomic<size_t> num_states{0};
  // Owned by the shard's thread: parses the rows of its regions' events.
  RegionEventDecoder decoder;
};

RegionWorkerPool::RegionWorkerPool(size_t num_workers, size_t queue_capacity,
                                   RegionWorkerHost* host)
    : host_(host), queue_capacity_(std::max<size_t>(1, queue_capacity)) {
  num_workers = std::max<size_t>(1, num_workers);
  for (size_t i = 0; i < num_workers; ++i) shards_.push_back(std::make_unique<Shard>());
}

RegionWorkerPool::~RegionWorkerPool() { Stop(); }

void RegionWorkerPool::Start() {
  for (auto& shard : shards_) {
    Shard* raw = shard.get();
    threads_.Start("region-worker", [this, raw](StopToken token) { Run(raw, token); });
  }
}

void RegionWorkerPool::Stop() {
  for (auto& shard : shards_) {
    MutexLock lock(&shard->mu);
    shard->closed = true;
    shard->not_empty.SignalAll();
    shard->not_full.SignalAll();
  }
  threads_.RequestStop();
  threads_.Join();
}

size_t RegionWorkerPool::ShardIndex(uint64_t region_id) const {
  return MixU64(region_id) % shards_.size();
}

size_t RegionWorkerPool::NumStates() const {
  size_t total = 0;
  for (const auto& shard : shards_) total += shard->num_states.load(std::memory_order_relaxed);
  return total;
}

Status RegionWorkerPool::PostEvent(uint64_t stream_id, MessageBytes message) {
  ChangeDataFrame frame;
  RETURN_IF_ERROR(SplitChangeData(*message, &frame));
  // Split the message by shard: events by their region, resolved regions too.
  std::vector<Message> per_shard(shards_.size());
  for (const RegionEventRef& ref : frame.events) {
    Message& msg = per_shard[ShardIndex(ref.region_id)];
    if (msg.bytes == nullptr) msg.bytes = message;
    msg.events.push_back(ref);
  }
  std::vector<Message> resolved;
  if (frame.resolved_ts.has_value() && frame.resolved_ts->ts() != 0) {
    const cdcpb::ResolvedTs& rts = *frame.resolved_ts;
    resolved.resize(shards_.size());
    for (uint64_t region : rts.regions()) {
      resolved[ShardIndex(region)].regions.push_back(region);
    }
    for (Message& msg : resolved) {
      msg.kind = Message::Kind::kResolved;
      msg.request_id = rts.request_id();
      msg.ts = Ts(rts.ts());
    }
  }
  auto push = [&](size_t i, Message msg) {
    msg.stream_id = stream_id;
    Shard& shard = *shards_[i];
    MutexLock lock(&shard.mu);
    while (!shard.closed && shard.data.size() >= queue_capacity_) {
      ++shard.producers_waiting;
      shard.not_full.Wait(&shard.mu);
      --shard.producers_waiting;
    }
    if (shard.closed) return;
    shard.data.push_back(std::move(msg));
    if (shard.worker_waiting) shard.not_empty.Signal();
  };
  for (size_t i = 0; i < per_shard.size(); ++i) {
    if (!per_shard[i].events.empty()) push(i, std::move(per_shard[i]));
  }
  for (size_t i = 0; i < resolved.size(); ++i) {
    if (!resolved[i].regions.empty()) push(i, std::move(resolved[i]));
  }
  return Status::Ok();
}

void RegionWorkerPool::PostControl(Shard& shard, Message msg) {
  MutexLock lock(&shard.mu);
  if (shard.closed) return;
  shard.control.push_back(std::move(msg));
  if (shard.worker_waiting) shard.not_empty.Signal();
}

void RegionWorkerPool::PostStart(std::unique_ptr<RegionState> state) {
  Message msg;
  msg.kind = Message::Kind::kStart;
  msg.stream_id = state->stream_id;
  Shard& shard = ShardOf(state->region.id.value());
  msg.state = std::move(state);
  PostControl(shard, std::move(msg));
}

void RegionWorkerPool::PostStreamBroken(uint64_t stream_id, const Status& status) {
  for (auto& shard : shards_) {
    Message msg;
    msg.kind = Message::Kind::kStreamBroken;
    msg.stream_id = stream_id;
    msg.status = status;
    PostControl(*shard, std::move(msg));
  }
}

void RegionWorkerPool::PostDropRun(uint64_t request_id) {
  for (auto& shard : shards_) {
    Message msg;
    msg.kind = Message::Kind::kDropRun;
    msg.request_id = request_id;
    PostControl(*shard, std::move(msg));
  }
}

void RegionWorkerPool::PostSendFailed(uint64_t request_id, RegionId region, uint64_t stream_id,
                                      const Status& status) {
  Message msg;
  msg.kind = Message::Kind::kSendFailed;
  msg.request_id = request_id;
  msg.region_id = region.value();
  msg.stream_id = stream_id;
  msg.status = status;
  PostControl(ShardOf(region.value()), std::move(msg));
}

void RegionWorkerPool::Run(Shard* shard, const StopToken& token) {
  while (true) {
    Message msg;
    {
      MutexLock lock(&shard->mu);
      while (!shard->closed && shard->control.empty() && shard->data.empty()) {
        shard->worker_waiting = true;
        shard->not_empty.Wait(&shard->mu);
        shard->worker_waiting = false;
      }
      if (shard->closed) break;
      if (!shard->control.empty()) {
        msg = std::move(shard->control.front());
        shard->control.pop_front();
      } else {
        msg = std::move(shard->data.front());
        shard->data.pop_front();
        // Wake blocked producers only once the queue is half empty, so that
        // a full queue does not cost a wake-up per message.
        if (shard->producers_waiting > 0 && shard->data.size() <= queue_capacity_ / 2) {
          shard->not_full.SignalAll();
        }
      }
    }
    Handle(shard, msg, token);
  }
  shard->states.clear();
  shard->num_states.store(0);
}

void RegionWorkerPool::Handle(Shard* shard, Message& msg, const StopToken& token) {
  switch (msg.kind) {
    case Message::Kind::kEvents:
      HandleEvents(shard, msg.stream_id, msg.events, token);
      return;
    case Message::Kind::kResolved:
      HandleResolved(shard, msg.stream_id, msg.request_id, msg.regions, msg.ts, token);
      return;
    case Message::Kind::kStart: {
      if (msg.state->run->stopped.load()) {
        host_->OnRegionDropped(*msg.state);
        return;
      }
      std::pair<uint64_t, uint64_t> key{msg.state->run->request_id, msg.state->region.id.value()};
      auto [it, inserted] = shard->states.try_emplace(key, nullptr);
      if (!inserted) {
        // Our own scheduling bug: the region is already served for this run.
        LOG_ERROR("region {} started twice for request {}", key.second, key.first);
      }
      it->second = std::move(msg.state);
      shard->num_states.store(shard->states.size(), std::memory_order_relaxed);
      return;
    }
    case Message::Kind::kStreamBroken: {
      std::vector<std::pair<uint64_t, uint64_t>> broken;
      for (const auto& [key, state] : shard->states) {
        if (state->stream_id == msg.stream_id) broken.push_back(key);
      }
      for (const auto& key : broken) {
        RegionFailure failure{RegionFailure::Kind::kStreamError, {}, msg.status};
        FailState(shard, key.first, key.second, std::move(failure));
      }
      return;
    }
    case Message::Kind::kDropRun: {
      auto begin = shard->states.lower_bound({msg.request_id, 0});
      auto end = shard->states.lower_bound({msg.request_id + 1, 0});
      for (auto it = begin; it != end; ++it) host_->OnRegionDropped(*it->second);
      shard->states.erase(begin, end);
      shard->num_states.store(shard->states.size(), std::memory_order_relaxed);
      return;
    }
    case Message::Kind::kSendFailed: {
      auto it = shard->states.find({msg.request_id, msg.region_id});
      if (it == shard->states.end() || it->second->stream_id != msg.stream_id) return;
      RegionFailure failure{RegionFailure::Kind::kStreamError, {}, msg.status};
      FailState(shard, msg.request_id, msg.region_id, std::move(failure));
      return;
    }
  }
}

void RegionWorkerPool::FailState(Shard* shard, uint64_t request_id, uint64_t region_id,
                                 RegionFailure failure) {
  auto it = shard->states.find({request_id, region_id});
  if (it == shard->states.end()) return;
  std::unique_ptr<RegionState> state = std::move(it->second);
  shard->states.erase(it);
  shard->num_states.store(shard->states.size(), std::memory_order_relaxed);
  host_->OnRegionFailed(std::move(state), std::move(failure));
}

void RegionWorkerPool::HandleEvents(Shard* shard, uint64_t stream_id,
                                    const std::vector<RegionEventRef>& events,
                                    const StopToken& token) {
  // Changes per run, handed over in one batch per run at the end (or before a
  // legacy per-event resolved ts, which must not overtake them).
  std::vector<std::pair<std::shared_ptr<SubscriptionRun>, KvBatch>> batches;
  auto flush = [&] {
    for (auto& [run, batch] : batches) {
      if (!batch.empty() && !run->stopped.load()) host_->EnqueueData(*run, std::move(batch), token);
    }
    batches.clear();
  };
  auto batch_of = [&](const std::shared_ptr<SubscriptionRun>& run) -> KvBatch& {
    for (auto& [r, batch] : batches) {
      if (r == run) return batch;
    }
    return batches.emplace_back(run, KvBatch{}).second;
  };
  DecodedRegionEvent event;
  for (const RegionEventRef& ref : events) {
    auto it = shard->states.find({ref.request_id, ref.region_id});
    if (it == shard->states.end() || it->second->stream_id != stream_id) {
      LOG_DEBUG("event for unknown region {} request {}", ref.region_id, ref.request_id);
      continue;
    }
    RegionState& state = *it->second;
    if (state.run->stopped.load()) continue;
    Status decoded = shard->decoder.Decode(ref, &event);
    if (!decoded.ok()) {
      host_->FailRun(state.run, decoded.WithContext("region " + std::to_string(ref.region_id)));
      continue;
    }
    switch (event.kind) {
      case RegionEventRef::Kind::kError: {
        RegionFailure failure{RegionFailure::Kind::kRegionError, std::move(event.error),
                              Status::Ok()};
        FailState(shard, ref.request_id, ref.region_id, std::move(failure));
        break;
      }
      case RegionEventRef::Kind::kEntries:
        HandleRows(state, *event.rows, &batch_of(state.run));
        break;
      case RegionEventRef::Kind::kResolvedTs:
        flush();
        if (state.matcher.AdvanceResolvedTs(Ts(event.resolved_ts))) {
          state.run->lock.UpdateResolvedTs(state.region.id, Ts(event.resolved_ts));
          host_->MaybeAdvance(*state.run, token);
        }
        break;
      case RegionEventRef::Kind::kNone:
      case RegionEventRef::Kind::kAdmin:
      case RegionEventRef::Kind::kLongTxn:
        break;  // Nothing for us.
    }
  }
  flush();
}

void RegionWorkerPool::HandleRows(RegionState& state, const std::vector<RowView>& rows,
                                  KvBatch* batch) {
  // Sized once for the first event; later events of the same message (often
  // hundreds) let push_back grow it geometrically. An exact reserve per
  // event would move the whole batch each time.
  if (batch->empty()) batch->reserve(rows.size());
  for (const RowView& row : rows) {
    Status status = state.matcher.Handle(row, batch);
    if (!status.ok()) {
      host_->FailRun(state.run,
                     status.WithContext("region " + std::to_string(state.region.id.value())));
      return;
    }
    if (!state.initialized && state.matcher.initialized()) {
      state.initialized = true;
      state.attempts = 0;
      state.run->lock.MarkInitialized(state.region.id);
      host_->OnRegionInitialized(state);
    }
  }
}

void RegionWorkerPool::HandleResolved(Shard* shard, uint64_t stream_id, uint64_t request_id,
                                      const std::vector<uint64_t>& regions, Ts ts,
                                      const StopToken& token) {
  std::vector<SubscriptionRun*> touched;
  for (uint64_t region : regions) {
    auto it = shard->states.find({request_id, region});
    if (it == shard->states.end() || it->second->stream_id != stream_id) continue;
    RegionState& state = *it->second;
    if (!state.matcher.AdvanceResolvedTs(ts)) continue;
    state.run->lock.UpdateResolvedTs(state.region.id, ts);
    if (std::find(touched.begin(), touched.end(), state.run.get()) == touched.end()) {
      touched.push_back(state.run.get());
    }
  }
  for (SubscriptionRun* run : touched) {
    if (!run->stopped.load()) host_->MaybeAdvance(*run, token);
  }
}

}  // namespace sluice::logpuller
