#include "sink/storage/path_layout.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <ctime>

namespace sluice::sink::storage {

std::string DataDir(const DataDirKey& key) {
  std::string out = fmt::format("{}/{}/{}", key.schema, key.table, key.table_version);
  if (key.partition != 0) out += fmt::format("/{}", key.partition);
  if (!key.date.empty()) out += "/" + key.date;
  return out;
}

std::string DataFileName(uint64_t index, std::string_view extension, int width) {
  return fmt::format("CDC{:0{}}{}", index, width, extension);
}

std::string IndexFilePath(std::string_view dir) { return fmt::format("{}/meta/CDC.index", dir); }

std::string DateString(Clock::WallTime t, DateSeparator separator) {
  if (separator == DateSeparator::kNone) return "";
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&secs, &tm);
  switch (separator) {
    case DateSeparator::kYear:
      return fmt::format("{:04}", tm.tm_year + 1900);
    case DateSeparator::kMonth:
      return fmt::format("{:04}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1);
    default:
      return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
  }
}

std::optional<uint64_t> ParseDataFileName(std::string_view name, std::string_view extension) {
  if (!name.starts_with("CDC") || !name.ends_with(extension)) return std::nullopt;
  std::string_view digits = name.substr(3, name.size() - 3 - extension.size());
  if (digits.size() < static_cast<size_t>(kMinFileIndexWidth)) return std::nullopt;
  uint64_t index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return index;
}

bool IsDateDir(std::string_view s, DateSeparator separator) {
  std::string_view shape;
  switch (separator) {
    case DateSeparator::kNone:
      return false;
    case DateSeparator::kYear:
      shape = "dddd";
      break;
    case DateSeparator::kMonth:
      shape = "dddd-dd";
      break;
    case DateSeparator::kDay:
      shape = "dddd-dd-dd";
      break;
  }
  if (s.size() != shape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool digit = std::isdigit(static_cast<unsigned char>(s[i])) != 0;
    if (shape[i] == 'd' ? !digit : s[i] != '-') return false;
  }
  return true;
}

}  // namespace sluice::sink::storage
