// Settings of the storage sink, with TiCDC's keys, defaults and clamps
// (pkg/cloudstorage/config.go, pkg/config/sink.go). TiCDC reads
// protocol, worker-count, flush-interval and file-size from the sink URI
// and the rest from the changefeed's [sink] config; FromUri also accepts
// the [sink] ones as URI parameters (date-separator, file-index-digit,
// enable-partition-separator, csv-*), so a URI alone can describe a sink.
// Value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "sink/codec/codec_config.h"
#include "sink/sink.h"
#include "sink/sink_uri.h"

namespace sluice::sink::storage {

enum class Protocol : uint8_t { kCsv, kCanalJson };
enum class DateSeparator : uint8_t { kNone, kYear, kMonth, kDay };

// "none" | "year" | "month" | "day" (any case); InvalidArgument otherwise.
Result<DateSeparator> ParseDateSeparator(std::string_view s);
std::string_view DateSeparatorName(DateSeparator d);

inline constexpr int kMinFileIndexWidth = 6;
inline constexpr int kMaxFileIndexWidth = 20;

struct StorageSinkOptions {
  std::string root;  // Local directory ("/data/out" for file:///data/out).
  Protocol protocol = Protocol::kCsv;
  int worker_count = 16;                                               // Clamped to [1, 512].
  std::chrono::milliseconds flush_interval = std::chrono::seconds(5);  // [100ms, 10m].
  int64_t file_size = 64 << 20;                                        // [1 KiB, 512 MiB].
  DateSeparator date_separator = DateSeparator::kDay;
  int file_index_width = kMaxFileIndexWidth;  // Outside [6, 20]: back to 20.
  bool enable_partition_separator = true;
  bool output_column_id = false;  // Schema files carry "ColumnId".
  codec::CsvConfig csv;
  codec::CanalJsonConfig canal;
  // Encoded events a worker queues before AddDmlEvent blocks.
  size_t queue_capacity = 1024;
  // Asked before every file is published (see sink.h). Not from the URI.
  WritePermit write_permit;

  // From `file://<root>?protocol=csv|canal-json&...`. InvalidArgument for
  // another scheme, a missing or unknown protocol, or a bad value;
  // out-of-range values are clamped as TiCDC does.
  static Result<StorageSinkOptions> FromUri(const SinkUri& uri);

  // Applies the clamps and checks the csv settings (used by FromUri; call
  // it after filling the struct by hand).
  Status Normalize();

  std::string_view extension() const { return protocol == Protocol::kCsv ? ".csv" : ".json"; }
};

}  // namespace sluice::sink::storage
