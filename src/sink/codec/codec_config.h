// Settings of the csv and canal-json encoders, with TiCDC's keys and
// defaults ([sink] terminator, [sink.csv] ..., enable-tidb-extension, ...).
// Value types.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "sink/codec/column_value.h"

namespace sluice::sink::codec {

// TiCDC's default line terminator for storage sinks ([sink] terminator).
inline constexpr std::string_view kCrlf = "\r\n";

// [sink.csv] plus [sink] terminator. Defaults as in TiCDC's default replica
// config: delimiter ",", quote "\"", null "\N", base64, CRLF.
struct CsvConfig {
  std::string delimiter = ",";
  std::string quote = "\"";  // Empty: no quoting; escape with backslashes.
  std::string null_string = "\\N";
  std::string terminator = std::string(kCrlf);
  bool include_commit_ts = false;
  BinaryEncoding binary_encoding = BinaryEncoding::kBase64;
  bool output_old_value = false;     // An update becomes a D and an I record.
  bool output_field_header = false;  // A header record opens every file.

  // TiCDC's checks: quote at most one byte and no line break; delimiter
  // 1-3 bytes without line breaks and sharing no byte with the quote.
  // InvalidArgument naming the setting.
  Status Validate() const;
};

// "base64" or "hex" (InvalidArgument otherwise).
Result<BinaryEncoding> ParseBinaryEncoding(std::string_view name);

// The canal-json settings TiCDC applies in the storage sink.
struct CanalJsonConfig {
  std::string terminator = std::string(kCrlf);
  bool enable_tidb_extension = false;        // Adds "_tidb": {"commitTs": ...}.
  bool only_output_updated_columns = false;  // "old" keeps only changed columns.
  bool delete_only_handle_key_columns = false;
};

}  // namespace sluice::sink::codec
