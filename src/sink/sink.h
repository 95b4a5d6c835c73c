// Sink: where a changefeed's ordered events end up (MySQL/TiDB, files,
// blackhole; Kafka later). One sink per (changefeed, node), shared by all of
// that node's dispatchers of the changefeed.
//
// Contract (TiCDC's sink interface):
// - AddDmlEvent queues a transaction (or a piece of one); it may block while
//   the sink's buffers are full (back-pressure), never drops. The sink calls
//   event->PostFlush() exactly once, from one of its own threads, after every
//   row is durably written downstream. Events of one dispatcher are written
//   in the order they were added; events of different dispatchers may
//   interleave, but two transactions touching the same row keep their order.
// - WriteBlockEvent writes a DDL synchronously. The caller guarantees that
//   every earlier DML event of the tables it blocks has been flushed.
// - AddCheckpointTs tells the sink the changefeed checkpoint (resolved marks
//   for formats that carry them; safe-mode exit for MySQL).
// - status() is the first error the sink met (sticky); once it is not OK the
//   sink accepts nothing more and the changefeed restarts it from its
//   checkpoint (retryable codes) or fails (fatal codes).
// Thread-safe: any thread may call any method; Close() is called once, last.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "event/events.h"

namespace sluice::sink {

// Asked right before each write downstream (a transaction, a DDL, a file):
// an error refuses the write, which then fails with that status. The node
// passes its session check, so a node that may have been replaced by
// another writes nothing more. Null: every write is allowed.
using WritePermit = std::function<Status()>;

inline Status CheckWritePermit(const WritePermit& permit) {
  return permit ? permit() : Status::Ok();
}

// Where one table resumes after a restart (TiCDC's GetTableRecoveryInfo).
struct TableRecovery {
  int64_t table_id = 0;
  Ts start_ts;                        // max(given start ts, the sink's record)
  bool skip_dml_at_start_ts = false;  // A DDL at start_ts + 1 was cut short.
  bool skip_syncpoint_at_start_ts = false;
};

class Sink {
 public:
  virtual ~Sink() = default;

  // "mysql", "file", "blackhole", ...
  virtual std::string_view scheme() const = 0;

  virtual void AddDmlEvent(event::DmlEventPtr event) = 0;
  virtual Status WriteBlockEvent(const event::DdlEvent& ddl) = 0;
  virtual void AddCheckpointTs(Ts ts) = 0;
  virtual Status status() const = 0;

  // Where each table resumes after a restart; `start_ts` is parallel to
  // `table_ids` (table id 0: the table trigger). A sink that records DDL
  // progress downstream (MySQL's ddl_ts table) moves a table past the DDLs
  // it already ran, so their earlier rows are not replayed against the new
  // table structure. Others return the given start ts.
  virtual Result<std::vector<TableRecovery>> GetTableRecoveryInfo(
      const std::vector<int64_t>& table_ids, const std::vector<Ts>& start_ts) {
    std::vector<TableRecovery> out;
    for (size_t i = 0; i < table_ids.size() && i < start_ts.size(); ++i) {
      out.push_back(TableRecovery{table_ids[i], start_ts[i]});
    }
    return out;
  }

  // The sink now writes for maintainer generation `epoch`: a newer
  // generation took over the dispatchers that write through it. A sink that
  // fences downstream by epoch (MySQL) claims it there before returning, and
  // from then on commits under it; kStaleOwner if a later generation holds
  // it already. Others have nothing to do. Not called concurrently with
  // itself; any thread.
  virtual Status AdoptEpoch(uint64_t epoch) { return Status::Ok(); }

  // Stops the sink's threads after writing what is queued (or abandoning it
  // when the sink is failed). PostFlush is never called after Close returns.
  virtual void Close() = 0;
};

}  // namespace sluice::sink
