// Logging on spdlog with fmt formatting, and redaction of user data.
//
//   LOG_INFO("region {} split, span {}", region_id.value(), span.ToString());
//   LOG_WARN("unmatched commit, key {}", Redact(key));
//
// Keys, values and other user data must go through Redact() / RedactText():
// redaction is ON by default (docs/architecture.md, "Invariants": redacted
// logs) and then they log as "?". All functions here are thread-safe. Init()
// and SetSink() replace the process logger; messages logged concurrently go
// to the old or the new one.
#pragma once

#include <spdlog/spdlog.h>

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice {

// How user data appears in logs (TiDB / TiCDC `redact-info-log`).
enum class RedactionMode {
  kOff,     // Keys as upper-case hex, text as is.
  kOn,      // Everything as "?". The default.
  kMarker,  // Wrapped in ‹ › so a later tool can strip or keep it.
};

void SetRedaction(RedactionMode mode);
RedactionMode GetRedaction();
// Accepts "off"/"false", "on"/"true", "marker" (any case).
Result<RedactionMode> ParseRedactionMode(std::string_view text);

// Binary user data (keys, values): "?" when on, upper-case hex when off,
// "‹HEX›" in marker mode.
std::string Redact(std::string_view bytes);
// Textual user data (SQL, names of user objects in error strings): "?" when
// on, as is when off, "‹text›" in marker mode with ‹ and › inside doubled.
std::string RedactText(std::string_view text);

// Sets a redaction mode for the lifetime of the object and restores the
// previous one afterwards. For tests.
class ScopedRedaction {
 public:
  explicit ScopedRedaction(RedactionMode mode) : previous_(GetRedaction()) { SetRedaction(mode); }
  ~ScopedRedaction() { SetRedaction(previous_); }
  ScopedRedaction(const ScopedRedaction&) = delete;
  ScopedRedaction& operator=(const ScopedRedaction&) = delete;

 private:
  const RedactionMode previous_;
};

namespace logging {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Accepts trace, debug, info, warn/warning, error, off (any case).
Result<Level> ParseLevel(std::string_view text);

// Logs at `level` and above to `file` (appending) or, without a file, to
// stderr. Returns IoError if the file cannot be opened. Until Init() is
// called, messages at info and above go to stderr.
Status Init(Level level, const std::optional<std::string>& file = std::nullopt);

// Sends everything at `level` and above to `sink` instead (tests capture
// output with an spdlog ostream sink this way).
void SetSink(spdlog::sink_ptr sink, Level level = Level::kInfo);

void SetLevel(Level level);
Level GetLevel();
void Flush();

// The current process logger. Valid for the life of the process.
spdlog::logger* Logger();

}  // namespace logging
}  // namespace sluice

// LOG_<LEVEL>(fmt, args...): the format string is checked at compile time;
// arguments are not evaluated when the level is disabled.
#define SLUICE_LOG(level, ...)                                                              \
  do {                                                                                      \
    ::spdlog::logger* sluice_logger_ = ::sluice::logging::Logger();                         \
    if (sluice_logger_->should_log(level)) {                                                \
      sluice_logger_->log(::spdlog::source_loc{__FILE__, __LINE__, SPDLOG_FUNCTION}, level, \
                          __VA_ARGS__);                                                     \
    }                                                                                       \
  } while (0)

#define LOG_DEBUG(...) SLUICE_LOG(::spdlog::level::debug, __VA_ARGS__)
#define LOG_INFO(...) SLUICE_LOG(::spdlog::level::info, __VA_ARGS__)
#define LOG_WARN(...) SLUICE_LOG(::spdlog::level::warn, __VA_ARGS__)
#define LOG_ERROR(...) SLUICE_LOG(::spdlog::level::err, __VA_ARGS__)
