#include "sink/codec/csv_encoder.h"

#include <fmt/format.h>

namespace sluice::sink::codec {

void CsvEncoder::AppendQuoted(std::string_view s, std::string* out) const {
  const std::string& q = config_.quote;
  out->append(q);
  size_t start = 0;
  for (size_t pos = s.find(q); pos != std::string_view::npos; pos = s.find(q, start)) {
    out->append(s, start, pos - start);
    out->append(q).append(q);
    start = pos + q.size();
  }
  out->append(s, start, std::string_view::npos);
  out->append(q);
}

void CsvEncoder::AppendEscaped(std::string_view s, std::string* out) const {
  const std::string& delim = config_.delimiter;
  size_t last = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    bool delim_start = s.substr(i).starts_with(delim);
    if (ch != '\r' && ch != '\n' && ch != '\\' && !delim_start) continue;
    out->append(s, last, i - last);
    out->push_back('\\');
    out->push_back(ch == '\n' ? 'n' : ch == '\r' ? 'r' : ch);
    if (delim_start) {
      for (size_t k = 1; k < delim.size(); ++k) {
        out->push_back('\\');
        out->push_back(delim[k]);
      }
      last = i + delim.size();
      i = last - 1;
    } else {
      last = i + 1;
    }
  }
  out->append(s, last, std::string_view::npos);
}

void CsvEncoder::AppendField(const CsvField& field, bool* first, std::string* out) const {
  if (!*first) out->append(config_.delimiter);
  *first = false;
  if (!field.text.has_value()) {
    out->append(config_.null_string);
  } else if (!field.quoted) {
    out->append(*field.text);
  } else if (!config_.quote.empty()) {
    AppendQuoted(*field.text, out);
  } else {
    AppendEscaped(*field.text, out);
  }
}

Status CsvEncoder::AppendRecord(const event::TableSchema& schema, Ts commit_ts, std::string_view op,
                                bool is_update, const std::vector<sluice::codec::Datum>& row,
                                std::string* out) const {
  const auto& columns = schema.columns();
  if (row.size() != columns.size()) {
    return Internal(fmt::format("csv: row of {} has {} values for {} columns", schema.QuotedName(),
                                row.size(), columns.size()));
  }
  bool first = true;
  AppendField({std::string(op), true}, &first, out);
  AppendField({schema.table_name(), true}, &first, out);
  AppendField({schema.schema_name(), true}, &first, out);
  if (config_.include_commit_ts) {
    AppendField({std::to_string(commit_ts.value()), false}, &first, out);
  }
  if (config_.output_old_value) {
    AppendField({is_update ? "true" : "false", false}, &first, out);
  }
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].IsVirtualGenerated()) continue;
    Result<CsvField> field = CsvValue(row[i], columns[i], config_.binary_encoding);
    if (!field.ok()) {
      return field.status().WithContext(
          fmt::format("csv: {} column {}", schema.QuotedName(), columns[i].name.original));
    }
    AppendField(*field, &first, out);
  }
  out->append(config_.terminator);
  return Status::Ok();
}

Status CsvEncoder::AppendRow(const event::TableSchema& schema, Ts commit_ts,
                             const event::RowChange& row, std::string* out) const {
  switch (row.kind) {
    case event::RowKind::kInsert:
      return AppendRecord(schema, commit_ts, "I", false, row.row, out);
    case event::RowKind::kDelete:
      return AppendRecord(schema, commit_ts, "D", false, row.pre_row, out);
    case event::RowKind::kUpdate:
      if (config_.output_old_value) {
        RETURN_IF_ERROR(AppendRecord(schema, commit_ts, "D", true, row.pre_row, out));
        return AppendRecord(schema, commit_ts, "I", true, row.row, out);
      }
      return AppendRecord(schema, commit_ts, "U", true, row.row, out);
  }
  return Internal("csv: unknown row kind");
}

Status CsvEncoder::Append(const event::DmlEvent& event, std::string* out) const {
  if (event.schema == nullptr) return Internal("csv: DML event without a schema");
  const size_t size_before = out->size();
  for (const event::RowChange& row : event.rows) {
    Status st = AppendRow(*event.schema, event.commit_ts, row, out);
    if (!st.ok()) {
      out->resize(size_before);
      return st;
    }
  }
  return Status::Ok();
}

std::string CsvEncoder::FileHeader(const event::TableSchema& schema) const {
  if (!config_.output_field_header) return "";
  const std::string& d = config_.delimiter;
  std::string out = "ticdc-meta$operation" + d + "ticdc-meta$table" + d + "ticdc-meta$schema";
  if (config_.include_commit_ts) out += d + "ticdc-meta$commit-ts";
  if (config_.output_old_value) out += d + "ticdc-meta$is-update";
  for (const auto& col : schema.columns()) {
    if (col.IsVirtualGenerated()) continue;
    out += d + col.name.original;
  }
  out += config_.terminator;
  return out;
}

}  // namespace sluice::sink::codec
