// SinkUri: a parsed sink URI as TiCDC accepts them, e.g.
//   mysql://user:pass@127.0.0.1:3306/?worker-count=16&safe-mode=true
//   file:///data/out?protocol=canal-json&flush-interval=5s
//   blackhole://
// Percent-escapes are decoded in user, password, path and query values.
// Value type.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::sink {

struct SinkUri {
  std::string scheme;  // Lower-cased.
  std::string user;
  std::string password;
  std::string host;
  std::optional<uint16_t> port;
  std::string path;  // Decoded; "/data/out" for file:///data/out.
  std::map<std::string, std::string> params;

  // InvalidArgument naming the problem for anything malformed: no scheme,
  // bad port, bad percent-escape, a parameter given twice.
  static Result<SinkUri> Parse(std::string_view uri);

  // Typed parameter access: nullopt when absent, InvalidArgument when the
  // value does not parse (message names the parameter).
  Result<std::optional<int64_t>> IntParam(std::string_view name, int64_t min, int64_t max) const;
  Result<std::optional<bool>> BoolParam(std::string_view name) const;
  // Go-style durations: "500ms", "5s", "1m30s".
  Result<std::optional<std::chrono::milliseconds>> DurationParam(std::string_view name) const;
  // Sizes: "64MB", "1KiB", "1024".
  Result<std::optional<int64_t>> SizeParam(std::string_view name) const;

  // The URI with the password replaced by "xxxxx", for logs and the API.
  std::string Redacted() const;
};

}  // namespace sluice::sink
