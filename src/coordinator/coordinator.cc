// Coordinator: construction, recovery and the lifecycle API. Placement,
// statuses, errors and GC are in coordinator_schedule.cc.
#include "coordinator/coordinator.h"

#include <fmt/format.h>

#include <chrono>

#include "common/logging.h"

namespace sluice::coordinator {
namespace {

constexpr size_t kMaxNameBytes = 128;

Status WrongState(const meta::ChangefeedInfo& info, std::string_view op) {
  return InvalidArgument(fmt::format("cannot {} changefeed {} in state {}", op, info.id.ToString(),
                                     meta::FeedStateName(info.state)));
}

Status ValidateNew(const meta::ChangefeedInfo& info) {
  if (!meta::IsValidChangefeedName(info.id.name) || info.id.name.size() > kMaxNameBytes) {
    return InvalidArgument(
        fmt::format("invalid changefeed id \"{}\": want "
                    "[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*, at most 128 bytes",
                    info.id.name.substr(0, 160)));
  }
  if (!meta::IsValidChangefeedName(info.id.ns)) {
    return InvalidArgument(fmt::format("invalid namespace \"{}\"", info.id.ns.substr(0, 160)));
  }
  if (info.sink_uri.empty()) return InvalidArgument("sink uri is empty");
  return Status::Ok();
}

Status ValidateTarget(Ts start_ts, Ts target_ts) {
  if (target_ts.value() != 0 && target_ts < start_ts) {
    return InvalidArgument(
        fmt::format("target ts {} is before start ts {}", target_ts.value(), start_ts.value()));
  }
  return Status::Ok();
}

}  // namespace

Coordinator::Coordinator(CoordinatorOptions options)
    : options_(std::move(options)), gc_(options_.gc_updater, options_.gc) {}

Result<std::unique_ptr<Coordinator>> Coordinator::Open(CoordinatorOptions options) {
  if (options.clock == nullptr || options.meta == nullptr || options.maintainers == nullptr ||
      options.nodes == nullptr || options.tso == nullptr || options.gc_updater == nullptr) {
    return InvalidArgument("coordinator options miss a dependency");
  }
  std::unique_ptr<Coordinator> c(new Coordinator(std::move(options)));
  MutexLock lock(&c->mu_);
  RETURN_IF_ERROR(c->Load());
  return c;
}

Status Coordinator::Load() {
  Result<meta::ChangefeedList> list = options_.meta->ListChangefeeds();
  if (!list.ok()) return list.status().WithContext("load changefeeds");
  for (const meta::BadEntry& bad : list->bad) {
    LOG_ERROR("skipping changefeed key {}: {}", bad.key, bad.error.ToString());
  }
  const Clock::TimePoint now = options_.clock->Now();
  for (meta::Versioned<meta::ChangefeedInfo>& v : list->feeds) {
    Feed feed;
    feed.info = std::move(v.value);
    feed.info_rev = v.mod_revision;
    feed.retry_at = now;
    feed.next_backoff = options_.backoff_initial;
    Result<meta::Versioned<meta::ChangefeedStatus>> status =
        options_.meta->GetChangefeedStatus(feed.info.id);
    if (status.ok()) {
      feed.status = status->value;
      feed.status_rev = status->mod_revision;
    } else if (status.status().code() == Code::kNotFound) {
      feed.status.checkpoint_ts = feed.info.start_ts;
    } else {
      LOG_ERROR("skipping changefeed {}: {}", feed.info.id.ToString(), status.status().ToString());
      continue;
    }
    const meta::ChangefeedId id = feed.info.id;
    feeds_.emplace(id, std::move(feed));
  }
  LOG_INFO("coordinator loaded {} changefeeds", feeds_.size());
  return Status::Ok();
}

Result<Coordinator::Feed*> Coordinator::Find(const meta::ChangefeedId& id) {
  auto it = feeds_.find(id);
  if (it == feeds_.end()) return NotFound("changefeed " + id.ToString() + " does not exist");
  return &it->second;
}

Status Coordinator::CheckStartTs(Ts ts, Ts now_ts) {
  if (ts > now_ts) {
    return InvalidArgument(
        fmt::format("start ts {} is beyond the current tso {}", ts.value(), now_ts.value()));
  }
  return gc_.CheckStartTs(ts);
}

Status Coordinator::CreateChangefeed(meta::ChangefeedInfo info) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(ValidateNew(info));
  if (feeds_.count(info.id) > 0) {
    return AlreadyExists("changefeed " + info.id.ToString() + " already exists");
  }
  Result<Ts> now_ts = options_.tso->GetTs();
  if (!now_ts.ok()) return now_ts.status().WithContext("get tso");
  if (info.start_ts.value() == 0) info.start_ts = *now_ts;
  RETURN_IF_ERROR(ValidateTarget(info.start_ts, info.target_ts));
  RETURN_IF_ERROR(CheckStartTs(info.start_ts, *now_ts));

