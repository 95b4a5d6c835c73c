// ChangefeedRunner: one changefeed run on the shipping node (node::Node: the
// real MaintainerHost, Maintainer, dispatcher orchestrator, node control and
// ChangefeedPath) with the runner playing the coordinator: it adds one
// maintainer generation at the start ts and records the statuses the host
// reports (the changefeed checkpoint and its first error). The sink is the
// one the path opens from the sink URI, as `sluice server` opens it.
//
// Ownership: the PD client, region cache and puller are borrowed and must
// outlive the runner. Threads: those of the node; the public methods may be
// called from any thread, but not concurrently with Stop().
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "coordinator/interfaces.h"
#include "node/node.h"

namespace sluice::testing {

struct RunnerOptions {
  std::string data_dir;
  std::string changefeed = "default/scenario";  // "<namespace>/<name>".
  std::string sink_uri;
  std::string config_json;  // The replica config (JSON); empty: defaults.
  Ts start_ts;
  pd::PdClient* pd = nullptr;
  pd::RegionCache* cache = nullptr;
  logpuller::SpanSubscriber* puller = nullptr;
  size_t memory_budget = 8 << 20;  // Per dispatcher.
  std::shared_ptr<rocksdb::Env> store_env;
  size_t store_memtable_bytes = 0;
  // Opens the sink (null: node::OpenSink).
  std::function<Result<std::unique_ptr<sink::Sink>>(const node::SinkOpenOptions&)> open_sink;
};

class ChangefeedRunner final : public coordinator::MaintainerStatusListener {
 public:
  static Result<std::unique_ptr<ChangefeedRunner>> Start(RunnerOptions options);
  ~ChangefeedRunner() override;  // Stop()s.

  // Stops the node: the maintainer reports a last time, the dispatchers
  // close and the path flushes and closes its sink. Idempotent.
  void Stop();

  // Everything with commit ts <= checkpoint() is in the sink.
  Ts checkpoint() const EXCLUDES(mu_);
  // OK, or the first error the maintainer reported (a dispatcher's, the
  // sink's, the schema store's or the maintainer's own).
  Status status() const EXCLUDES(mu_);
  // Every distinct error reported, in the order first seen.
  std::vector<Status> errors() const EXCLUDES(mu_);
  // Waits until checkpoint() >= ts; the error if the changefeed fails first;
  // Timeout after `timeout`.
  Status WaitCheckpoint(Ts ts, std::chrono::milliseconds timeout) EXCLUDES(mu_);
  // The checkpoint of one table's dispatcher; nullopt if it has none.
  std::optional<Ts> TableCheckpoint(int64_t table_id) const;
  // The data path's event store counters (zeros before the path opens).
  eventstore::EventStoreStats store_stats() const;

  void OnMaintainerStatus(const NodeId& node, const coordinator::MaintainerStatus& status) override
      EXCLUDES(mu_);

 private:
  explicit ChangefeedRunner(RunnerOptions options) : options_(std::move(options)) {}
  Status Init();
  std::shared_ptr<node::ChangefeedPath> Path() const;

  const RunnerOptions options_;
  meta::ChangefeedInfo info_;
  std::unique_ptr<node::Node> node_;
  mutable Mutex mu_;
  CondVar cv_;
  Ts checkpoint_ GUARDED_BY(mu_);
  Status status_ GUARDED_BY(mu_);
  std::vector<Status> errors_ GUARDED_BY(mu_);
};

}  // namespace sluice::testing
