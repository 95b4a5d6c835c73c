// Reads TiCDC csv data back (the inverse of CsvEncoder, with the parsing
// rules of TiDB Lightning's CSV parser that TiCDC's consumer uses): quoted
// fields with doubled quotes, or backslash escapes when the quote is empty;
// an unquoted field equal to the null string is NULL. Pure functions;
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sink/codec/codec_config.h"
#include "sink/codec/decoded_row.h"

namespace sluice::sink::codec {

// A column of the table the data belongs to, in the order the records
// carry them (from the schema file).
struct CsvColumn {
  std::string name;
  bool binary = false;  // Value is base64/hex of the raw bytes.
};

// Splits `data` into records of fields (nullopt for NULL). A header record
// is returned like any other. Corruption for an unterminated quote or
// garbage after a closing quote.
Result<std::vector<std::vector<std::optional<std::string>>>> SplitCsvRecords(
    std::string_view data, const CsvConfig& config);

// Decodes a whole csv data file: skips the header record when
// output-field-header is set, and maps the fields of every record onto
// `columns`. Corruption for a record with a bad operation, commit ts or
// field count, or a binary value that does not decode.
Result<std::vector<DecodedRow>> DecodeCsv(std::string_view data, const CsvConfig& config,
                                          const std::vector<CsvColumn>& columns);

}  // namespace sluice::sink::codec
