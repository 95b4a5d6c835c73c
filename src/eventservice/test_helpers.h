// Test helpers for the event service tests: hand-built table schemas, rows
// encoded with the codec's encoders, and a fake SchemaReader. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codec/datum_codec.h"
#include "codec/mysql_type.h"
#include "codec/rowcodec_v1.h"
#include "codec/rowcodec_v2.h"
#include "codec/tablecodec.h"
#include "common/kv_entry.h"
#include "common/thread_annotations.h"
#include "event/events.h"
#include "event/table_schema.h"
#include "schemastore/schema_reader.h"

namespace sluice::eventservice::testing {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

inline model::ColumnInfo Col(int64_t id, std::string_view name, uint8_t tp, uint64_t flag = 0) {
  model::ColumnInfo c;
  c.id = id;
  c.name = model::CIStr::From(name);
  c.offset = id - 1;
  c.type.tp = tp;
  c.type.flag = flag;
  c.state = model::SchemaState::kPublic;
  return c;
}

inline model::IndexInfo Index(std::string_view name, std::vector<std::string> cols, bool primary,
                              bool unique) {
  model::IndexInfo idx;
  idx.name = model::CIStr::From(name);
  idx.primary = primary;
  idx.unique = unique;
  idx.state = model::SchemaState::kPublic;
  for (const std::string& c : cols) idx.columns.push_back({model::CIStr::From(c), 0, 0});
  return idx;
}

// `t`(id BIGINT PRIMARY KEY (the handle), name VARCHAR, v BIGINT
// [, extra BIGINT DEFAULT 42]).
inline event::TableSchemaPtr IntHandleSchema(int64_t table_id, Ts version, bool with_extra = false,
                                             bool unique_name = false) {
  model::TableInfo t;
  t.id = table_id;
  t.name = model::CIStr::From("t");
  t.pk_is_handle = true;
  t.columns = {Col(1, "id", mt::kLonglong, mf::kPriKey | mf::kNotNull),
               Col(2, "name", mt::kVarchar), Col(3, "v", mt::kLonglong)};
  if (with_extra) {
    t.columns.push_back(Col(4, "extra", mt::kLonglong));
    t.columns.back().origin_default = "42";
  }
  if (unique_name) t.indices.push_back(Index("uk_name", {"name"}, false, true));
  auto s = event::TableSchema::Make("db", 1, t, version);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : nullptr;
}

// Row value v2 of (name, v[, extra]) for IntHandleSchema.
inline std::string RowValue(std::string_view name, int64_t v) {
  std::vector<int64_t> ids = {2, 3};
  std::vector<codec::Datum> vals = {codec::Datum::Bytes(std::string(name)), codec::Datum::Int64(v)};
  std::string out;
  Status st = codec::EncodeRowV2(ids, vals, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// A value padded with `pad` bytes of name, for size-driven tests.
inline std::string BigRowValue(int64_t v, size_t pad) { return RowValue(std::string(pad, 'x'), v); }

inline RawKvEntry Put(int64_t table_id, int64_t handle, std::string value, uint64_t commit,
                      uint64_t start, std::string old_value = "") {
  RawKvEntry e;
  e.op = KvOp::kPut;
  e.key = codec::EncodeRowKey(TableId(table_id), handle);
  e.value = std::move(value);
  e.old_value = std::move(old_value);
  e.commit_ts = Ts(commit);
  e.start_ts = Ts(start);
  e.region_id = RegionId(1);
  return e;
}

inline RawKvEntry Del(int64_t table_id, int64_t handle, std::string old_value, uint64_t commit,
                      uint64_t start) {
  RawKvEntry e;
  e.op = KvOp::kDelete;
  e.key = codec::EncodeRowKey(TableId(table_id), handle);
  e.old_value = std::move(old_value);
  e.commit_ts = Ts(commit);
  e.start_ts = Ts(start);
  e.region_id = RegionId(1);
  return e;
}

inline event::DdlEventPtr Ddl(int64_t table_id, uint64_t finished, std::string query,
                              event::TableSchemaPtr schema = nullptr) {
  auto d = std::make_shared<event::DdlEvent>();
  d->type = model::ActionType::kAddColumn;
  d->finished_ts = Ts(finished);
  d->query = std::move(query);
  d->table_id = table_id;
  d->table_schema = std::move(schema);
  d->blocked.table_ids = {table_id};
  return d;
}

// A SchemaReader over hand-fed versions and DDLs.
class FakeSchemaReader : public schemastore::SchemaReader {
 public:
  void AddSchema(int64_t table_id, event::TableSchemaPtr schema) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    versions_[table_id][schema->version()] = std::move(schema);
  }
  // The table no longer exists at ts >= `at`.
  void DropTable(int64_t table_id, Ts at) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    dropped_[table_id] = at;
  }
  void AddDdl(event::DdlEventPtr ddl) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ddls_.push_back(std::move(ddl));
  }
  void SetResolved(Ts ts) EXCLUDES(mu_) {
    std::vector<std::function<void(Ts)>> fns;
    {
      MutexLock lock(&mu_);
      resolved_ = ts;
      for (const auto& [h, fn] : listeners_) fns.push_back(fn);
    }
    for (const auto& fn : fns) fn(ts);
  }
  // The next GetTableSchema fails with `st`.
  void FailNextSchema(Status st) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    fail_schema_ = std::move(st);
  }
  size_t listeners() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return listeners_.size();
  }

  Ts resolved_ts() const override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return resolved_;
  }
  Result<event::TableSchemaPtr> GetTableSchema(int64_t table_id, Ts ts) const override
      EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (!fail_schema_.ok()) {
      Status st = fail_schema_;
      fail_schema_ = Status::Ok();
      return st;
    }
    if (ts > resolved_) return Unavailable("beyond resolved");
    auto d = dropped_.find(table_id);
    if (d != dropped_.end() && ts >= d->second) return NotFound("table dropped");
    auto it = versions_.find(table_id);
    if (it == versions_.end()) return NotFound("no such table");
    auto v = it->second.upper_bound(ts);
    if (v == it->second.begin()) return NotFound("table not created yet");
    return std::prev(v)->second;
  }
  Result<std::vector<event::TableRef>> AllPhysicalTables(Ts ts) const override {
    return std::vector<event::TableRef>{};
  }
  Result<std::vector<event::DdlEventPtr>> TableDdlEvents(int64_t table_id, Ts from,
                                                         Ts to) const override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (to > resolved_) return Unavailable("beyond resolved");
    std::vector<event::DdlEventPtr> out;
    for (const auto& d : ddls_) {
      bool mine = std::find(d->blocked.table_ids.begin(), d->blocked.table_ids.end(), table_id) !=
                  d->blocked.table_ids.end();
      if (mine && d->finished_ts > from && d->finished_ts <= to) out.push_back(d);
    }
    return out;
  }
  Result<std::vector<event::DdlEventPtr>> AllDdlEvents(Ts from, Ts to) const override
      EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (to > resolved_) return Unavailable("beyond resolved");
    std::vector<event::DdlEventPtr> out;
    for (const auto& d : ddls_) {
      if (d->finished_ts > from && d->finished_ts <= to) out.push_back(d);
    }
    return out;
  }
  uint64_t AddResolvedListener(std::function<void(Ts)> fn) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    listeners_[++next_listener_] = std::move(fn);
    return next_listener_;
  }
  void RemoveResolvedListener(uint64_t handle) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    listeners_.erase(handle);
  }

 private:
  mutable Mutex mu_;
  Ts resolved_ GUARDED_BY(mu_);
  std::map<int64_t, std::map<Ts, event::TableSchemaPtr>> versions_ GUARDED_BY(mu_);
  std::map<int64_t, Ts> dropped_ GUARDED_BY(mu_);
  std::vector<event::DdlEventPtr> ddls_ GUARDED_BY(mu_);
  std::map<uint64_t, std::function<void(Ts)>> listeners_ GUARDED_BY(mu_);
  uint64_t next_listener_ GUARDED_BY(mu_) = 0;
  mutable Status fail_schema_ GUARDED_BY(mu_);
};

}  // namespace sluice::eventservice::testing
