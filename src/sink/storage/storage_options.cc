#include "sink/storage/storage_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace sluice::sink::storage {

namespace {

Status SetBool(const SinkUri& uri, std::string_view name, bool* out) {
  ASSIGN_OR_RETURN(std::optional<bool> v, uri.BoolParam(name));
  if (v.has_value()) *out = *v;
  return Status::Ok();
}

void SetString(const SinkUri& uri, const std::string& name, std::string* out) {
  auto it = uri.params.find(name);
  if (it != uri.params.end()) *out = it->second;
}

}  // namespace

Result<DateSeparator> ParseDateSeparator(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "none") return DateSeparator::kNone;
  if (lower == "year") return DateSeparator::kYear;
  if (lower == "month") return DateSeparator::kMonth;
  if (lower == "day") return DateSeparator::kDay;
  return InvalidArgument(fmt::format("storage sink: invalid date-separator '{}'", s));
}

std::string_view DateSeparatorName(DateSeparator d) {
  switch (d) {
    case DateSeparator::kNone:
      return "none";
    case DateSeparator::kYear:
      return "year";
    case DateSeparator::kMonth:
      return "month";
    case DateSeparator::kDay:
      return "day";
  }
  return "none";
}

Status StorageSinkOptions::Normalize() {
  worker_count = std::clamp(worker_count, 1, 512);
  flush_interval = std::clamp<std::chrono::milliseconds>(
      flush_interval, std::chrono::milliseconds(100), std::chrono::minutes(10));
  file_size = std::clamp<int64_t>(file_size, 1 << 10, 512 << 20);
  if (file_index_width < kMinFileIndexWidth || file_index_width > kMaxFileIndexWidth) {
    file_index_width = kMaxFileIndexWidth;
  }
  if (queue_capacity == 0) queue_capacity = 1;
  if (root.empty()) return InvalidArgument("storage sink: empty path");
  if (canal.terminator.empty()) return InvalidArgument("storage sink: empty terminator");
  if (protocol == Protocol::kCsv) RETURN_IF_ERROR(csv.Validate());
  return Status::Ok();
}

Result<StorageSinkOptions> StorageSinkOptions::FromUri(const SinkUri& uri) {
  if (uri.scheme != "file" && uri.scheme != "local") {
    return InvalidArgument(
        fmt::format("storage sink: unsupported scheme '{}' (file:// only)", uri.scheme));
  }
  StorageSinkOptions o;
  o.root = uri.path;
  auto proto = uri.params.find("protocol");
  if (proto == uri.params.end()) {
    return InvalidArgument("storage sink: the URI needs protocol=csv or protocol=canal-json");
  }
  if (proto->second == "csv") {
    o.protocol = Protocol::kCsv;
  } else if (proto->second == "canal-json") {
    o.protocol = Protocol::kCanalJson;
  } else {
    return InvalidArgument(
        fmt::format("storage sink: protocol '{}' is not csv or canal-json", proto->second));
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> workers, uri.IntParam("worker-count", 1, 1 << 20));
  if (workers) o.worker_count = static_cast<int>(*workers);
  ASSIGN_OR_RETURN(auto interval, uri.DurationParam("flush-interval"));
  if (interval) o.flush_interval = *interval;
  ASSIGN_OR_RETURN(std::optional<int64_t> size, uri.SizeParam("file-size"));
  if (size) o.file_size = *size;
  auto sep = uri.params.find("date-separator");
  if (sep != uri.params.end()) {
    ASSIGN_OR_RETURN(o.date_separator, ParseDateSeparator(sep->second));
  }
  for (const char* key : {"file-index-digit", "file-index-width"}) {
    ASSIGN_OR_RETURN(std::optional<int64_t> width, uri.IntParam(key, 0, 1000));
    if (width) o.file_index_width = static_cast<int>(*width);
  }
  RETURN_IF_ERROR(SetBool(uri, "enable-partition-separator", &o.enable_partition_separator));
  RETURN_IF_ERROR(SetBool(uri, "output-column-id", &o.output_column_id));
  RETURN_IF_ERROR(SetBool(uri, "enable-tidb-extension", &o.canal.enable_tidb_extension));
  RETURN_IF_ERROR(
      SetBool(uri, "only-output-updated-columns", &o.canal.only_output_updated_columns));
  std::string terminator = o.csv.terminator;
  SetString(uri, "terminator", &terminator);
  o.csv.terminator = o.canal.terminator = terminator;
  SetString(uri, "csv-delimiter", &o.csv.delimiter);
  SetString(uri, "csv-quote", &o.csv.quote);
  SetString(uri, "csv-null", &o.csv.null_string);
  RETURN_IF_ERROR(SetBool(uri, "csv-include-commit-ts", &o.csv.include_commit_ts));
  RETURN_IF_ERROR(SetBool(uri, "csv-output-old-value", &o.csv.output_old_value));
  RETURN_IF_ERROR(SetBool(uri, "csv-output-field-header", &o.csv.output_field_header));
  auto bin = uri.params.find("csv-binary-encoding-method");
  if (bin != uri.params.end()) {
    ASSIGN_OR_RETURN(o.csv.binary_encoding, codec::ParseBinaryEncoding(bin->second));
  }
  RETURN_IF_ERROR(o.Normalize());
  return o;
}

}  // namespace sluice::sink::storage
