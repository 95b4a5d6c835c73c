// Test helpers for the dispatcher tests: a stateful fake sink (records
// writes, holds flushes until told, fails on command), event builders and a
// fixture recording what dispatchers report. Test-only.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/test_util.h"
#include "common/thread_annotations.h"
#include "dispatcher/block_event_executor.h"
#include "dispatcher/dispatcher.h"
#include "sink/sink.h"

namespace sluice::dispatcher::testing {

class FakeSink : public sink::Sink {
 public:
  std::string_view scheme() const override { return "fake"; }

  void AddDmlEvent(event::DmlEventPtr e) override EXCLUDES(mu_) {
    bool flush_now;
    {
      MutexLock lock(&mu_);
      if (!status_.ok()) return;  // A failed sink takes nothing more.
      log_.push_back(fmt::format("M{}", e->commit_ts.value()));
      flush_now = auto_flush_;
      if (!flush_now) pending_.push_back(e);
    }
    if (flush_now) e->PostFlush();
  }
  Status WriteBlockEvent(const event::DdlEvent& ddl) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (!status_.ok()) return status_;
    if (!fail_ddl_.ok()) return fail_ddl_;
    log_.push_back(fmt::format("D{}", ddl.finished_ts.value()));
    return Status::Ok();
  }
  void AddCheckpointTs(Ts ts) override {}
  Status status() const override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return status_;
  }
  void Close() override {}

  // Test controls.
  void set_auto_flush(bool on) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto_flush_ = on;
  }
  // Flushes the oldest `n` pending events (all by default); returns how many.
  size_t Flush(size_t n = SIZE_MAX) EXCLUDES(mu_) {
    std::vector<event::DmlEventPtr> done;
    {
      MutexLock lock(&mu_);
      while (!pending_.empty() && done.size() < n) {
        done.push_back(std::move(pending_.front()));
        pending_.pop_front();
      }
    }
    for (auto& e : done) e->PostFlush();
    return done.size();
  }
  // The sink fails: pending events are never flushed.
  void Fail(Status st) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    status_ = std::move(st);
    pending_.clear();
  }
  void FailNextDdl(Status st) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    fail_ddl_ = std::move(st);
  }
  std::string Log() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    std::string out;
    for (const std::string& s : log_) out += (out.empty() ? "" : " ") + s;
    return out;
  }
  size_t pending() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return pending_.size();
  }

 private:
  mutable Mutex mu_;
  bool auto_flush_ GUARDED_BY(mu_) = false;
  std::deque<event::DmlEventPtr> pending_ GUARDED_BY(mu_);
  std::vector<std::string> log_ GUARDED_BY(mu_);
  Status status_ GUARDED_BY(mu_);
  Status fail_ddl_ GUARDED_BY(mu_);
};

// A transaction (or piece) with one row of `bytes` payload bytes.
inline event::DmlEventPtr Dml(uint64_t commit, uint64_t start, size_t bytes = 100,
                              uint32_t piece = 0, bool last = true) {
  auto e = std::make_shared<event::DmlEvent>();
  e->commit_ts = Ts(commit);
  e->start_ts = Ts(start);
  e->piece = piece;
  e->last_piece = last;
  event::RowChange row;
  row.row.push_back(codec::Datum::Bytes(std::string(bytes, 'x')));
  e->rows.push_back(std::move(row));
  return e;
}

inline std::shared_ptr<event::DdlEvent> Ddl(
    uint64_t finished, std::vector<int64_t> blocked,
    event::InfluenceType influence = event::InfluenceType::kNormal) {
  auto d = std::make_shared<event::DdlEvent>();
  d->finished_ts = Ts(finished);
  d->query = fmt::format("DDL@{}", finished);
  d->blocked.influence = influence;
  d->blocked.table_ids = std::move(blocked);
  return d;
}

class DispatcherFixture : public ::testing::Test {
 protected:
  void TearDown() override { executor_.Stop(); }

  DispatcherOptions Options(int64_t table_id, Ts start) {
    DispatcherOptions o;
    o.id = DispatcherId{7, static_cast<uint64_t>(table_id)};
    o.table_id = table_id;
    o.start_ts = start;
    o.sink = &sink_;
    o.executor = &executor_;
    o.ack_bytes = [this](size_t n) {
      MutexLock lock(&mu_);
      acked_ += n;
    };
    o.on_block_status = [this](const BlockStatus& s) {
      MutexLock lock(&mu_);
      statuses_.push_back(s);
    };
    o.on_error = [this](const DispatcherError& e) {
      MutexLock lock(&mu_);
      errors_.push_back(e);
    };
    return o;
  }

  std::vector<BlockStatus> statuses() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return statuses_;
  }
  std::vector<DispatcherError> errors() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return errors_;
  }
  size_t acked() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return acked_;
  }
  // Waits for a status of `stage` at `ts`.
  bool WaitStatus(BlockStage stage, uint64_t ts) {
    return PollUntil([&] {
      for (const BlockStatus& s : statuses()) {
        if (s.stage == stage && s.block_ts == Ts(ts)) return true;
      }
      return false;
    });
  }
  bool WaitLog(const std::string& log) {
    return PollUntil([&] { return sink_.Log() == log; });
  }

  FakeSink sink_;
  Mutex mu_;
  std::vector<BlockStatus> statuses_ GUARDED_BY(mu_);
  std::vector<DispatcherError> errors_ GUARDED_BY(mu_);
  size_t acked_ GUARDED_BY(mu_) = 0;
  BlockEventExecutor executor_{2};  // Last: stopped first, before what its tasks use.
};

}  // namespace sluice::dispatcher::testing
