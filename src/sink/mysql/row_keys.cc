#include "sink/mysql/row_keys.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "codec/mysql_type.h"
#include "common/hash.h"
#include "event/value_format.h"

namespace sluice::sink {

namespace {

void AppendU64(uint64_t v, std::string* out) {
  char buf[8];
  std::memcpy(buf, &v, 8);
  out->append(buf, 8);
}

bool IsCaseInsensitive(const model::ColumnInfo& col) {
  const std::string& c = col.type.collate;
  return c.size() >= 3 && c.compare(c.size() - 3, 3, "_ci") == 0;
}

// A comparable byte form of `d`: kind, then payload.
void AppendDatumKey(const codec::Datum& d, const model::ColumnInfo& col, std::string* out) {
  using codec::DatumKind;
  out->push_back(static_cast<char>(d.kind()));
  switch (d.kind()) {
    case DatumKind::kNull:
    case DatumKind::kMinNotNull:
    case DatumKind::kMax:
      return;
    case DatumKind::kInt64:
    case DatumKind::kDuration:
      AppendU64(static_cast<uint64_t>(d.int64()), out);
      return;
    case DatumKind::kFloat32:
    case DatumKind::kFloat64: {
      double v = d.kind() == DatumKind::kFloat32 ? static_cast<double>(d.float32()) : d.float64();
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      AppendU64(bits, out);
      return;
    }
    case DatumKind::kBytes: {
      std::string_view b = d.bytes();
      if (!event::IsBinaryColumn(col)) {
        while (!b.empty() && b.back() == ' ') b.remove_suffix(1);  // PAD SPACE
      }
      AppendU64(b.size(), out);
      if (IsCaseInsensitive(col)) {
        for (char c : b) out->push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c);
      } else {
        out->append(b);
      }
      return;
    }
    case DatumKind::kDecimal:
    case DatumKind::kJson:
    case DatumKind::kVectorFloat32:
      AppendU64(d.bytes().size(), out);
      out->append(d.bytes());
      return;
    default:
      AppendU64(d.uint64(), out);
      AppendU64(static_cast<uint64_t>(d.fsp()), out);
      return;
  }
}

}  // namespace

std::vector<UniqueKey> UniqueKeys(const event::TableSchema& schema) {
  std::vector<UniqueKey> keys;
  const auto& cols = schema.columns();
  auto usable = [&](const std::vector<int>& offsets) {
    if (offsets.empty()) return false;
    for (int off : offsets) {
      if (off < 0 || schema.IsGenerated(off)) return false;
    }
    return true;
  };
  if (schema.has_key() && usable(schema.key_columns())) {
    const model::IndexInfo* pk = schema.info().GetPrimaryIndex();
    keys.push_back(
        UniqueKey{pk != nullptr && !schema.info().pk_is_handle ? pk->id : 0, schema.key_columns()});
  }
  for (const model::IndexInfo& idx : schema.info().indices) {
    if (!idx.unique || !idx.IsPublic()) continue;
    UniqueKey key{idx.id, {}};
    for (const model::IndexColumn& ic : idx.columns) {
      int found = -1;
      for (size_t i = 0; i < cols.size(); ++i) {
        if (cols[i].name.lower == ic.name.lower) found = static_cast<int>(i);
      }
      key.columns.push_back(found);
    }
    if (!usable(key.columns)) continue;
    bool duplicate = std::any_of(keys.begin(), keys.end(),
                                 [&](const UniqueKey& k) { return k.columns == key.columns; });
    if (!duplicate) keys.push_back(std::move(key));
  }
  return keys;
}

void AppendRowHashes(const event::TableSchema& schema, const std::vector<UniqueKey>& keys,
                     const std::vector<codec::Datum>& row, bool whole_row_fallback,
                     std::vector<uint64_t>* out) {
  const auto& cols = schema.columns();
  if (row.size() != cols.size()) return;
  thread_local std::string buf;  // Reused: a row's key bytes rarely fit inline.
  bool any = false;
  for (const UniqueKey& key : keys) {
    buf.clear();
    AppendU64(static_cast<uint64_t>(schema.table_id()), &buf);
    AppendU64(static_cast<uint64_t>(key.index_id), &buf);
    bool has_null = false;
    for (int off : key.columns) {
      if (row[off].is_null()) {
        has_null = true;
        break;
      }
      AppendDatumKey(row[off], cols[off], &buf);
    }
    if (has_null) continue;
    out->push_back(HashBytes(buf));
    any = true;
  }
  if (any || !whole_row_fallback) return;
  // A keyless row hashes all its values, which may be large: do not keep a
  // large buffer on the thread afterwards.
  struct Trim {
    ~Trim() {
      if (buf.capacity() > (64 << 10)) std::string().swap(buf);
    }
  } trim;
  buf.clear();
  AppendU64(static_cast<uint64_t>(schema.table_id()), &buf);
  buf.append("row");
  for (size_t i = 0; i < cols.size(); ++i) {
    if (!schema.IsGenerated(static_cast<int>(i))) AppendDatumKey(row[i], cols[i], &buf);
  }
  out->push_back(HashBytes(buf));
}

std::vector<uint64_t> ConflictKeys(const event::DmlEvent& event) {
  std::vector<uint64_t> out;
  bool keyless_row = event.schema == nullptr;
  if (event.schema != nullptr) {
    std::vector<UniqueKey> keys = UniqueKeys(*event.schema);
    for (const event::RowChange& r : event.rows) {
      size_t before = out.size();
      if (!r.row.empty()) AppendRowHashes(*event.schema, keys, r.row, false, &out);
      if (!r.pre_row.empty()) AppendRowHashes(*event.schema, keys, r.pre_row, false, &out);
      if (out.size() == before) keyless_row = true;
    }
  }
  // A row without any identity conflicts with every keyless row of its
  // dispatcher (TiCDC uses the dispatcher id as its key).
  if (keyless_row || out.empty()) {
    std::string buf = "dispatcher";
    AppendU64(event.dispatcher_id.high, &buf);
    AppendU64(event.dispatcher_id.low, &buf);
    out.push_back(HashBytes(buf));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace sluice::sink
