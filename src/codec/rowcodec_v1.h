// Row format v1 (legacy; pkg/tablecodec EncodeOldRow / DecodeRowWithMap):
// a sequence of (column id, value) datum pairs in value form. The id is an
// int datum (varint); values are "flattened" first: times become their
// packed uint64, durations int64 nanoseconds, enum/set/bit uint64. A row
// without columns is the single byte 0x00. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codec/datum.h"
#include "codec/row.h"
#include "codec/tablecodec.h"
#include "common/status.h"

namespace sluice::codec {

// Decodes a v1 row into one datum per column of `cols` (see DecodeRow).
// Corruption on malformed datums, a non-integer column id or a dangling id.
Status DecodeRowV1(std::string_view value, std::span<const ColumnSpec> cols,
                   const RowHandle& handle, std::vector<Datum>* out);

// Encodes (column id, datum) pairs in the given order.
Status EncodeRowV1(std::span<const int64_t> col_ids, std::span<const Datum> values,
                   std::string* out);

}  // namespace sluice::codec
