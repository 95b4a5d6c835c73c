#include "datapath/changefeed_runner.h"

#include <fmt/format.h>

#include <algorithm>

namespace sluice::testing {

Result<std::unique_ptr<ChangefeedRunner>> ChangefeedRunner::Start(RunnerOptions options) {
  std::unique_ptr<ChangefeedRunner> r(new ChangefeedRunner(std::move(options)));
  Status s = r->Init();
  if (!s.ok()) {
    r->Stop();
    return s;
  }
  return r;
}

ChangefeedRunner::~ChangefeedRunner() { Stop(); }

Status ChangefeedRunner::Init() {
  ASSIGN_OR_RETURN(info_.id, meta::ChangefeedId::Parse(options_.changefeed));
  info_.sink_uri = options_.sink_uri;
  info_.start_ts = options_.start_ts;
  info_.config_json = options_.config_json;
  info_.epoch = MaintainerEpoch(1);
  {
    MutexLock lock(&mu_);
    checkpoint_ = options_.start_ts;
  }
  node::NodeOptions o;
  o.self = NodeId("runner-node");
  o.deps.pd = options_.pd;
  o.deps.cache = options_.cache;
  o.deps.puller = options_.puller;
  o.deps.data_dir = options_.data_dir;
  o.deps.memory_budget = options_.memory_budget;
  o.deps.store_env = options_.store_env;
  o.deps.store_memtable_bytes = options_.store_memtable_bytes;
  o.deps.open_sink = options_.open_sink;
  o.lookup = [info = info_](const std::string& id) -> Result<meta::ChangefeedInfo> {
    if (id != info.id.ToString()) return NotFound("changefeed " + id);
    return info;
  };
  ASSIGN_OR_RETURN(node_, node::Node::Create(std::move(o)));
  RETURN_IF_ERROR(node_->Start(this));
  coordinator::AddMaintainerRequest add;
  add.id = info_.id;
  add.info = info_;
  add.checkpoint_ts = options_.start_ts;
  add.epoch = info_.epoch;
  add.is_new_changefeed = true;
  return node_->host()->AddMaintainer(node_->self(), add);
}

void ChangefeedRunner::Stop() {
  if (node_ != nullptr) node_->Stop();
}

void ChangefeedRunner::OnMaintainerStatus(const NodeId& /*node*/,
                                          const coordinator::MaintainerStatus& status) {
  MutexLock lock(&mu_);
  if (status.epoch != info_.epoch) return;
  if (status.checkpoint_ts > checkpoint_) checkpoint_ = status.checkpoint_ts;
  if (!status.error.ok()) {
    if (status_.ok()) status_ = status.error;
    const std::string text = status.error.ToString();
    if (std::none_of(errors_.begin(), errors_.end(),
                     [&](const Status& e) { return e.ToString() == text; })) {
      errors_.push_back(status.error);
    }
  }
  cv_.SignalAll();
}

Ts ChangefeedRunner::checkpoint() const {
  MutexLock lock(&mu_);
  return checkpoint_;
}

Status ChangefeedRunner::status() const {
  MutexLock lock(&mu_);
  return status_;
}

std::vector<Status> ChangefeedRunner::errors() const {
  MutexLock lock(&mu_);
  return errors_;
}

Status ChangefeedRunner::WaitCheckpoint(Ts ts, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (checkpoint_ < ts) {
    if (!status_.ok()) return status_;
    if (cv_.WaitUntil(&mu_, deadline) && checkpoint_ < ts) {
      return Timeout(fmt::format("checkpoint {} below {}", checkpoint_.value(), ts.value()));
    }
  }
  return Status::Ok();
}

std::shared_ptr<node::ChangefeedPath> ChangefeedRunner::Path() const {
  if (node_ == nullptr || node_->registry() == nullptr) return nullptr;
  std::vector<std::shared_ptr<node::ChangefeedPath>> paths =
      node_->registry()->PathsOf(info_.id.ToString());
  return paths.empty() ? nullptr : paths.front();
}

std::optional<Ts> ChangefeedRunner::TableCheckpoint(int64_t table_id) const {
  std::shared_ptr<node::ChangefeedPath> path = Path();
  if (path == nullptr) return std::nullopt;
  return path->TableCheckpoint(table_id);
}

eventstore::EventStoreStats ChangefeedRunner::store_stats() const {
  std::shared_ptr<node::ChangefeedPath> path = Path();
  return path == nullptr ? eventstore::EventStoreStats{} : path->store_stats();
}

}  // namespace sluice::testing
