// TiDB table keys (pkg/tablecodec/tablecodec.go):
//   table prefix   't' + EncodeInt(table_id)
//   record key     't' + EncodeInt(table_id) + "_r" + EncodeInt(handle)
//                  or + the key-form datums of a common (clustered) handle
//   index key      't' + EncodeInt(table_id) + "_i" + EncodeInt(index_id)
//                  + key-form datums [+ handle for non-unique indexes]
// Keys here are raw (logical) keys; region and span boundaries use their
// memcomparable form (common/memcomparable.h). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/datum.h"
#include "common/span.h"
#include "common/status.h"
#include "common/strong_id.h"

namespace sluice::codec {

inline constexpr char kTablePrefix = 't';
inline constexpr std::string_view kRecordPrefixSep = "_r";
inline constexpr std::string_view kIndexPrefixSep = "_i";
// 't' + 8-byte table id + 2-byte separator.
inline constexpr size_t kTablePrefixLength = 9;
inline constexpr size_t kRecordPrefixLength = 11;
inline constexpr size_t kRecordRowKeyLength = 19;

// A row handle: an int64 (tables whose PK is the row id) or the encoded
// key-form datums of a clustered primary key. `common` is a view.
struct RowHandle {
  bool is_int = true;
  int64_t int_value = 0;
  std::string_view common;

  static RowHandle Int(int64_t v) { return RowHandle{true, v, {}}; }
  static RowHandle Common(std::string_view encoded) { return RowHandle{false, 0, encoded}; }
  // The bytes a key carries after "_r": EncodeInt(v) or the common bytes.
  std::string Encoded() const;
};

std::string EncodeTablePrefix(TableId table_id);
// 't' + table id + "_r", the common prefix of every record key of a table.
std::string EncodeRecordPrefix(TableId table_id);
std::string EncodeRowKey(TableId table_id, int64_t handle);
std::string EncodeRowKeyWithCommonHandle(TableId table_id, std::string_view encoded_handle);
std::string EncodeRowKeyWithHandle(TableId table_id, const RowHandle& handle);

std::string EncodeIndexPrefix(TableId table_id, int64_t index_id);
// Index key over `values` (key form). Pass `handle` for non-unique indexes
// (and unique ones holding NULL); nullptr for unique indexes. An int handle
// is appended as an int datum, a common handle as its bytes.
Status EncodeIndexKey(TableId table_id, int64_t index_id, const std::vector<Datum>& values,
                      const RowHandle* handle, std::string* out);

// len > 11, 't' prefix and 'r' (resp. 'i') at byte 10.
bool IsRecordKey(std::string_view key);
bool IsIndexKey(std::string_view key);

// Table id of any table key ('t' + 8 bytes). Corruption otherwise.
Result<TableId> DecodeTableId(std::string_view key);

struct DecodedRowKey {
  TableId table_id;
  RowHandle handle;  // a common handle is a view into the key
};
// Exactly 8 bytes after "_r" are an int handle; anything else must be a
// non-empty sequence of valid key-form datums (a common handle).
Result<DecodedRowKey> DecodeRowKey(std::string_view key);

struct DecodedIndexKey {
  TableId table_id;
  int64_t index_id = 0;
  std::string_view values;  // key-form datums (and the handle, if any)
};
Result<DecodedIndexKey> DecodeIndexKey(std::string_view key);

// Table record spans live in common/span.h (TableRecordSpan, ToComparable);
// this alias keeps codec callers short.
using KeySpan = Span;
using ::sluice::TableRecordSpan;
// The raw record range of a table with both ends memcomparable-encoded (as
// PD and CDC use).
Span ComparableTableRecordSpan(TableId table_id);

}  // namespace sluice::codec
