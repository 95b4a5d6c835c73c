#include "logpuller/puller_test_util.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "codec/tablecodec.h"
#include "common/hex.h"

namespace sluice::logpuller::testing {

Persister::Persister(uint64_t seed) : rng_(seed) {
  thread_.Start("test-persist", [this](StopToken token) { Loop(token); });
}

Persister::~Persister() { Stop(); }

void Persister::Add(RecordingConsumer* consumer, KvBatch batch, PersistedCallback done) {
  MutexLock lock(&mu_);
  // Each batch becomes durable after its own random delay of up to 10 ms, so
  // batches finish out of order and a resolved ts published too early finds
  // earlier batches still pending.
  auto delay = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 10000)(rng_));
  items_.push_back(
      Item{consumer, std::move(batch), std::move(done), std::chrono::steady_clock::now() + delay});
  cv_.SignalAll();
}

void Persister::Stop() {
  thread_.RequestStop();
  {
    MutexLock lock(&mu_);
    cv_.SignalAll();
  }
  thread_.Join();
}

size_t Persister::pending() const {
  MutexLock lock(&mu_);
  return items_.size();
}

void Persister::Loop(const StopToken& token) {
  while (true) {
    std::vector<Item> due;
    {
      MutexLock lock(&mu_);
      auto now = std::chrono::steady_clock::now();
      auto earliest = std::chrono::steady_clock::time_point::max();
      for (const Item& item : items_) earliest = std::min(earliest, item.due);
      if (items_.empty() && token.cancelled()) return;
      if (!token.cancelled() && earliest > now) {
        if (items_.empty()) {
          cv_.Wait(&mu_);
        } else {
          cv_.WaitUntil(&mu_, earliest);
        }
        continue;
      }
      // Everything due (everything, once stopping), in random order.
      for (size_t i = 0; i < items_.size();) {
        if (token.cancelled() || items_[i].due <= now) {
          due.push_back(std::move(items_[i]));
          items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          ++i;
        }
      }
      std::shuffle(due.begin(), due.end(), rng_);
    }
    for (Item& item : due) {
      item.consumer->Persist(item.batch);
      item.done();
    }
  }
}

namespace {

uint64_t MinCommitTs(const KvBatch& batch) {
  uint64_t min = UINT64_MAX;
  for (const RawKvEntry& e : batch) min = std::min(min, e.commit_ts.value());
  return min;
}

}  // namespace

void RecordingConsumer::ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) {
  {
    MutexLock lock(&mu_);
    uint64_t min = MinCommitTs(batch);
    if (any_resolved_ && min <= resolved_.value()) {
      violations_.push_back("change at " + std::to_string(min) + " arrived after resolved " +
                            std::to_string(resolved_.value()));
    }
    unpersisted_min_.insert(min);
  }
  persister_->Add(this, std::move(batch), std::move(persisted));
}

void RecordingConsumer::Persist(const KvBatch& batch) {
  MutexLock lock(&mu_);
  uint64_t min = MinCommitTs(batch);
  if (any_resolved_ && min <= resolved_.value()) {
    violations_.push_back("change at " + std::to_string(min) + " persisted after resolved " +
                          std::to_string(resolved_.value()));
  }
  unpersisted_min_.erase(unpersisted_min_.find(min));
  persisted_.insert(persisted_.end(), batch.begin(), batch.end());
}

void RecordingConsumer::AdvanceResolvedTs(Ts ts) {
  MutexLock lock(&mu_);
  ++resolved_calls_;
  if (any_resolved_ && ts <= resolved_) {
    violations_.push_back("resolved ts " + std::to_string(ts.value()) + " after " +
                          std::to_string(resolved_.value()));
  }
  if (!unpersisted_min_.empty() && *unpersisted_min_.begin() <= ts.value()) {
    violations_.push_back("resolved ts " + std::to_string(ts.value()) +
                          " published before a batch with a change at " +
                          std::to_string(*unpersisted_min_.begin()) + " was persisted");
  }
  if (!any_resolved_ || ts > resolved_) resolved_ = ts;
  any_resolved_ = true;
  cv_.SignalAll();
}

void RecordingConsumer::OnSubscriptionError(const Status& status) {
  MutexLock lock(&mu_);
  error_ = status;
  cv_.SignalAll();
}

Ts RecordingConsumer::resolved() const {
  MutexLock lock(&mu_);
  return resolved_;
}

size_t RecordingConsumer::num_resolved_calls() const {
  MutexLock lock(&mu_);
  return resolved_calls_;
}

std::vector<RawKvEntry> RecordingConsumer::persisted() const {
  MutexLock lock(&mu_);
  return persisted_;
}

std::vector<std::string> RecordingConsumer::violations() const {
  MutexLock lock(&mu_);
  return violations_;
}

