#include "eventservice/table_scanner.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "eventservice/mounter.h"

namespace sluice::eventservice {

namespace {

using MaybeOutcome = std::optional<ScanOutcome>;

Ts Prev(Ts ts) { return Ts(ts.value() - 1); }

// One scan task of a table-span dispatcher (see table_scanner.h).
class TableScan {
 public:
  TableScan(const ScanContext& ctx, DispatcherState& d, ScanProgress& p)
      : ctx_(ctx), d_(d), p_(p) {}

  ScanOutcome Run();

 private:
  MaybeOutcome RunMainPass();
  MaybeOutcome RunSplitPass();
  MaybeOutcome BeginTxn(const RawKvEntry& row, const std::optional<std::pair<Ts, Ts>>& prev);
  MaybeOutcome AddMainRow(const RawKvEntry& row);
  MaybeOutcome KeepRow(event::RowChange row);
  // Ends the open transaction; true when it needs its second pass first.
  bool FinishTxn();
  ScanOutcome FinishRange();
  void StopBefore(const std::optional<std::pair<Ts, Ts>>& prev, Ts commit_ts);
  bool PieceFull(const OpenTxn& t) const;
  void FlushPiece(bool last);
  void DeliverDdls(Ts bound, bool inclusive);
  const std::vector<int>& UkColumns(const event::TableSchemaPtr& schema);
  Result<std::unique_ptr<eventstore::EventIterator>> Open(const ScanStart& start);
  ScanOutcome SchemaError(const Status& st);
  ScanOutcome Fail(const Status& st, std::optional<Ts> ts = std::nullopt) {
    return FailDispatcher(d_, p_, st, ts);
  }