  info.state = meta::FeedState::kNormal;
  info.admin_job_type = meta::AdminJobType::kNone;
  info.error.reset();
  info.warning.reset();
  info.epoch = MaintainerEpoch();
  info.create_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            options_.clock->WallNow().time_since_epoch())
                            .count();
  meta::ChangefeedStatus status;
  status.checkpoint_ts = info.start_ts;
  RETURN_IF_ERROR(options_.meta->CreateChangefeed(info, status).status());
  Result<meta::Versioned<meta::ChangefeedInfo>> stored = options_.meta->GetChangefeedInfo(info.id);
  Result<meta::Versioned<meta::ChangefeedStatus>> stored_status =
      options_.meta->GetChangefeedStatus(info.id);
  if (!stored.ok()) return stored.status();
  if (!stored_status.ok()) return stored_status.status();

  Feed feed;
  feed.info = stored->value;
  feed.info_rev = stored->mod_revision;
  feed.status = stored_status->value;
  feed.status_rev = stored_status->mod_revision;
  feed.is_new = true;
  feed.retry_at = options_.clock->Now();
  feed.next_backoff = options_.backoff_initial;
  Feed* f = &feeds_.emplace(info.id, std::move(feed)).first->second;
  LOG_INFO("created changefeed {} at start ts {}", info.id.ToString(), info.start_ts.value());
  UpdateGc(/*force=*/true);
  Status started = StartGeneration(f);
  if (!started.ok()) {
    LOG_WARN("changefeed {} created but not started yet: {}", info.id.ToString(),
             started.ToString());
  }
  return Status::Ok();
}

Status Coordinator::PauseChangefeed(const meta::ChangefeedId& id) {
  MutexLock lock(&mu_);
  Result<Feed*> feed = Find(id);
  if (!feed.ok()) return feed.status();
  Feed* f = *feed;
  if (f->info.state == meta::FeedState::kStopped) return Status::Ok();
  if (f->info.state == meta::FeedState::kFinished) return WrongState(f->info, "pause");
  // A failed changefeed keeps its error while paused.
  return StopWithState(f, meta::FeedState::kStopped, f->info.error, std::nullopt);
}

Status Coordinator::ResumeChangefeed(const meta::ChangefeedId& id,
                                     std::optional<Ts> overwrite_checkpoint) {
  MutexLock lock(&mu_);
  Result<Feed*> feed = Find(id);
  if (!feed.ok()) return feed.status();
  Feed* f = *feed;
  const meta::FeedState state = f->info.state;
  if (state != meta::FeedState::kStopped && state != meta::FeedState::kFailed &&
      state != meta::FeedState::kWarning) {
    return WrongState(f->info, "resume");
  }
  if (overwrite_checkpoint) {
    Result<Ts> now_ts = options_.tso->GetTs();
    if (!now_ts.ok()) return now_ts.status().WithContext("get tso");
    RETURN_IF_ERROR(CheckStartTs(*overwrite_checkpoint, *now_ts));
  }
  meta::ChangefeedInfo info = f->info;
  info.state = meta::FeedState::kNormal;
  info.admin_job_type = meta::AdminJobType::kResume;
  info.error.reset();
  info.warning.reset();
  RETURN_IF_ERROR(PersistInfo(f, std::move(info)));
  StopGeneration(f, /*removed=*/false);  // A warning feed may still be placed.
  if (overwrite_checkpoint) {
    RETURN_IF_ERROR(PersistCheckpoint(f, *overwrite_checkpoint, /*allow_back=*/true));
  }
  f->first_error_at.reset();
  f->next_backoff = options_.backoff_initial;
  f->retry_at = options_.clock->Now();
  LOG_INFO("resumed changefeed {}", id.ToString());
  Status started = StartGeneration(f);
  if (started.code() == Code::kAborted) return started;
  return Status::Ok();  // Otherwise Tick() places it when a node is there.
}