std::optional<Status> RecordingConsumer::error() const {
  MutexLock lock(&mu_);
  return error_;
}

bool RecordingConsumer::WaitResolved(Ts ts, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (!(any_resolved_ && resolved_ >= ts)) {
    if (cv_.WaitUntil(&mu_, deadline)) return any_resolved_ && resolved_ >= ts;
  }
  return true;
}

namespace {

auto SortKey(const RawKvEntry& e) {
  return std::make_tuple(e.commit_ts, e.key, e.start_ts, e.op, e.value, e.old_value);
}

}  // namespace

std::vector<RawKvEntry> Deduplicate(std::vector<RawKvEntry> entries, Ts from, Ts to) {
  std::vector<RawKvEntry> out;
  for (RawKvEntry& e : entries) {
    if (e.commit_ts <= from || e.commit_ts > to) continue;
    e.region_id = RegionId();
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const RawKvEntry& a, const RawKvEntry& b) { return SortKey(a) < SortKey(b); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<RawKvEntry> ExpectedChanges(const simkv::GroundTruth& truth, TableId table, Ts from,
                                        Ts to) {
  std::vector<RawKvEntry> out;
  for (const simkv::TruthChange& change : truth.History(table)) {
    RawKvEntry e;
    e.op = change.kind == simkv::WriteKind::kDelete ? KvOp::kDelete : KvOp::kPut;
    e.key = change.key;
    e.value = change.value;
    e.old_value = change.old_value.value_or("");
    e.start_ts = change.start_ts;
    e.commit_ts = change.commit_ts;
    out.push_back(std::move(e));
  }
  return Deduplicate(std::move(out), from, to);
}

std::string DiffChanges(const std::vector<RawKvEntry>& want, const std::vector<RawKvEntry>& got) {
  if (want == got) return "";
  std::ostringstream out;
  out << "want " << want.size() << " changes, got " << got.size() << "\n";
  size_t shown = 0;
  size_t i = 0;
  size_t j = 0;
  auto describe = [](const RawKvEntry& e) {
    return "commit " + std::to_string(e.commit_ts.value()) + " start " +
           std::to_string(e.start_ts.value()) + " key " + HexEncode(e.key) +
           (e.op == KvOp::kDelete ? " delete" : " put") + " value " + HexEncode(e.value) + " old " +
           HexEncode(e.old_value);
  };
  while ((i < want.size() || j < got.size()) && shown < 10) {
    if (j >= got.size() || (i < want.size() && SortKey(want[i]) < SortKey(got[j]))) {
      out << "  missing: " << describe(want[i++]) << "\n";
      ++shown;
    } else if (i >= want.size() || SortKey(got[j]) < SortKey(want[i])) {
      out << "  extra:   " << describe(got[j++]) << "\n";
      ++shown;
    } else {
      ++i;
      ++j;
    }
  }
  return out.str();
}

Result<std::unique_ptr<PullerEnv>> PullerEnv::Start(PullerEnvOptions options) {
  auto env = std::make_unique<PullerEnv>();
  simkv::SimClusterOptions cluster_options;
  cluster_options.num_stores = options.num_stores;
  cluster_options.raw_split_keys = options.raw_split_keys;
  cluster_options.resolved_ts_interval = options.resolved_ts_interval;
  ASSIGN_OR_RETURN(env->cluster, simkv::SimCluster::Start(cluster_options));
  env->cluster->mvcc().AddObserver(&env->truth);
  pd::PdClientOptions pd_options;
  pd_options.endpoints = {env->cluster->pd_address()};
  ASSIGN_OR_RETURN(env->pd, pd::PdClient::Connect(pd_options));
  env->cache = std::make_unique<pd::RegionCache>(env->pd.get());
  env->client =
      std::make_unique<SubscriptionClient>(options.client, env->pd.get(), env->cache.get());
  env->client->Start();
  return env;
}

PullerEnv::~PullerEnv() { Stop(); }

void PullerEnv::Stop() {
  if (client) client->Stop();
  if (pd) pd->Stop();
  if (cluster) {
    cluster->mvcc().RemoveObserver(&truth);
    cluster->Stop();
  }
}

Result<Ts> WriteRows(simkv::SimCluster& cluster, TableId table, const std::vector<int64_t>& handles,
                     const std::string& tag, bool del) {
  ASSIGN_OR_RETURN(simkv::Txn txn, cluster.txn().Begin());
  for (int64_t handle : handles) {
    std::string key = codec::EncodeRowKey(table, handle);
    if (del) {
      txn.Delete(std::move(key));
    } else {
      txn.Put(std::move(key), tag + "-" + std::to_string(handle));
    }
  }
  return cluster.txn().Commit(txn);
}

}  // namespace sluice::logpuller::testing
