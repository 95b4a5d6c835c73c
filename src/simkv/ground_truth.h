// GroundTruth: the record of every committed row change that simkv's store
// applied, per table, so tests and benchmarks can check what reached a sink.
// It observes an MvccStore (commits only) and keeps record keys of tables
// ('t' + table id + "_r" ...); other keys are ignored. It answers the state of
// a table at any ts and exports to the line format described in README.md.
//
// Thread-safe: one mutex. As an observer it is called under the store's
// mutex and only takes its own, so it never calls back into the store.
#pragma once

#include <cstddef>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "simkv/mvcc_store.h"
#include "simkv/mvcc_types.h"

namespace sluice::simkv {

// One committed change of a table row.
struct TruthChange {
  TableId table_id;
  Ts commit_ts;
  Ts start_ts;
  std::string key;                       // Raw record key.
  WriteKind kind = WriteKind::kPut;      // kPut or kDelete.
  std::string value;                     // Empty for kDelete.
  std::optional<std::string> old_value;  // Value visible just before commit_ts.
  friend bool operator==(const TruthChange&, const TruthChange&) = default;
};

class GroundTruth : public MvccObserver {
 public:
  // The table id of a raw record key (TiDB tablecodec: 't', 8-byte
  // sign-flipped big-endian id, '_', 'r', handle), nullopt for other keys.
  static std::optional<TableId> RecordTableId(std::string_view raw_key);

  GroundTruth() = default;
  GroundTruth(const GroundTruth&) = delete;
  GroundTruth& operator=(const GroundTruth&) = delete;

  // MvccObserver: records put/delete commits of record keys.
  void OnCommit(const CommitEvent& event) override;

  // Adds one change (e.g. read back from a file).
  void Record(TruthChange change);

  std::vector<TableId> Tables() const;
  size_t size() const;
  // A table's changes in commit-ts order, then key order.
  std::vector<TruthChange> History(TableId table_id) const;
  // All changes in commit-ts order, then table id, then key.
  std::vector<TruthChange> AllChanges() const;
  // The rows of a table visible at `ts`: key -> value.
  std::map<std::string, std::string> StateAt(TableId table_id, Ts ts) const;

  // Writes the header line and one line per change, in AllChanges() order.
  Status Export(std::ostream& out) const;
  Status ExportToFile(const std::string& path) const;
  // Parses an exported stream; Corruption (with the line number) on any
  // malformed line, a wrong header or a key that is not a record key of the
  // line's table.
  static Result<std::vector<TruthChange>> Read(std::istream& in);
  // Reads and records every change of a stream or file.
  Status Import(std::istream& in);
  Status ImportFromFile(const std::string& path);

 private:
  mutable Mutex mu_;
  // Per table, in arrival order (commit-ts order per key).
  std::map<TableId, std::vector<TruthChange>> tables_ GUARDED_BY(mu_);
};

}  // namespace sluice::simkv