Status Coordinator::UpdateChangefeed(const meta::ChangefeedId& id, const ChangefeedUpdate& update) {
  MutexLock lock(&mu_);
  Result<Feed*> feed = Find(id);
  if (!feed.ok()) return feed.status();
  Feed* f = *feed;
  if (f->info.state != meta::FeedState::kStopped && f->info.state != meta::FeedState::kFailed) {
    return WrongState(f->info, "update (pause it first)");
  }
  meta::ChangefeedInfo info = f->info;
  if (update.sink_uri) info.sink_uri = *update.sink_uri;
  if (update.target_ts) info.target_ts = *update.target_ts;
  if (update.config_json) info.config_json = *update.config_json;
  if (info.sink_uri.empty()) return InvalidArgument("sink uri is empty");
  RETURN_IF_ERROR(ValidateTarget(f->status.checkpoint_ts, info.target_ts));
  return PersistInfo(f, std::move(info));
}

Status Coordinator::RemoveChangefeed(const meta::ChangefeedId& id) {
  MutexLock lock(&mu_);
  Result<Feed*> feed = Find(id);
  if (!feed.ok()) return feed.status();
  Feed* f = *feed;
  Result<meta::Revision> removed = options_.meta->RemoveChangefeed(id, f->info_rev);
  if (!removed.ok()) {
    if (removed.status().code() == Code::kAborted) {
      ++stats_.cas_conflicts;
      Reload(f);
    }
    return removed.status();
  }
  StopGeneration(f, /*removed=*/true);
  feeds_.erase(id);
  LOG_INFO("removed changefeed {}", id.ToString());
  return Status::Ok();
}

Status Coordinator::MoveTable(const meta::ChangefeedId& id, int64_t table_id,
                              const NodeId& target) {
  MoveTableRequest request{id, MaintainerEpoch(), table_id, target};
  NodeId node;
  {
    MutexLock lock(&mu_);
    Result<Feed*> feed = Find(id);
    if (!feed.ok()) return feed.status();
    if (!(*feed)->node.has_value()) {
      return Unavailable("changefeed " + id.ToString() + " has no running maintainer now");
    }
    node = *(*feed)->node;
    request.epoch = (*feed)->node_epoch;
  }
  // Without the lock: the maintainer's host reports statuses to this
  // coordinator while it answers.
  return options_.maintainers->MoveTable(node, request);
}

std::vector<ChangefeedView> Coordinator::ListChangefeeds() const {
  MutexLock lock(&mu_);
  std::vector<ChangefeedView> views;
  views.reserve(feeds_.size());
  for (const auto& [id, feed] : feeds_) views.push_back(View(feed));
  return views;
}

Result<ChangefeedView> Coordinator::GetChangefeed(const meta::ChangefeedId& id) const {
  MutexLock lock(&mu_);
  auto it = feeds_.find(id);
  if (it == feeds_.end()) return NotFound("changefeed " + id.ToString() + " does not exist");
  return View(it->second);
}

CoordinatorStats Coordinator::Stats() const {
  MutexLock lock(&mu_);
  CoordinatorStats stats = stats_;
  stats.gc_updates = gc_.updates();
  stats.gc_failures = gc_.failures();
  stats.last_gc_error = gc_.last_error();
  stats.gc_safepoint = gc_.last_safepoint();
  return stats;
}

ChangefeedView Coordinator::View(const Feed& feed) {
  return ChangefeedView{feed.info, feed.status, feed.node};
}

bool Coordinator::ShouldRun(const Feed& feed) {
  const meta::FeedState s = feed.info.state;
  return (s == meta::FeedState::kNormal || s == meta::FeedState::kWarning) &&
         feed.info.admin_job_type != meta::AdminJobType::kStop;
}

}  // namespace sluice::coordinator
