// SQL text for values and names in the statements the MySQL sink sends over
// the text protocol: each decoded datum becomes a literal that the downstream
// reads back as the same value (numbers bare, strings quoted with backslash
// escapes for a utf8mb4 connection without NO_BACKSLASH_ESCAPES, binary
// strings as X'..' hex literals). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "codec/datum.h"
#include "codec/model/column_info.h"
#include "common/status.h"

namespace sluice::sink {

// The downstream's dialect where the text differs.
enum class SqlFlavor : uint8_t { kMysql, kMariaDb, kTiDb };

// Appends 'text' with \0 \n \r \\ ' " and ^Z escaped.
void AppendQuotedString(std::string_view text, std::string* out);
// Appends X'4142..' (X'' for the empty string).
void AppendHexLiteral(std::string_view bytes, std::string* out);
// Appends `name` with backquotes doubled.
void AppendQuotedName(std::string_view name, std::string* out);

// Appends the literal for `d` in column `col`: NULL; integers, BIT values and
// decimals bare; FLOAT as the exact double of its float value (so that
// `col = literal` matches the stored float); dates, times, ENUM and SET
// members, JSON and vectors (TiDB text form) quoted; strings quoted, or hex
// for binary columns (event::IsBinaryColumn). InvalidArgument for NaN or
// infinite floats and key-only sentinel datums; Corruption for values that
// do not fit their column.
Status AppendLiteral(const ::sluice::codec::Datum& d, const model::ColumnInfo& col,
                     std::string* out);

// Appends the predicate that matches `d` in `col` for WHERE clauses:
// "`c` IS NULL", "`c` = <literal>", or for JSON columns a comparison as JSON
// (CAST(.. AS JSON) on MySQL/TiDB, JSON_EQUALS on MariaDB).
Status AppendEquals(const ::sluice::codec::Datum& d, const model::ColumnInfo& col, SqlFlavor flavor,
                    std::string* out);

}  // namespace sluice::sink
