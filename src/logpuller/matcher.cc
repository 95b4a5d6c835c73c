#include "logpuller/matcher.h"

#include <functional>
#include <string_view>
#include <utility>

#include "common/hash.h"
#include "common/logging.h"

namespace sluice::logpuller {
namespace {

using Row = cdcpb::Event_Row;

std::string RowContext(const Row& row) {
  return "start_ts " + std::to_string(row.start_ts()) + ", commit_ts " +
         std::to_string(row.commit_ts()) + ", key " + Redact(row.key());
}

}  // namespace

size_t RegionMatcher::PrewriteKeyHash::operator()(const PrewriteKey& k) const noexcept {
  size_t h = HashBytes(k.key);
  // Mixes the start ts in (splitmix64 finaliser) so that keys shared by many
  // transactions do not collide.
  uint64_t x = k.start_ts + 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return h ^ static_cast<size_t>(x);
}

RegionMatcher::RegionMatcher(RegionId region, Ts subscription_start_ts)
    : region_(region), start_ts_(subscription_start_ts), resolved_ts_(subscription_start_ts) {}

Status RegionMatcher::Handle(Row& row, KvBatch* out) {
  switch (row.type()) {
    case cdcpb::Event::PREWRITE:
      PutPrewrite(row);
      return Status::Ok();
    case cdcpb::Event::COMMIT:
      return HandleCommit(row, out);
    case cdcpb::Event::COMMITTED:
      if (row.commit_ts() < row.start_ts()) {
        return ProtocolViolation("committed row with commit ts below its start ts: " +
                                 RowContext(row));
      }
      return Emit(row, out);
    case cdcpb::Event::ROLLBACK:
      if (!initialized_) {
        BeforeInitCache().rollbacks.push_back(
            PrewriteKey{row.start_ts(), std::move(*row.mutable_key())});
      } else {
        Rollback(row);
      }
      return Status::Ok();
    case cdcpb::Event::INITIALIZED:
      return HandleInitialized(out);
    default:
      return ProtocolViolation("region " + std::to_string(region_.value()) +
                               ": row with unknown log type " +
                               std::to_string(static_cast<int>(row.type())));
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

void RegionMatcher::PutPrewrite(Row& row) {
  PrewriteKey key{row.start_ts(), std::move(*row.mutable_key())};
  if (prewrites_ == nullptr) prewrites_ = std::make_unique<PrewriteMap>();
  auto it = prewrites_->find(key);
  if (it != prewrites_->end()) {
    // An empty-value prewrite for a key that already has one is the fake
    // prewrite TiKV sends for a transaction heartbeat (with or without old
    // value, the value is empty): keep the real one.
    if (row.value().empty()) return;
    // Pipelined DML: the latest generation wins.
    if (row.generation() < it->second.generation) return;
    it->second.value = std::move(*row.mutable_value());
    it->second.old_value = std::move(*row.mutable_old_value());
    it->second.generation = row.generation();
    return;
  }
  prewrites_->emplace(std::move(key),
                      Prewrite{std::move(*row.mutable_value()), std::move(*row.mutable_old_value()),
                               row.generation()});
}

bool RegionMatcher::MatchPrewrite(Row& row) {
  if (prewrites_ == nullptr || prewrites_->empty()) return false;
  // The probe borrows the row's key and gives it back, so nothing is copied.
  PrewriteKey probe{row.start_ts(), std::move(*row.mutable_key())};
  auto it = prewrites_->find(probe);
  *row.mutable_key() = std::move(probe.key);
  if (it == prewrites_->end()) return false;
  // During the scan prewrites may come out of order with their commits: a
  // heartbeat's empty value or a pipelined flush must not satisfy a commit.
  if (!initialized_ && (it->second.value.empty() || it->second.generation > 0)) return false;
  *row.mutable_value() = std::move(it->second.value);
  *row.mutable_old_value() = std::move(it->second.old_value);
  prewrites_->erase(it);
  return true;
}

void RegionMatcher::Rollback(Row& row) {
  if (prewrites_ == nullptr || prewrites_->empty()) return;
  prewrites_->erase(PrewriteKey{row.start_ts(), std::move(*row.mutable_key())});
}

Status RegionMatcher::HandleCommit(Row& row, KvBatch* out) {
  if (row.commit_ts() < row.start_ts()) {
    return ProtocolViolation("commit with commit ts below its start ts: " + RowContext(row));
  }
  // Matching also runs for stale commits, so that their prewrites are freed.
  if (!MatchPrewrite(row)) {
    if (!initialized_) {
      BeforeInitCache().commits.push_back(std::move(row));
      return Status::Ok();
    }
    return ProtocolViolation("region " + std::to_string(region_.value()) +
                             ": commit without prewrite: " + RowContext(row));
  }
  return Emit(row, out);
}

Status RegionMatcher::HandleInitialized(KvBatch* out) {
  if (initialized_) {
    return ProtocolViolation("region " + std::to_string(region_.value()) +
                             ": INITIALIZED received twice");
  }
  initialized_ = true;
  if (before_init_ == nullptr) return Status::Ok();
  std::unique_ptr<BeforeInit> cached = std::move(before_init_);
  for (Row& commit : cached->commits) {
    if (!MatchPrewrite(commit)) {
      // A commit seen during the scan without its prewrite: the scan already
      // produced a COMMITTED row for it.
      LOG_INFO("region {}: dropping commit without prewrite seen during the scan, {}",
               region_.value(), RowContext(commit));
      continue;
    }
    RETURN_IF_ERROR(Emit(commit, out));
  }
  if (prewrites_ == nullptr) return Status::Ok();
  for (const PrewriteKey& key : cached->rollbacks) prewrites_->erase(key);
  return Status::Ok();
}

Status RegionMatcher::Emit(Row& row, KvBatch* out) {
  // TiKV may send changes committed at or before the start ts; they are
  // already covered by the subscription's starting point.
  if (Ts(row.commit_ts()) <= start_ts_) return Status::Ok();
  if (Ts(row.commit_ts()) <= resolved_ts_) {
    return ProtocolViolation("region " + std::to_string(region_.value()) +
                             ": change at or below the region resolved ts " +
                             std::to_string(resolved_ts_.value()) + ": " + RowContext(row));
  }
  KvOp op;
  switch (row.op_type()) {
    case Row::PUT:
      op = KvOp::kPut;
      break;
    case Row::DELETE:
      op = KvOp::kDelete;
      break;
    default:
      return ProtocolViolation("region " + std::to_string(region_.value()) +
                               ": committed change with op type " +
                               std::to_string(static_cast<int>(row.op_type())) +
                               " (want PUT or DELETE): " + RowContext(row));
  }
  RawKvEntry& entry = out->emplace_back();
  entry.op = op;
  entry.key = std::move(*row.mutable_key());
  if (op == KvOp::kPut) entry.value = std::move(*row.mutable_value());
  entry.old_value = std::move(*row.mutable_old_value());
  entry.start_ts = Ts(row.start_ts());
  entry.commit_ts = Ts(row.commit_ts());
  entry.region_id = region_;
  return Status::Ok();
}

}  // namespace sluice::logpuller
