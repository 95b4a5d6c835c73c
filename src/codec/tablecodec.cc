#include "codec/tablecodec.h"

#include "codec/datum_codec.h"
#include "codec/number.h"
#include "common/memcomparable.h"

namespace sluice::codec {

namespace {

// Checks 't' + 8-byte id + the two-byte separator.
bool HasPrefixWithMarker(std::string_view key, char marker) {
  return key.size() > kRecordPrefixLength && key[0] == kTablePrefix && key[9] == '_' &&
         key[10] == marker;
}

std::string PrefixWithSep(TableId table_id, std::string_view sep) {
  std::string out = EncodeTablePrefix(table_id);
  out.append(sep);
  return out;
}

}  // namespace

std::string RowHandle::Encoded() const {
  if (!is_int) return std::string(common);
  std::string out;
  EncodeInt(int_value, &out);
  return out;
}

std::string EncodeTablePrefix(TableId table_id) { return TablePrefix(table_id); }

std::string EncodeRecordPrefix(TableId table_id) {
  return PrefixWithSep(table_id, kRecordPrefixSep);
}

std::string EncodeRowKey(TableId table_id, int64_t handle) {
  std::string out = EncodeRecordPrefix(table_id);
  EncodeInt(handle, &out);
  return out;
}

std::string EncodeRowKeyWithCommonHandle(TableId table_id, std::string_view encoded_handle) {
  std::string out = EncodeRecordPrefix(table_id);
  out.append(encoded_handle);
  return out;
}

std::string EncodeRowKeyWithHandle(TableId table_id, const RowHandle& handle) {
  return handle.is_int ? EncodeRowKey(table_id, handle.int_value)
                       : EncodeRowKeyWithCommonHandle(table_id, handle.common);
}

std::string EncodeIndexPrefix(TableId table_id, int64_t index_id) {
  std::string out = PrefixWithSep(table_id, kIndexPrefixSep);
  EncodeInt(index_id, &out);
  return out;
}

Status EncodeIndexKey(TableId table_id, int64_t index_id, const std::vector<Datum>& values,
                      const RowHandle* handle, std::string* out) {
  std::string key = EncodeIndexPrefix(table_id, index_id);
  RETURN_IF_ERROR(EncodeKeyDatums(values, &key));
  if (handle != nullptr && handle->is_int) {
    RETURN_IF_ERROR(EncodeKeyDatum(Datum::Int64(handle->int_value), &key));
  } else if (handle != nullptr) {
    key.append(handle->common);
  }
  out->append(key);
  return Status::Ok();
}

bool IsRecordKey(std::string_view key) { return HasPrefixWithMarker(key, 'r'); }
bool IsIndexKey(std::string_view key) { return HasPrefixWithMarker(key, 'i'); }

Result<TableId> DecodeTableId(std::string_view key) {
  if (key.size() < kTablePrefixLength || key[0] != kTablePrefix) {
    return Corruption("table key: missing 't' prefix or table id");
  }
  std::string_view rest = key.substr(1);
  ASSIGN_OR_RETURN(int64_t id, DecodeInt(&rest));
  return TableId(id);
}

Result<DecodedRowKey> DecodeRowKey(std::string_view key) {
  if (!IsRecordKey(key)) return Corruption("row key: not a record key");
  ASSIGN_OR_RETURN(TableId table_id, DecodeTableId(key));
  std::string_view rest = key.substr(kRecordPrefixLength);
  if (rest.size() == 8) {
    ASSIGN_OR_RETURN(int64_t handle, DecodeInt(&rest));
    return DecodedRowKey{table_id, RowHandle::Int(handle)};
  }
  for (std::string_view walk = rest; !walk.empty();) {
    Result<size_t> n = PeekDatumLength(walk);
    if (!n.ok()) return n.status().WithContext("row key: common handle");
    walk.remove_prefix(*n);
  }
  return DecodedRowKey{table_id, RowHandle::Common(rest)};
}

Result<DecodedIndexKey> DecodeIndexKey(std::string_view key) {
  if (!IsIndexKey(key)) return Corruption("index key: not an index key");
  ASSIGN_OR_RETURN(TableId table_id, DecodeTableId(key));
  std::string_view rest = key.substr(kRecordPrefixLength);
  ASSIGN_OR_RETURN(int64_t index_id, DecodeInt(&rest));
  return DecodedIndexKey{table_id, index_id, rest};
}

Span ComparableTableRecordSpan(TableId table_id) { return ToComparable(TableRecordSpan(table_id)); }

}  // namespace sluice::codec
