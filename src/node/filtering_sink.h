// FilteringSink: the changefeed's sink behind its filter's DDL rules (what
// TiCDC decides with ShouldDiscardDDL and ShouldIgnoreDDL). A DDL that the
// filter discards (an action outside the allow-list, a DDL of an ignored
// table or schema) or ignores (an event filter's `ignore-event` or
// `ignore-sql`, `ignore-txn-start-ts`) is not written downstream:
// WriteBlockEvent returns the wrapped sink's status without calling it, so
// the dispatcher finishes the DDL (reports DONE, passes the barrier) and
// replication goes on. Everything else is forwarded unchanged; rows are
// filtered earlier, by the event service's row filter.
//
// Which names decide: RENAME TABLE is judged by the table's old names (a
// table that was not replicated has nothing to rename downstream);
// EXCHANGE PARTITION is discarded only when both tables are ignored; a
// multi-table DDL without a table name (CREATE TABLES, RENAME TABLES) is
// discarded when every table it adds is ignored (or, adding none, when its
// schema is), and otherwise written whole.
//
// Threads: as thread-safe as the wrapped sink (the filter is immutable);
// Close() is forwarded once, last, by the owner.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "event/events.h"
#include "filter/filter.h"
#include "sink/sink.h"

namespace sluice::node {

// True if `ddl` must not be written downstream under `filter`.
bool ShouldSkipDdl(const filter::Filter& filter, const event::DdlEvent& ddl);

class FilteringSink final : public sink::Sink {
 public:
  // `inner` and `filter` must not be null.
  FilteringSink(std::unique_ptr<sink::Sink> inner, std::shared_ptr<const filter::Filter> filter);

  std::string_view scheme() const override { return inner_->scheme(); }
  void AddDmlEvent(event::DmlEventPtr event) override { inner_->AddDmlEvent(std::move(event)); }
  // The wrapped sink's status for a skipped DDL; its write otherwise.
  Status WriteBlockEvent(const event::DdlEvent& ddl) override;
  void AddCheckpointTs(Ts ts) override { inner_->AddCheckpointTs(ts); }
  Status status() const override { return inner_->status(); }
  Result<std::vector<sink::TableRecovery>> GetTableRecoveryInfo(
      const std::vector<int64_t>& table_ids, const std::vector<Ts>& start_ts) override {
    return inner_->GetTableRecoveryInfo(table_ids, start_ts);
  }
  Status AdoptEpoch(uint64_t epoch) override { return inner_->AdoptEpoch(epoch); }
  void Close() override { inner_->Close(); }

  // DDLs left out so far.
  uint64_t skipped_ddls() const { return skipped_ddls_.load(std::memory_order_relaxed); }

 private:
  const std::unique_ptr<sink::Sink> inner_;
  const std::shared_ptr<const filter::Filter> filter_;
  std::atomic<uint64_t> skipped_ddls_{0};
};

}  // namespace sluice::node