  const ScanContext& ctx_;
  DispatcherState& d_;
  ScanProgress& p_;
  Ts end_;
  std::vector<event::DdlEventPtr> ddls_;
  size_t ddl_index_ = 0;
};

ScanOutcome TableScan::Run() {
  Ts store_resolved(d_.store_resolved.load());
  end_ = std::min(store_resolved, ctx_.schema->resolved_ts());
  bool open = p_.txn.has_value() || p_.resume.has_value();
  if (end_ <= p_.sent_ts) return open ? ScanOutcome::kRetryLater : ScanOutcome::kCaughtUp;
  if (!d_.HasCredit()) return ScanOutcome::kNoCredit;
  ctx_.counters->scans.fetch_add(1, std::memory_order_relaxed);
  Result<std::vector<event::DdlEventPtr>> ddls =
      ctx_.schema->TableDdlEvents(d_.table_id, p_.sent_ts, end_);
  if (!ddls.ok()) return SchemaError(ddls.status());
  ddls_ = std::move(ddls).value();
  // Nothing stored above sent_ts: only DDLs and the resolved mark are due.
  if (!open && Ts(d_.store_max_commit.load()) <= p_.sent_ts) {
    return FinishRange();
  }
  for (;;) {
    MaybeOutcome out = (p_.txn && p_.txn->pass == 2) ? RunSplitPass() : RunMainPass();
    if (out.has_value()) return *out;
  }
}

Result<std::unique_ptr<eventstore::EventIterator>> TableScan::Open(const ScanStart& start) {
  Result<std::unique_ptr<eventstore::EventIterator>> it =
      ctx_.store->GetIterator(d_.id, start.from, end_, start.cursor);
  if (!it.ok()) {
    return it.status().WithContext(fmt::format("event store scan of table {}", d_.table_id));
  }
  return it;
}

MaybeOutcome TableScan::RunMainPass() {
  ScanStart start =
      p_.resume ? ScanStart{p_.resume->commit_ts, p_.resume} : ScanStart{p_.sent_ts, {}};
  auto it = Open(start);
  if (!it.ok()) return Fail(it.status());
  // The transaction before the next row: where a stop between transactions
  // resumes, and where the next transaction's first row can be found again.
  std::optional<std::pair<Ts, Ts>> prev;
  if (p_.resume) prev.emplace(p_.resume->commit_ts, p_.resume->start_ts);
  size_t scanned = 0;
  RawKvEntry row;
  bool new_txn = false;
  while ((*it)->Next(&row, &new_txn)) {
    if (d_.removed.load()) return ScanOutcome::kCaughtUp;
    scanned += row.ApproximateBytes();
    if (new_txn) {
      if (p_.txn && FinishTxn()) return std::nullopt;  // Second pass first.
      Ts commit = row.commit_ts;
      bool credit = d_.HasCredit();
      if (!credit || scanned > ctx_.options->scan_bytes_per_task) {
        DeliverDdls(commit, /*inclusive=*/false);
        StopBefore(prev, commit);
        return credit ? ScanOutcome::kYield : ScanOutcome::kNoCredit;
      }
      DeliverDdls(commit, /*inclusive=*/false);
      if (MaybeOutcome out = BeginTxn(row, prev)) return out;
      prev.emplace(commit, row.start_ts);
    }
    if (MaybeOutcome out = AddMainRow(row)) {
      if (*out == ScanOutcome::kNoCredit) p_.resume = (*it)->cursor();
      return out;
    }
  }
  if (!(*it)->status().ok()) {
    return Fail((*it)->status().WithContext(fmt::format("scan of table {}", d_.table_id)));
  }
  if (p_.txn && FinishTxn()) return std::nullopt;
  return FinishRange();
}

MaybeOutcome TableScan::RunSplitPass() {
  OpenTxn& t = *p_.txn;
  ScanStart start = p_.resume ? ScanStart{p_.resume->commit_ts, p_.resume} : t.begin;
  auto it = Open(start);
  if (!it.ok()) return Fail(it.status());
  RawKvEntry row;
  bool new_txn = false;
  while ((*it)->Next(&row, &new_txn)) {
    if (d_.removed.load()) return ScanOutcome::kCaughtUp;
    if (row.commit_ts != t.commit_ts || row.start_ts != t.start_ts) break;
    DmlOrder order = row.dml_order();
    if (order == DmlOrder::kInsert) break;  // Updates come before inserts.
    if (order != DmlOrder::kUpdate) continue;
    Result<event::RowChange> rc = MountRow(row, *t.schema, d_.table_id);
    if (!rc.ok()) return Fail(rc.status());
    if (!UniqueKeyChanged(*rc, t.uk_columns)) continue;
    if (MaybeOutcome out = KeepRow(SplitUpdate(std::move(rc).value()).second)) {
      if (*out == ScanOutcome::kNoCredit) p_.resume = (*it)->cursor();
      return out;
    }
  }
  if (!(*it)->status().ok()) {
    return Fail((*it)->status().WithContext(fmt::format("scan of table {}", d_.table_id)));
  }
  if (t.pending) FlushPiece(/*last=*/true);
  eventstore::ScanCursor after{t.commit_ts, t.start_ts, ""};
  p_.txn.reset();
  p_.resume = std::move(after);
  return std::nullopt;
}

MaybeOutcome TableScan::BeginTxn(const RawKvEntry& row,
                                 const std::optional<std::pair<Ts, Ts>>& prev) {
  const Ts commit = row.commit_ts;
  // As TiCDC: a transaction is decoded with the schema before its commit ts
  // (a DDL finishing at the same ts is delivered after it).
  Result<event::TableSchemaPtr> schema = ctx_.schema->GetTableSchema(d_.table_id, Prev(commit));
  event::TableSchemaPtr found;
  if (schema.ok()) {
    found = *schema;
  } else if (schema.status().code() == Code::kUnavailable) {
    StopBefore(prev, commit);
    return ScanOutcome::kRetryLater;
  } else if (schema.status().code() != Code::kNotFound) {
    return Fail(schema.status().WithContext(
                    fmt::format("schema of table {} at ts {}", d_.table_id, Prev(commit).value())),
                commit);
  } else {
    // The table is gone (dropped or truncated): TiCDC skips such rows.
    LOG_DEBUG("table {} does not exist at ts {}: skipping its rows", d_.table_id,
              Prev(commit).value());
  }
  OpenTxn t;
  t.commit_ts = commit;
  t.start_ts = row.start_ts;
  t.schema = found;
  if (found) t.uk_columns = UkColumns(found);
  if (prev && prev->first == commit) {
    t.begin = ScanStart{commit, eventstore::ScanCursor{commit, prev->second, ""}};
  } else {
    t.begin = ScanStart{Prev(commit), std::nullopt};
  }
  p_.txn = std::move(t);
  p_.sent_ts = std::max(p_.sent_ts, Prev(commit));
  return std::nullopt;
}

MaybeOutcome TableScan::AddMainRow(const RawKvEntry& row) {
  OpenTxn& t = *p_.txn;
  if (!t.schema) {
    ctx_.counters->rows_of_dropped_tables.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  Result<event::RowChange> rc = MountRow(row, *t.schema, d_.table_id);
  if (!rc.ok()) return Fail(rc.status());
  ctx_.counters->rows.fetch_add(1, std::memory_order_relaxed);
  if (UniqueKeyChanged(*rc, t.uk_columns)) {
    t.has_split = true;
    ctx_.counters->split_updates.fetch_add(1, std::memory_order_relaxed);
    return KeepRow(SplitUpdate(std::move(rc).value()).first);
  }
  return KeepRow(std::move(rc).value());
}

MaybeOutcome TableScan::KeepRow(event::RowChange row) {
  OpenTxn& t = *p_.txn;
  if (t.commit_ts == d_.skip_dml_at) {
    ctx_.counters->rows_skipped_at_start.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  if (d_.filter) {
    Result<bool> ignore = d_.filter(*t.schema, row, t.start_ts);
    if (!ignore.ok()) {
      return Fail(ignore.status().WithContext(
          fmt::format("filter of table {} at commit ts {}", d_.table_id, t.commit_ts.value())));
    }
    if (*ignore) {
      ctx_.counters->rows_filtered.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
  }
  size_t bytes = row.ApproximateBytes();
  bool flushed = false;
  if (t.pending && PieceFull(t)) {
    FlushPiece(/*last=*/false);
    flushed = true;
  }
  if (!t.pending) {
    auto e = std::make_shared<event::DmlEvent>();
    e->dispatcher_id = d_.id;
    e->physical_table_id = d_.table_id;
    e->schema = t.schema;
    e->start_ts = t.start_ts;
    e->commit_ts = t.commit_ts;
    t.pending = std::move(e);
  }
  t.pending->rows.push_back(std::move(row));
  t.pending_bytes += bytes;
  if (flushed && !d_.HasCredit()) return ScanOutcome::kNoCredit;
  return std::nullopt;
}

bool TableScan::PieceFull(const OpenTxn& t) const {
  return t.pending_bytes >= ctx_.options->max_piece_bytes ||
         d_.unacked.load() + t.pending_bytes >= d_.budget;
}

void TableScan::FlushPiece(bool last) {
  OpenTxn& t = *p_.txn;
  event::DmlEventPtr e = std::move(t.pending);
  t.pending = nullptr;
  e->piece = t.next_piece++;
  e->last_piece = last;
  // Counted before delivery: the consumer may ack from inside OnDml.
  d_.unacked.fetch_add(t.pending_bytes);
  t.pending_bytes = 0;
  ctx_.counters->dml_events.fetch_add(1, std::memory_order_relaxed);
  d_.consumer->OnDml(std::move(e));
}

bool TableScan::FinishTxn() {
  OpenTxn& t = *p_.txn;
  if (t.pass == 1 && t.has_split) {
    t.pass = 2;
    p_.resume.reset();
    return true;
  }
  if (t.pending) FlushPiece(/*last=*/true);
  p_.txn.reset();
  return false;
}

ScanOutcome TableScan::FinishRange() {
  DeliverDdls(end_, /*inclusive=*/true);
  p_.sent_ts = end_;
  p_.resume.reset();
  DeliverResolved(ctx_, d_, p_, end_);
  return ScanOutcome::kCaughtUp;
}

void TableScan::StopBefore(const std::optional<std::pair<Ts, Ts>>& prev, Ts commit_ts) {
  if (prev && prev->first == commit_ts) {
    p_.resume = eventstore::ScanCursor{commit_ts, prev->second, ""};
  } else {
    p_.resume.reset();
  }
  p_.sent_ts = std::max(p_.sent_ts, Prev(commit_ts));
}

void TableScan::DeliverDdls(Ts bound, bool inclusive) {
  while (ddl_index_ < ddls_.size()) {
    Ts ts = ddls_[ddl_index_]->finished_ts;
    if (inclusive ? ts > bound : ts >= bound) break;
    ctx_.counters->ddl_events.fetch_add(1, std::memory_order_relaxed);
    d_.consumer->OnDdl(ddls_[ddl_index_++]);
  }
}

const std::vector<int>& TableScan::UkColumns(const event::TableSchemaPtr& schema) {
  if (p_.uk_schema != schema) {
    p_.uk_columns = UniqueKeyColumns(*schema);
    p_.uk_schema = schema;
  }
  return p_.uk_columns;
}

ScanOutcome TableScan::SchemaError(const Status& st) {
  if (st.code() == Code::kUnavailable) return ScanOutcome::kRetryLater;
  return Fail(st.WithContext(fmt::format("DDL events of table {}", d_.table_id)));
}

}  // namespace

ScanOutcome ScanTable(const ScanContext& ctx, DispatcherState& d, ScanProgress& p) {
  TableScan scan(ctx, d, p);
  return scan.Run();
}

ScanOutcome ScanTableTrigger(const ScanContext& ctx, DispatcherState& d, ScanProgress& p) {
  Ts end = ctx.schema->resolved_ts();
  if (end <= p.sent_ts) return ScanOutcome::kCaughtUp;
  ctx.counters->scans.fetch_add(1, std::memory_order_relaxed);
  Result<std::vector<event::DdlEventPtr>> ddls = ctx.schema->AllDdlEvents(p.sent_ts, end);
  if (!ddls.ok()) {
    if (ddls.status().code() == Code::kUnavailable) return ScanOutcome::kRetryLater;
    return FailDispatcher(d, p, ddls.status().WithContext("DDL events for the table trigger"));
  }
  for (event::DdlEventPtr& ddl : *ddls) {
    if (d.removed.load()) return ScanOutcome::kCaughtUp;
    ctx.counters->ddl_events.fetch_add(1, std::memory_order_relaxed);
    d.consumer->OnDdl(std::move(ddl));
  }
  p.sent_ts = end;
  DeliverResolved(ctx, d, p, end);
  return ScanOutcome::kCaughtUp;
}

void DeliverResolved(const ScanContext& ctx, DispatcherState& d, ScanProgress& p, Ts ts) {
  if (ts <= p.last_resolved) return;
  p.last_resolved = ts;
  p.last_resolved_time = ctx.options->clock->Now();
  ctx.counters->resolved_events.fetch_add(1, std::memory_order_relaxed);
  d.consumer->OnResolved(ts);
}

ScanOutcome FailDispatcher(DispatcherState& d, ScanProgress& p, const Status& status,
                           std::optional<Ts> failing_ts) {
  if (p.failed) return ScanOutcome::kFailed;
  p.failed = true;
  Ts ts = failing_ts.value_or(Ts(p.sent_ts.value() + 1));
  LOG_WARN("event service: dispatcher {}-{} of table {} failed at ts {}: {}", d.id.high, d.id.low,
           d.table_id, ts.value(), status.ToString());
  d.consumer->OnError(status, ts);
  return ScanOutcome::kFailed;
}

}  // namespace sluice::eventservice
