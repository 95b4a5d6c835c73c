// Text form of decoded values, shared by every writer that renders rows as
// text (CSV, canal-json, SQL literals, the checker) so that they agree with
// each other and with what MySQL prints. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "codec/datum.h"
#include "codec/model/column_info.h"
#include "common/status.h"

namespace sluice::event {

// The value as MySQL would print it, nullopt for NULL: integers in decimal,
// floats in the shortest form that reads back exactly, decimals as stored,
// DATE/DATETIME/TIMESTAMP and TIME in MySQL format with the column's fsp,
// ENUM/SET as member names, BIT as its unsigned value, JSON as text, strings
// and binary strings as their raw bytes. Corruption for a value that does not
// fit its column (e.g. a malformed binary JSON).
Result<std::optional<std::string>> DatumText(const codec::Datum& d, const model::ColumnInfo& col);

// True for columns whose bytes are binary (BINARY/VARBINARY/BLOB with the
// binary charset, BIT): text writers encode them instead of printing raw.
bool IsBinaryColumn(const model::ColumnInfo& col);

}  // namespace sluice::event
