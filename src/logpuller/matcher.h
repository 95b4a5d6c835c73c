// RegionMatcher: one region's transaction matcher (TiCDC's txn_matcher plus
// the per-row checks of its region event handler). It pairs each COMMIT row
// with its PREWRITE by (start_ts, key), passes incremental-scan COMMITTED rows
// through, applies ROLLBACKs, holds commits and rollbacks that arrive before
// INITIALIZED until the scan ends, and tracks the region's resolved ts.
//
// Promises:
//  - Every committed change with commit ts > the subscription start ts is
//    appended to the output exactly once, as a RawKvEntry that owns its
//    strings. Rows are views into bytes the caller frees afterwards: a
//    prewrite's bytes are copied into the prewrite map (again if a later
//    generation replaces them) and moved from there into the entry; a live
//    commit takes the prewrite's key, a scanned row is copied once.
//  - Rows that break the protocol (unknown log type, a commit without its
//    prewrite after INITIALIZED, commit ts <= the region resolved ts, commit
//    ts < start ts, a change that is neither a put nor a delete, INITIALIZED
//    twice) yield a ProtocolViolation status; nothing aborts. Keys appear in
//    logs and messages only through Redact().
//
// Ownership: the matcher owns the pending prewrites and the rows held back
// before INITIALIZED. Threads: not thread-safe; one region worker uses it at a
// time (a region's events are handled in order by one thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/kv_entry.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "logpuller/change_data.h"

namespace sluice::logpuller {

class RegionMatcher {
 public:
  RegionMatcher(RegionId region, Ts subscription_start_ts);

  RegionMatcher(const RegionMatcher&) = delete;
  RegionMatcher& operator=(const RegionMatcher&) = delete;
  RegionMatcher(RegionMatcher&&) = default;
  RegionMatcher& operator=(RegionMatcher&&) = default;

  // Handles one row of an Entries event (any LogType); copies what it keeps
  // of the row's bytes. Appends the committed changes the row completes to
  // *out (an INITIALIZED row may complete several). On error *out may
  // already hold changes this row produced; the caller fails the region
  // either way.
  Status Handle(const RowView& row, KvBatch* out);

  bool initialized() const { return initialized_; }

  // The region resolved ts from TiKV. Ignored (returns false) before
  // INITIALIZED and when not larger than the current one; true if it
  // advanced. The resolved ts starts at the subscription start ts.
  bool AdvanceResolvedTs(Ts ts);
  Ts resolved_ts() const { return resolved_ts_; }

  size_t num_pending_prewrites() const { return prewrites_ ? prewrites_->size() : 0; }
  // Commits received before INITIALIZED that are still waiting for it.
  size_t num_cached_commits() const { return before_init_ ? before_init_->commits.size() : 0; }

  // Frees the prewrite map if it holds no prewrite, and shrinks it when it
  // is mostly empty. Call when the region is idle (for instance on resolved
  // ts). An idle matcher owns no heap memory: an idle region costs only
  // sizeof(RegionMatcher).
  void Shrink();
  // Slots of the prewrite map (0 when it is not allocated).
  size_t prewrite_capacity() const { return prewrites_ ? prewrites_->capacity() : 0; }

 private:
  // Shrink() leaves maps up to this many slots alone.
  static constexpr size_t kShrinkMinCapacity = 256;
  struct PrewriteKey {
    uint64_t start_ts = 0;
    std::string key;
  };
  // A lookup key borrowing the row's bytes.
  struct PrewriteProbe {
    uint64_t start_ts = 0;
    std::string_view key;
  };
  struct PrewriteKeyHash {
    using is_transparent = void;
    size_t operator()(const PrewriteKey& k) const noexcept { return Hash(k.start_ts, k.key); }
    size_t operator()(const PrewriteProbe& k) const noexcept { return Hash(k.start_ts, k.key); }
    static size_t Hash(uint64_t start_ts, std::string_view key) noexcept;
  };
  struct PrewriteKeyEq {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept {
      return a.start_ts == b.start_ts && std::string_view(a.key) == std::string_view(b.key);
    }
  };
  struct Prewrite {
    std::string value;
    std::string old_value;
    uint64_t generation = 0;
  };
  // Open addressing: a prewrite costs no node allocation of its own.
  using PrewriteMap = absl::flat_hash_map<PrewriteKey, Prewrite, PrewriteKeyHash, PrewriteKeyEq>;
  // A COMMIT row held until INITIALIZED (its value comes from the prewrite).
  struct PendingCommit {
    uint64_t start_ts = 0;
    uint64_t commit_ts = 0;
    int32_t op_type = 0;
    std::string key;

    RowView View() const {
      RowView row;
      row.start_ts = start_ts;
      row.commit_ts = commit_ts;
      row.type = cdcpb::Event::COMMIT;
      row.op_type = op_type;
      row.key = key;
      return row;
    }
  };
  // Commits and rollbacks that arrived before INITIALIZED.
  struct BeforeInit {
    std::vector<PendingCommit> commits;
    std::vector<PrewriteKey> rollbacks;
  };

  void PutPrewrite(const RowView& row);
  // Finds the prewrite a commit completes; false if there is none. Before
  // INITIALIZED, an empty-value or pipelined (generation > 0) prewrite is
  // never matched.
  bool FindPrewrite(uint64_t start_ts, std::string_view key, PrewriteMap::iterator* it);
  BeforeInit& BeforeInitCache();
  Status HandleCommit(const RowView& row, KvBatch* out);
  Status HandleInitialized(KvBatch* out);
  // Emits the change `row` commits with the prewrite `it` (which is freed).
  Status EmitMatched(const RowView& row, PrewriteMap::iterator it, KvBatch* out);
  // Appends the change `row` commits, owning the given strings (the value
  // only for a put).
  void Append(const RowView& row, KvOp op, std::string key, std::string value,
              std::string old_value, KvBatch* out) const;
  // Checks a matched or scanned row. Returns its op in *op, or leaves *op
  // unset if the row is stale (commit ts <= subscription start ts).
  Status Check(const RowView& row, std::optional<KvOp>* op) const;

  RegionId region_;
  Ts start_ts_;
  Ts resolved_ts_;
  bool initialized_ = false;
  // Both are allocated on first use and freed when empty, so that the many
  // idle regions of a large subscription stay small.
  std::unique_ptr<PrewriteMap> prewrites_;
  std::unique_ptr<BeforeInit> before_init_;
};

}  // namespace sluice::logpuller
