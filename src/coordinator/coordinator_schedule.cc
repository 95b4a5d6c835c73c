// Coordinator: maintainer generations (placement and epochs), maintainer
// statuses, error states with backoff, node moves and the GC safepoint.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "common/logging.h"
#include "coordinator/coordinator.h"

namespace sluice::coordinator {
namespace {

// How long to wait before starting another generation after a send failed.
constexpr Clock::Duration kResendInterval = std::chrono::seconds(1);

}  // namespace

Status Coordinator::PersistInfo(Feed* feed, meta::ChangefeedInfo info) {
  Result<meta::Revision> rev = options_.meta->UpdateChangefeedInfo(info, feed->info_rev);
  if (!rev.ok()) {
    if (rev.status().code() == Code::kAborted) {
      ++stats_.cas_conflicts;
      Reload(feed);
    }
    return rev.status().WithContext("persist changefeed " + feed->info.id.ToString());
  }
  feed->info = std::move(info);
  feed->info_rev = *rev;
  return Status::Ok();
}

Status Coordinator::PersistCheckpoint(Feed* feed, Ts checkpoint, bool allow_back) {
  if (!allow_back && checkpoint <= feed->status.checkpoint_ts) return Status::Ok();
  meta::ChangefeedStatus status = feed->status;
  status.checkpoint_ts = checkpoint;
  Result<meta::Revision> rev =
      options_.meta->UpdateChangefeedStatus(feed->info.id, status, feed->status_rev);
  if (!rev.ok()) {
    if (rev.status().code() == Code::kAborted) {
      ++stats_.cas_conflicts;
      Reload(feed);
    }
    return rev.status().WithContext("persist checkpoint of " + feed->info.id.ToString());
  }
  feed->status = std::move(status);
  feed->status_rev = *rev;
  return Status::Ok();
}

void Coordinator::Reload(Feed* feed) {
  const meta::ChangefeedId id = feed->info.id;
  Result<meta::Versioned<meta::ChangefeedInfo>> info = options_.meta->GetChangefeedInfo(id);
  if (info.ok()) {
    feed->info = std::move(info->value);
    feed->info_rev = info->mod_revision;
  } else if (info.status().code() == Code::kNotFound) {
    feed->info.state = meta::FeedState::kRemoved;  // Tick() forgets it.
  } else {
    LOG_WARN("re-read of changefeed {} failed: {}", id.ToString(), info.status().ToString());
  }
  Result<meta::Versioned<meta::ChangefeedStatus>> status = options_.meta->GetChangefeedStatus(id);
  if (status.ok() && status->value.checkpoint_ts >= feed->status.checkpoint_ts) {
    feed->status = std::move(status->value);
    feed->status_rev = status->mod_revision;
  } else if (status.ok()) {
    feed->status_rev = status->mod_revision;  // Ours is ahead: keep it, write over.
  }
  // Another writer closed our generation, or the changefeed should not run.
  if (feed->node && (feed->node_epoch != feed->info.epoch || !ShouldRun(*feed))) {
    StopGeneration(feed, /*removed=*/feed->info.state == meta::FeedState::kRemoved);
  }
}

std::optional<NodeId> Coordinator::PickNode() {
  std::vector<NodeId> alive = options_.nodes->AliveNodes();
  if (alive.empty()) return std::nullopt;
  std::map<NodeId, size_t> load;
  for (const NodeId& node : alive) load[node] = 0;
  for (const auto& [id, feed] : feeds_) {
    if (feed.node && load.count(*feed.node) > 0) ++load[*feed.node];
  }
  auto best = std::min_element(load.begin(), load.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return best->first;
}

Status Coordinator::StartGeneration(Feed* feed) {
  if (!ShouldRun(*feed) || feed->node) return Status::Ok();
  std::optional<NodeId> node = PickNode();
  if (!node) return Unavailable("no alive node to place changefeed " + feed->info.id.ToString());
  // Like TiCDC, a TSO candidate keeps epochs growing across a delete and
  // re-create; without one the store still makes it current + 1.
  Result<Ts> tso = options_.tso->GetTs();
  const MaintainerEpoch candidate(tso.ok() ? tso->value() : 0);
  Result<meta::EpochBump> bump =
      options_.meta->BumpMaintainerEpoch(feed->info.id, feed->info_rev, candidate);
  if (!bump.ok()) {
    if (bump.status().code() == Code::kAborted) {
      ++stats_.cas_conflicts;
      Reload(feed);
    }
    return bump.status().WithContext("bump epoch of " + feed->info.id.ToString());
  }
  feed->info.epoch = bump->epoch;
  feed->info_rev = bump->revision;
  AddMaintainerRequest request{feed->info.id, feed->info, feed->status.checkpoint_ts, bump->epoch,
                               feed->is_new};
  Status sent = options_.maintainers->AddMaintainer(*node, request);
  if (!sent.ok()) {
    feed->retry_at = options_.clock->Now() + kResendInterval;
    return sent.WithContext("add maintainer on " + node->value());
  }
  feed->node = *node;
  feed->node_epoch = bump->epoch;
  feed->is_new = false;
  ++stats_.generations_started;
  LOG_INFO("changefeed {} maintainer on {} with epoch {}", feed->info.id.ToString(), node->value(),
           bump->epoch.value());
  return Status::Ok();
}

void Coordinator::StopGeneration(Feed* feed, bool removed) {
  if (!feed->node) return;
  RemoveMaintainerRequest request{feed->info.id, feed->node_epoch, /*cascade=*/removed, removed};
  Status sent = options_.maintainers->RemoveMaintainer(*feed->node, request);
  if (!sent.ok()) {
    // The closed epoch fences that maintainer anyway.
    LOG_WARN("remove maintainer of {} on {}: {}", feed->info.id.ToString(), feed->node->value(),
             sent.ToString());
  }
  feed->node.reset();
}

Status Coordinator::StopWithState(Feed* feed, meta::FeedState state,
                                  std::optional<meta::RunningError> error,
                                  std::optional<meta::RunningError> warning) {
  meta::ChangefeedInfo info = feed->info;
  info.state = state;
  info.error = std::move(error);
  info.warning = std::move(warning);
  if (state == meta::FeedState::kStopped) info.admin_job_type = meta::AdminJobType::kStop;
  if (state == meta::FeedState::kFinished) info.admin_job_type = meta::AdminJobType::kFinish;
  // Close the running generation: its late statuses no longer match.
  info.epoch = MaintainerEpoch(info.epoch.value() + 1);
  RETURN_IF_ERROR(PersistInfo(feed, std::move(info)));
  StopGeneration(feed, /*removed=*/false);
  LOG_INFO("changefeed {} is now {}", feed->info.id.ToString(), meta::FeedStateName(state));
  return Status::Ok();
}

meta::RunningError Coordinator::ToRunningError(const Status& error) const {
  meta::RunningError e;
  e.time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  options_.clock->WallNow().time_since_epoch())
                  .count();
  e.addr = options_.self_addr;
  e.code = std::string(CodeName(error.code()));
  e.message = std::string(error.message());
  return e;
}

void Coordinator::HandleError(Feed* feed, const Status& error) {
  const Clock::TimePoint now = options_.clock->Now();
  const meta::RunningError running = ToRunningError(error);
  if (!feed->first_error_at) feed->first_error_at = now;
  Status persisted;
  Clock::Duration bound = options_.error_bound;
  if (options_.error_bound_of) {
    const Clock::Duration own = options_.error_bound_of(feed->info);
    if (own > Clock::Duration::zero()) bound = own;
  }
  if (!error.retryable() || now - *feed->first_error_at >= bound) {
    persisted = StopWithState(feed, meta::FeedState::kFailed, running, std::nullopt);
  } else {
    persisted = StopWithState(feed, meta::FeedState::kWarning, std::nullopt, running);
    feed->retry_at = now + feed->next_backoff;
    feed->next_backoff = std::min(feed->next_backoff * 2, options_.backoff_max);
  }
  if (!persisted.ok()) {
    LOG_WARN("changefeed {} error {} not recorded: {}", feed->info.id.ToString(), error.ToString(),
             persisted.ToString());
  }
}

void Coordinator::HandleProgress(Feed* feed, const MaintainerStatus& status) {
  const bool advanced = status.checkpoint_ts > feed->status.checkpoint_ts;
  Status persisted = PersistCheckpoint(feed, status.checkpoint_ts, /*allow_back=*/false);
  if (!persisted.ok()) LOG_WARN("{}", persisted.ToString());
  const Ts target = feed->info.target_ts;
  if (target.value() != 0 && feed->status.checkpoint_ts >= target) {
    StopWithState(feed, meta::FeedState::kFinished, std::nullopt, std::nullopt).IgnoreError();
    return;
  }
  if (feed->info.state == meta::FeedState::kWarning && status.bootstrap_done && advanced) {
    meta::ChangefeedInfo info = feed->info;
    info.state = meta::FeedState::kNormal;
    info.warning.reset();
    if (PersistInfo(feed, std::move(info)).ok()) {
      feed->first_error_at.reset();
      feed->next_backoff = options_.backoff_initial;
    }
  }
}

void Coordinator::OnMaintainerStatus(const NodeId& node, const MaintainerStatus& status) {
  MutexLock lock(&mu_);
  auto it = feeds_.find(status.id);
  if (it == feeds_.end()) {
    ++stats_.unknown_statuses_dropped;
    return;
  }
  Feed* feed = &it->second;
  if (!feed->node || *feed->node != node || feed->node_epoch != status.epoch ||
      feed->info.epoch != status.epoch || !ShouldRun(*feed)) {
    ++stats_.stale_statuses_dropped;
    return;
  }
  if (!status.error.ok()) {
    PersistCheckpoint(feed, status.checkpoint_ts, /*allow_back=*/false).IgnoreError();
    HandleError(feed, status.error);
    return;
  }
  if (status.state == MaintainerState::kStopped) {
    feed->node.reset();  // Stopped on its own: Tick() starts a new generation.
    return;
  }
  HandleProgress(feed, status);
}

void Coordinator::OnNodeRemoved(const NodeId& node) {
  MutexLock lock(&mu_);
  for (auto& [id, feed] : feeds_) {
    if (!feed.node || *feed.node != node) continue;
    feed.node.reset();  // The node is gone: nothing to send it.
    Status started = StartGeneration(&feed);
    if (!started.ok()) LOG_WARN("move of {}: {}", id.ToString(), started.ToString());
  }
}

void Coordinator::MoveOffDeadNodes() {
  std::vector<NodeId> alive_list = options_.nodes->AliveNodes();
  const std::set<NodeId> alive(alive_list.begin(), alive_list.end());
  for (auto& [id, feed] : feeds_) {
    if (feed.node && alive.count(*feed.node) == 0) feed.node.reset();
  }
}

void Coordinator::Tick() {
  MutexLock lock(&mu_);
  const Clock::TimePoint now = options_.clock->Now();
  std::erase_if(feeds_,
                [](const auto& kv) { return kv.second.info.state == meta::FeedState::kRemoved; });
  MoveOffDeadNodes();
  for (auto& [id, feed] : feeds_) {
    if (!ShouldRun(feed) || feed.node || now < feed.retry_at) continue;
    Status started = StartGeneration(&feed);
    if (!started.ok()) LOG_WARN("start of {}: {}", id.ToString(), started.ToString());
  }
  UpdateGc(/*force=*/false);
}

void Coordinator::UpdateGc(bool force) {
  std::optional<Ts> min_checkpoint;
  for (const auto& [id, feed] : feeds_) {
    const meta::FeedState s = feed.info.state;
    if (s == meta::FeedState::kFinished || s == meta::FeedState::kRemoved) continue;
    if (!min_checkpoint || feed.status.checkpoint_ts < *min_checkpoint) {
      min_checkpoint = feed.status.checkpoint_ts;
    }
  }
  if (!min_checkpoint) return;
  gc_.MaybeUpdate(*min_checkpoint, options_.clock->Now(), force).IgnoreError();
}

}  // namespace sluice::coordinator
