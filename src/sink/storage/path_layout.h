// The storage sink's directory layout, as TiCDC names it
// (pkg/cloudstorage/path_key.go, generator.go):
//   <schema>/<table>/<table version>/[<partition id>/][<date>/]CDC<index>.<ext>
//   <schema>/<table>/<table version>/[<partition id>/][<date>/]meta/CDC.index
// The index is zero-padded to the file index width; CDC.index holds the
// name of the newest data file of its directory plus "\n". The date is the
// local calendar date of the flush ("2006", "2006-01" or "2006-01-02").
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "sink/storage/storage_options.h"

namespace sluice::sink::storage {

struct DataDirKey {
  std::string schema;
  std::string table;
  uint64_t table_version = 0;
  int64_t partition = 0;  // 0: no partition level.
  std::string date;       // Empty: no date level.
  auto operator<=>(const DataDirKey&) const = default;
};

// "<schema>/<table>/<version>[/<partition>][/<date>]".
std::string DataDir(const DataDirKey& key);
// "CDC000001.csv" for index 1, width 6, extension ".csv".
std::string DataFileName(uint64_t index, std::string_view extension, int width);
// "<dir>/meta/CDC.index".
std::string IndexFilePath(std::string_view dir);
// The date level for `t` (local time zone); empty for kNone.
std::string DateString(Clock::WallTime t, DateSeparator separator);

// The index of a data file name "CDC<digits><extension>"; nullopt for any
// other name (temp files included).
std::optional<uint64_t> ParseDataFileName(std::string_view name, std::string_view extension);

// True if `s` has the shape of the date level for `separator`.
bool IsDateDir(std::string_view s, DateSeparator separator);

}  // namespace sluice::sink::storage
