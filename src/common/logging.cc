#include "common/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <atomic>
#include <cctype>
#include <memory>
#include <utility>
#include <vector>

#include "common/hex.h"
#include "common/thread_annotations.h"

namespace sluice {
namespace {

std::atomic<RedactionMode> g_redaction{RedactionMode::kOn};

constexpr std::string_view kMarkerOpen = "\u2039";   // ‹
constexpr std::string_view kMarkerClose = "\u203A";  // ›

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void AppendReplacingAll(std::string_view text, std::string_view from, std::string_view to,
                        std::string* out) {
  size_t pos = 0;
  while (true) {
    size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out->append(text.substr(pos, hit - pos));
    out->append(to);
    pos = hit + from.size();
  }
  out->append(text.substr(pos));
}

}  // namespace

void SetRedaction(RedactionMode mode) { g_redaction.store(mode, std::memory_order_relaxed); }

RedactionMode GetRedaction() { return g_redaction.load(std::memory_order_relaxed); }

Result<RedactionMode> ParseRedactionMode(std::string_view text) {
  std::string t = Lower(text);
  if (t == "off" || t == "false") return RedactionMode::kOff;
  if (t == "on" || t == "true") return RedactionMode::kOn;
  if (t == "marker") return RedactionMode::kMarker;
  return InvalidArgument("unknown redaction mode \"" + std::string(text) +
                         "\" (want off, on or marker)");
}

std::string Redact(std::string_view bytes) {
  switch (GetRedaction()) {
    case RedactionMode::kOff:
      return HexEncode(bytes, HexCase::kUpper);
    case RedactionMode::kMarker: {
      std::string out(kMarkerOpen);
      out += HexEncode(bytes, HexCase::kUpper);  // Hex never contains a marker; no escaping needed.
      out += kMarkerClose;
      return out;
    }
    case RedactionMode::kOn:
      break;
  }
  return "?";
}

std::string RedactText(std::string_view text) {
  switch (GetRedaction()) {
    case RedactionMode::kOff:
      return std::string(text);
    case RedactionMode::kMarker: {
      std::string escaped;
      AppendReplacingAll(text, kMarkerOpen, "\u2039\u2039", &escaped);
      std::string out(kMarkerOpen);
      AppendReplacingAll(escaped, kMarkerClose, "\u203A\u203A", &out);
      out += kMarkerClose;
      return out;
    }
    case RedactionMode::kOn:
      break;
  }
  return "?";
}

namespace logging {
namespace {

// TiDB-like line: [2024/05/01 10:00:00.123 +00:00] [info] [file.cc:42] [tid] message
constexpr char kPattern[] = "[%Y/%m/%d %H:%M:%S.%e %z] [%l] [%s:%#] [%t] %v";

spdlog::level::level_enum ToSpdlog(Level level) {
  switch (level) {
    case Level::kTrace:
      return spdlog::level::trace;
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

Level FromSpdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return Level::kTrace;
    case spdlog::level::debug:
      return Level::kDebug;
    case spdlog::level::info:
      return Level::kInfo;
    case spdlog::level::warn:
      return Level::kWarn;
    case spdlog::level::err:
    case spdlog::level::critical:
      return Level::kError;
    default:
      return Level::kOff;
  }
}

// Loggers are swapped by pointer so that the hot path is one atomic load.
// Replaced loggers are kept until exit: another thread may still be using
// the pointer it loaded.
struct LoggerRegistry {
  Mutex mu;
  std::vector<std::shared_ptr<spdlog::logger>> retained GUARDED_BY(mu);
};

LoggerRegistry& Registry() {
  static LoggerRegistry* const kRegistry = new LoggerRegistry();
  return *kRegistry;
}

std::atomic<spdlog::logger*> g_logger{nullptr};

spdlog::logger* InstallLocked(LoggerRegistry& registry, spdlog::sink_ptr sink, Level level)
    REQUIRES(registry.mu) {
  auto logger = std::make_shared<spdlog::logger>("sluice", std::move(sink));
  logger->set_pattern(kPattern);
  logger->set_level(ToSpdlog(level));
  logger->flush_on(spdlog::level::warn);
  registry.retained.push_back(logger);
  g_logger.store(logger.get(), std::memory_order_release);
  return logger.get();
}

void Install(spdlog::sink_ptr sink, Level level) {
  LoggerRegistry& registry = Registry();
  MutexLock lock(&registry.mu);
  InstallLocked(registry, std::move(sink), level);
}

}  // namespace

Result<Level> ParseLevel(std::string_view text) {
  std::string t = Lower(text);
  if (t == "trace") return Level::kTrace;
  if (t == "debug") return Level::kDebug;
  if (t == "info") return Level::kInfo;
  if (t == "warn" || t == "warning") return Level::kWarn;
  if (t == "error") return Level::kError;
  if (t == "off") return Level::kOff;
  return InvalidArgument("unknown log level \"" + std::string(text) + "\"");
}

Status Init(Level level, const std::optional<std::string>& file) {
  spdlog::sink_ptr sink;
  if (file.has_value()) {
    try {
      sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(*file, /*truncate=*/false);
    } catch (const spdlog::spdlog_ex& e) {
      return IoError("cannot open log file " + *file + ": " + e.what());
    }
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  }
  Install(std::move(sink), level);
  return Status::Ok();
}

void SetSink(spdlog::sink_ptr sink, Level level) { Install(std::move(sink), level); }

void SetLevel(Level level) { Logger()->set_level(ToSpdlog(level)); }

Level GetLevel() { return FromSpdlog(Logger()->level()); }

void Flush() { Logger()->flush(); }

spdlog::logger* Logger() {
  spdlog::logger* logger = g_logger.load(std::memory_order_acquire);
  if (logger != nullptr) return logger;
  LoggerRegistry& registry = Registry();
  MutexLock lock(&registry.mu);
  logger = g_logger.load(std::memory_order_acquire);
  if (logger != nullptr) return logger;
  return InstallLocked(registry, std::make_shared<spdlog::sinks::stderr_color_sink_mt>(),
                       Level::kInfo);
}

}  // namespace logging
}  // namespace sluice
