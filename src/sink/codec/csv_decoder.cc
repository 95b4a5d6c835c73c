#include "sink/codec/csv_decoder.h"

#include <fmt/format.h>

#include <charconv>

#include "codec/model/go_json.h"
#include "sink/codec/go_format.h"

namespace sluice::sink::codec {

namespace {

using Field = std::optional<std::string>;
using Record = std::vector<Field>;

char Unescape(char c) {
  switch (c) {
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case '0':
      return '\0';
    case 'b':
      return '\b';
    case 'Z':
      return '\x1a';
    default:
      return c;
  }
}

class CsvParser {
 public:
  CsvParser(std::string_view data, const CsvConfig& config) : data_(data), config_(config) {}

  Result<std::vector<Record>> Parse() {
    std::vector<Record> records;
    while (pos_ < data_.size()) {
      Record record;
      bool end_of_record = false;
      while (!end_of_record) {
        ASSIGN_OR_RETURN(Field field, ParseField(&end_of_record));
        record.push_back(std::move(field));
      }
      records.push_back(std::move(record));
    }
    return records;
  }

 private:
  bool At(std::string_view token) const {
    return !token.empty() && data_.substr(pos_).starts_with(token);
  }

  // After a field: consumes a delimiter (more fields follow) or a
  // terminator / end of data (record ends).
  Status EndField(bool* end_of_record) {
    if (pos_ >= data_.size()) {
      *end_of_record = true;
    } else if (At(config_.terminator)) {
      pos_ += config_.terminator.size();
      *end_of_record = true;
    } else if (At(config_.delimiter)) {
      pos_ += config_.delimiter.size();
    } else {
      return Corruption(fmt::format("csv: unexpected byte at offset {}", pos_));
    }
    return Status::Ok();
  }

  Result<Field> ParseField(bool* end_of_record) {
    if (At(config_.quote)) return ParseQuoted(end_of_record);
    std::string raw;
    std::string value;
    const bool escapes = config_.quote.empty();
    while (pos_ < data_.size() && !At(config_.delimiter) && !At(config_.terminator)) {
      char c = data_[pos_++];
      raw.push_back(c);
      if (escapes && c == '\\' && pos_ < data_.size()) {
        raw.push_back(data_[pos_]);
        value.push_back(Unescape(data_[pos_++]));
      } else {
        value.push_back(c);
      }
    }
    RETURN_IF_ERROR(EndField(end_of_record));
    if (raw == config_.null_string) return Field();
    return Field(std::move(value));
  }

  Result<Field> ParseQuoted(bool* end_of_record) {
    const std::string& q = config_.quote;
    const size_t start = pos_;
    pos_ += q.size();
    std::string value;
    while (true) {
      if (pos_ >= data_.size()) {
        return Corruption(fmt::format("csv: unterminated quoted field at offset {}", start));
      }
      if (At(q)) {
        pos_ += q.size();
        if (!At(q)) break;
        pos_ += q.size();
        value.append(q);
        continue;
      }
      value.push_back(data_[pos_++]);
    }
    RETURN_IF_ERROR(EndField(end_of_record));
    return Field(std::move(value));
  }

  std::string_view data_;
  const CsvConfig& config_;
  size_t pos_ = 0;
};

Result<RowOp> ParseOp(const Field& f) {
  if (f == "I") return RowOp::kInsert;
  if (f == "U") return RowOp::kUpdate;
  if (f == "D") return RowOp::kDelete;
  return Corruption(fmt::format("csv: invalid operation type '{}'", f.value_or("NULL")));
}

Result<DecodedRow> DecodeRecord(Record record, const CsvConfig& config,
                                const std::vector<CsvColumn>& columns) {
  size_t meta = 3 + (config.include_commit_ts ? 1 : 0) + (config.output_old_value ? 1 : 0);
  if (record.size() != meta + columns.size()) {
    return Corruption(fmt::format("csv: record has {} fields, expected {} ({} columns)",
                                  record.size(), meta + columns.size(), columns.size()));
  }
  DecodedRow row;
  ASSIGN_OR_RETURN(row.op, ParseOp(record[0]));
  row.table = record[1].value_or("");
  row.schema = record[2].value_or("");
  size_t next = 3;
  if (config.include_commit_ts) {
    std::string ts = record[next++].value_or("");
    auto [end, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), row.commit_ts);
    if (ts.empty() || ec != std::errc() || end != ts.data() + ts.size()) {
      return Corruption(fmt::format("csv: commit ts '{}' is not a number", ts));
    }
  }
  if (config.output_old_value) row.is_update = record[next++] == "true";
  for (size_t i = 0; i < columns.size(); ++i) {
    Field value = std::move(record[next + i]);
    if (value.has_value() && columns[i].binary) {
      std::optional<std::string> bytes = config.binary_encoding == BinaryEncoding::kHex
                                             ? HexDecode(*value)
                                             : model::Base64Decode(*value);
      if (!bytes.has_value()) {
        return Corruption(fmt::format("csv: column {} is not valid binary text", columns[i].name));
      }
      value = std::move(bytes);
    }
    row.columns.push_back({columns[i].name, std::move(value)});
  }
  return row;
}

}  // namespace

std::string_view RowOpName(RowOp op) {
  switch (op) {
    case RowOp::kInsert:
      return "insert";
    case RowOp::kUpdate:
      return "update";
    case RowOp::kDelete:
      return "delete";
  }
  return "unknown";
}

Result<std::vector<std::vector<std::optional<std::string>>>> SplitCsvRecords(
    std::string_view data, const CsvConfig& config) {
  return CsvParser(data, config).Parse();
}

Result<std::vector<DecodedRow>> DecodeCsv(std::string_view data, const CsvConfig& config,
                                          const std::vector<CsvColumn>& columns) {
  ASSIGN_OR_RETURN(std::vector<Record> records, SplitCsvRecords(data, config));
  std::vector<DecodedRow> rows;
  size_t first = config.output_field_header && !records.empty() ? 1 : 0;
  rows.reserve(records.size() - first);
  for (size_t i = first; i < records.size(); ++i) {
    Result<DecodedRow> row = DecodeRecord(std::move(records[i]), config, columns);
    if (!row.ok()) return row.status().WithContext(fmt::format("record {}", i + 1));
    rows.push_back(std::move(row).value());
  }
  return rows;
}

}  // namespace sluice::sink::codec
