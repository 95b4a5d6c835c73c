#include "maintainer/barrier.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "common/logging.h"

namespace sluice::maintainer {

using dispatcher::BarrierAction;
using dispatcher::BlockStage;

namespace {

// The table id by which a kNormal event names the table trigger.

bool Intersects(const std::set<DispatcherId>& a, const std::set<DispatcherId>& b) {
  for (DispatcherId id : a) {
    if (b.count(id) > 0) return true;
  }
  return false;
}

// Whether a dispatcher at `checkpoint` has moved past the event.
bool IsPast(const BlockEventKey& key, Ts checkpoint) {
  return key.is_syncpoint ? checkpoint > key.block_ts : checkpoint >= key.block_ts;
}

}  // namespace

Barrier::Barrier(const SpanController* spans, Callbacks callbacks, Clock::Duration resend_interval)
    : spans_(spans), callbacks_(std::move(callbacks)), resend_interval_(resend_interval) {}

void Barrier::OnBlockStatus(const BlockReport& report, Clock::TimePoint now) {
  BlockEventKey key{report.block_ts, report.is_syncpoint};
  if (report.stage == BlockStage::kWaiting) {
    if (finished_.count(key) > 0) {
      SendGrouped(key, BarrierAction::kPass, {report.dispatcher_id});  // A late report.
      return;
    }
    auto [it, created] = events_.try_emplace(key);
    Event& e = it->second;
    if (created) {
      e.blocked = report.blocked_tables;
      e.adds = report.tables_to_add;
      e.drops = report.tables_to_drop;
    }
    if (e.writer_done) {
      if (report.dispatcher_id != *e.writer) e.passers.insert(report.dispatcher_id);
      SendGrouped(key, BarrierAction::kPass, {report.dispatcher_id});
      return;
    }
    e.waiting.insert(report.dispatcher_id);
    TryStartAll(now);
    return;
  }
  if (report.stage != BlockStage::kDone) return;
  auto it = events_.find(key);
  if (it == events_.end()) return;
  Event& e = it->second;
  if (!e.writer_done && e.writer == report.dispatcher_id) {
    WriterDone(key, &e, now);
  } else if (e.writer_done) {
    PassDone(key, report.dispatcher_id, now);
  }
}

void Barrier::OnProgress(DispatcherId id, Ts checkpoint, Clock::TimePoint now) {
  std::vector<BlockEventKey> keys;
  for (const auto& [key, e] : events_) {
    if (IsPast(key, checkpoint)) keys.push_back(key);
  }
  for (const BlockEventKey& key : keys) {
    auto it = events_.find(key);
    if (it == events_.end()) continue;
    Event& e = it->second;
    if (!e.writer_done && e.writer == id) {
      WriterDone(key, &e, now);  // The DONE report was lost; the checkpoint says it.
    } else if (e.writer_done) {
      PassDone(key, id, now);
    }
  }
}

std::set<DispatcherId> Barrier::Involved(const event::BlockedTables& blocked) const {
  std::set<DispatcherId> ids;
  std::vector<DispatcherId> replicas;
  switch (blocked.influence) {
    case event::InfluenceType::kNormal:
      for (int64_t table_id : blocked.table_ids) {
        if (table_id == event::kTableTriggerTableId) {
          ids.insert(spans_->trigger_id());
        } else if (const Replica* r = spans_->FindTable(table_id); r != nullptr) {
          ids.insert(r->id);
        }
      }
      return ids;
    case event::InfluenceType::kDb:
      replicas = spans_->OfSchema(blocked.schema_id);
      break;
    case event::InfluenceType::kAll:
      replicas = spans_->All();
      break;
  }
  ids.insert(replicas.begin(), replicas.end());
  ids.insert(spans_->trigger_id());
  return ids;
}

bool Barrier::MustWait(const BlockEventKey& key, const Event& e,
                       const std::set<DispatcherId>& ids) const {
  for (const auto& [earlier_key, earlier] : events_) {
    if (!(earlier_key < key)) break;
    if (e.blocked.influence != event::InfluenceType::kNormal &&
        (!earlier.adds.empty() || !earlier.drops.empty())) {
      return true;  // The table set this event reaches is not known yet.
    }
    if (Intersects(ids, earlier.waiting) || Intersects(ids, earlier.involved)) return true;
  }
  return false;
}

void Barrier::TryStartAll(Clock::TimePoint now) {
  for (auto& [key, e] : events_) {
    if (e.writer.has_value()) continue;
    std::set<DispatcherId> ids = Involved(e.blocked);
    if (!std::includes(e.waiting.begin(), e.waiting.end(), ids.begin(), ids.end())) continue;
    ids.insert(e.waiting.begin(), e.waiting.end());
    if (MustWait(key, e, ids)) continue;
    e.involved = ids;
    e.writer = ids.count(spans_->trigger_id()) > 0 ? spans_->trigger_id() : *ids.begin();
    e.last_sent = now;
    LOG_DEBUG("maintainer barrier writer picked; block_ts={} syncpoint={} writer={} involved={}",
              key.block_ts.value(), key.is_syncpoint, dispatchermanager::IdString(*e.writer),
              ids.size());
    SendGrouped(key, BarrierAction::kWrite, {*e.writer});
  }
}

void Barrier::WriterDone(const BlockEventKey& key, Event* e, Clock::TimePoint now) {
  e->writer_done = true;
  callbacks_.apply(key, e->drops, e->adds);
  for (DispatcherId id : e->involved) {
    if (id != *e->writer) e->passers.insert(id);
  }
  DropGone(e);
  e->last_sent = now;
  SendGrouped(key, BarrierAction::kPass, e->passers);
  FinishIfDone(key, now);
}

void Barrier::PassDone(const BlockEventKey& key, DispatcherId id, Clock::TimePoint now) {
  auto it = events_.find(key);
  if (it == events_.end()) return;
  it->second.passers.erase(id);
  FinishIfDone(key, now);
}

void Barrier::DropGone(Event* e) {
  std::erase_if(e->passers, [this](DispatcherId id) {
    return id != spans_->trigger_id() && spans_->Find(id) == nullptr;
  });
}

void Barrier::FinishIfDone(const BlockEventKey& key, Clock::TimePoint now) {
  auto it = events_.find(key);
  if (it == events_.end() || !it->second.writer_done || !it->second.passers.empty()) return;
  finished_[key] = *it->second.writer;
  events_.erase(it);
  TryStartAll(now);  // Later events may have waited for this one.
}

void Barrier::SendGrouped(const BlockEventKey& key, BarrierAction action,
                          const std::set<DispatcherId>& ids) {
  std::map<NodeId, std::vector<DispatcherId>> by_node;
  for (DispatcherId id : ids) {
    if (id == spans_->trigger_id()) {
      by_node[spans_->trigger_node()].push_back(id);
    } else if (const Replica* r = spans_->Find(id);
               r != nullptr && r->state != ReplicaState::kAbsent) {
      by_node[r->node].push_back(id);
    }
  }
  for (const auto& [node, list] : by_node) callbacks_.send(node, key, action, list);
}

void Barrier::Tick(Clock::TimePoint now) {
  std::vector<BlockEventKey> keys;
  for (const auto& [key, e] : events_) keys.push_back(key);
  for (const BlockEventKey& key : keys) {
    auto it = events_.find(key);
    if (it == events_.end()) continue;
    Event& e = it->second;
    if (!e.writer.has_value() || now - e.last_sent < resend_interval_) continue;
    e.last_sent = now;
    if (!e.writer_done) {
      SendGrouped(key, BarrierAction::kWrite, {*e.writer});
      continue;
    }
    DropGone(&e);
    SendGrouped(key, BarrierAction::kPass, e.passers);
    FinishIfDone(key, now);
  }
  TryStartAll(now);
}

void Barrier::Prune(Ts checkpoint) {
  std::erase_if(finished_, [checkpoint](const auto& e) { return e.first.block_ts < checkpoint; });
}

std::optional<Ts> Barrier::MinCheckpoint() const {
  if (events_.empty()) return std::nullopt;
  Ts ts = events_.begin()->first.block_ts;
  return Ts(ts.value() == 0 ? 0 : ts.value() - 1);
}

std::optional<DispatcherId> Barrier::WriterOf(const BlockEventKey& key) const {
  auto it = events_.find(key);
  if (it == events_.end()) return std::nullopt;
  return it->second.writer;
}

}  // namespace sluice::maintainer
