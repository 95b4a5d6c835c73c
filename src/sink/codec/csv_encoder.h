// CsvEncoder: TiCDC's csv protocol (pkg/sink/codec/csv). Each row is one
// record: operation ("I", "U", "D"), table, schema, [commit ts],
// [is-update], then the columns in table order (virtual generated columns
// left out). With output-old-value an update is written as a "D" record of
// the old row followed by an "I" record of the new row. Strings are quoted
// (quote doubled inside) or, with an empty quote, backslash-escaped.
// Immutable after construction; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "sink/codec/codec_config.h"
#include "sink/codec/txn_encoder.h"

namespace sluice::sink::codec {

class CsvEncoder final : public TxnEncoder {
 public:
  // `config` must have passed Validate().
  explicit CsvEncoder(CsvConfig config) : config_(std::move(config)) {}

  Status Append(const event::DmlEvent& event, std::string* out) const override;
  // "ticdc-meta$operation,ticdc-meta$table,...,<columns>" + terminator when
  // output-field-header is set; empty otherwise.
  std::string FileHeader(const event::TableSchema& schema) const override;
  std::string_view extension() const override { return ".csv"; }

  // One record (without the row loop), exposed for tests and tools.
  Status AppendRow(const event::TableSchema& schema, Ts commit_ts, const event::RowChange& row,
                   std::string* out) const;

 private:
  // Appends the delimiter unless `*first`, then the field.
  void AppendField(const CsvField& field, bool* first, std::string* out) const;
  void AppendQuoted(std::string_view s, std::string* out) const;
  void AppendEscaped(std::string_view s, std::string* out) const;
  Status AppendRecord(const event::TableSchema& schema, Ts commit_ts, std::string_view op,
                      bool is_update, const std::vector<sluice::codec::Datum>& row,
                      std::string* out) const;

  CsvConfig config_;
};

}  // namespace sluice::sink::codec
