#include "logpuller/matcher.h"

#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include "common/hash.h"
#include "common/logging.h"

namespace sluice::logpuller {
namespace {

std::string RowContext(uint64_t start_ts, uint64_t commit_ts, std::string_view key) {
  return "start_ts " + std::to_string(start_ts) + ", commit_ts " + std::to_string(commit_ts) +
         ", key " + Redact(key);
}
std::string RowContext(const RowView& row) {
  return RowContext(row.start_ts, row.commit_ts, row.key);
}

}  // namespace

size_t RegionMatcher::PrewriteKeyHash::Hash(uint64_t start_ts, std::string_view key) noexcept {
  size_t h = HashBytes(key);
  // Mixes the start ts in (splitmix64 finaliser) so that keys shared by many
  // transactions do not collide.
  uint64_t x = start_ts + 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return h ^ static_cast<size_t>(x);
}

RegionMatcher::RegionMatcher(RegionId region, Ts subscription_start_ts)
    : region_(region), start_ts_(subscription_start_ts), resolved_ts_(subscription_start_ts) {}

Status RegionMatcher::Handle(const RowView& row, KvBatch* out) {
  switch (row.type) {
    case cdcpb::Event::PREWRITE:
      PutPrewrite(row);
      return Status::Ok();
    case cdcpb::Event::COMMIT:
      return HandleCommit(row, out);
    case cdcpb::Event::COMMITTED: {
      if (row.commit_ts < row.start_ts) {
        return ProtocolViolation("committed row with commit ts below its start ts: " +
                                 RowContext(row));
      }
      std::optional<KvOp> op;
      RETURN_IF_ERROR(Check(row, &op));
      if (op.has_value()) {
        std::string value = *op == KvOp::kPut ? std::string(row.value) : std::string();
        Append(row, *op, std::string(row.key), std::move(value), std::string(row.old_value), out);
      }
      return Status::Ok();
    }
    case cdcpb::Event::ROLLBACK:
      if (!initialized_) {
        BeforeInitCache().rollbacks.push_back(PrewriteKey{row.start_ts, std::string(row.key)});
      } else if (prewrites_ != nullptr) {
        prewrites_->erase(PrewriteProbe{row.start_ts, row.key});
      }
      return Status::Ok();
    case cdcpb::Event::INITIALIZED:
      return HandleInitialized(out);
    default:
      return ProtocolViolation("region " + std::to_string(region_.value()) +
                               ": row with unknown log type " + std::to_string(row.type));
  }
}

bool RegionMatcher::AdvanceResolvedTs(Ts ts) {
  if (!initialized_ || ts <= resolved_ts_) return false;
  resolved_ts_ = ts;
  return true;
}

void RegionMatcher::Shrink() {
  if (prewrites_ == nullptr) return;
  if (prewrites_->empty()) {
    prewrites_.reset();
  } else if (prewrites_->capacity() > kShrinkMinCapacity &&
             prewrites_->size() < prewrites_->capacity() / 8) {
    // An open-addressing map keeps its peak size: after a large transaction
    // is matched, a few long-lived prewrites must not pin its slots.
    prewrites_->rehash(0);
  }
}

RegionMatcher::BeforeInit& RegionMatcher::BeforeInitCache() {
  if (before_init_ == nullptr) before_init_ = std::make_unique<BeforeInit>();
  return *before_init_;
}

void RegionMatcher::PutPrewrite(const RowView& row) {
  if (prewrites_ == nullptr) prewrites_ = std::make_unique<PrewriteMap>();
  auto it = prewrites_->find(PrewriteProbe{row.start_ts, row.key});
  if (it != prewrites_->end()) {
    // An empty-value prewrite for a key that already has one is the fake
    // prewrite TiKV sends for a transaction heartbeat (with or without old
    // value, the value is empty): keep the real one.
    if (row.value.empty()) return;
    // Pipelined DML: the latest generation wins.
    if (row.generation < it->second.generation) return;
    it->second.value.assign(row.value);
    it->second.old_value.assign(row.old_value);
    it->second.generation = row.generation;
    return;
  }
  prewrites_->emplace(PrewriteKey{row.start_ts, std::string(row.key)},
                      Prewrite{std::string(row.value), std::string(row.old_value), row.generation});
}

bool RegionMatcher::FindPrewrite(uint64_t start_ts, std::string_view key,
                                 PrewriteMap::iterator* it) {
  if (prewrites_ == nullptr || prewrites_->empty()) return false;
  *it = prewrites_->find(PrewriteProbe{start_ts, key});
  if (*it == prewrites_->end()) return false;
  // During the scan prewrites may come out of order with their commits: a
  // heartbeat's empty value or a pipelined flush must not satisfy a commit.
  return initialized_ || (!(*it)->second.value.empty() && (*it)->second.generation == 0);
}

Status RegionMatcher::HandleCommit(const RowView& row, KvBatch* out) {
  if (row.commit_ts < row.start_ts) {
    return ProtocolViolation("commit with commit ts below its start ts: " + RowContext(row));
  }
  // Matching also runs for stale commits, so that their prewrites are freed.
  PrewriteMap::iterator it;
  if (!FindPrewrite(row.start_ts, row.key, &it)) {
    if (!initialized_) {
      BeforeInitCache().commits.push_back(
          PendingCommit{row.start_ts, row.commit_ts, row.op_type, std::string(row.key)});
      return Status::Ok();
    }
    return ProtocolViolation("region " + std::to_string(region_.value()) +
                             ": commit without prewrite: " + RowContext(row));
  }
  return EmitMatched(row, it, out);
}

Status RegionMatcher::HandleInitialized(KvBatch* out) {
  if (initialized_) {
    return ProtocolViolation("region " + std::to_string(region_.value()) +
                             ": INITIALIZED received twice");
  }
  initialized_ = true;
  if (before_init_ == nullptr) return Status::Ok();
  std::unique_ptr<BeforeInit> cached = std::move(before_init_);
  for (const PendingCommit& commit : cached->commits) {
    PrewriteMap::iterator it;
    if (!FindPrewrite(commit.start_ts, commit.key, &it)) {
      // A commit seen during the scan without its prewrite: the scan already
      // produced a COMMITTED row for it.
      LOG_INFO("region {}: dropping commit without prewrite seen during the scan, {}",
               region_.value(), RowContext(commit.start_ts, commit.commit_ts, commit.key));
      continue;
    }
    RETURN_IF_ERROR(EmitMatched(commit.View(), it, out));
  }
  if (prewrites_ == nullptr) return Status::Ok();
  for (const PrewriteKey& key : cached->rollbacks) {
    prewrites_->erase(PrewriteProbe{key.start_ts, key.key});
  }
  return Status::Ok();
}

Status RegionMatcher::EmitMatched(const RowView& row, PrewriteMap::iterator it, KvBatch* out) {
  // The prewrite is taken out of the map whatever the row turns out to be.
  auto node = prewrites_->extract(it);
  std::optional<KvOp> op;
  RETURN_IF_ERROR(Check(row, &op));
  if (op.has_value()) {
    Append(row, *op, std::move(node.key().key), std::move(node.mapped().value),
           std::move(node.mapped().old_value), out);
  }
  return Status::Ok();
}

void RegionMatcher::Append(const RowView& row, KvOp op, std::string key, std::string value,
                           std::string old_value, KvBatch* out) const {
  RawKvEntry& entry = out->emplace_back();
  entry.op = op;
  entry.key = std::move(key);
  if (op == KvOp::kPut) entry.value = std::move(value);
  entry.old_value = std::move(old_value);
  entry.start_ts = Ts(row.start_ts);
  entry.commit_ts = Ts(row.commit_ts);
  entry.region_id = region_;
}

Status RegionMatcher::Check(const RowView& row, std::optional<KvOp>* op) const {
  // TiKV may send changes committed at or before the start ts; they are
  // already covered by the subscription's starting point.
  if (Ts(row.commit_ts) <= start_ts_) return Status::Ok();
  if (Ts(row.commit_ts) <= resolved_ts_) {
    return ProtocolViolation("region " + std::to_string(region_.value()) +
                             ": change at or below the region resolved ts " +
                             std::to_string(resolved_ts_.value()) + ": " + RowContext(row));
  }
  switch (row.op_type) {
    case cdcpb::Event_Row::PUT:
      *op = KvOp::kPut;
      return Status::Ok();
    case cdcpb::Event_Row::DELETE:
      *op = KvOp::kDelete;
      return Status::Ok();
    default:
      return ProtocolViolation("region " + std::to_string(region_.value()) +
                               ": committed change with op type " + std::to_string(row.op_type) +
                               " (want PUT or DELETE): " + RowContext(row));
  }
}

}  // namespace sluice::logpuller
