#include "sink/sink_uri.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace sluice::sink {

namespace {

Result<std::string> PercentDecode(std::string_view s, std::string_view what) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (i + 2 >= s.size()) {
      return InvalidArgument(fmt::format("sink uri: truncated percent-escape in {}", what));
    }
    int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) {
      return InvalidArgument(fmt::format("sink uri: bad percent-escape in {}", what));
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

Status ParseAuthority(std::string_view auth, SinkUri* u) {
  size_t at = auth.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view cred = auth.substr(0, at);
    auth = auth.substr(at + 1);
    size_t colon = cred.find(':');
    ASSIGN_OR_RETURN(u->user, PercentDecode(cred.substr(0, colon), "user"));
    if (colon != std::string_view::npos) {
      ASSIGN_OR_RETURN(u->password, PercentDecode(cred.substr(colon + 1), "password"));
    }
  }
  size_t colon = auth.rfind(':');
  if (colon != std::string_view::npos && auth.find(']') == std::string_view::npos) {
    std::string_view port = auth.substr(colon + 1);
    unsigned v = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || v == 0 ||
        v > 65535) {
      return InvalidArgument(fmt::format("sink uri: bad port '{}'", port));
    }
    u->port = static_cast<uint16_t>(v);
    auth = auth.substr(0, colon);
  }
  u->host = std::string(auth);
  return Status::Ok();
}

Status ParseQuery(std::string_view q, SinkUri* u) {
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view kv = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    ASSIGN_OR_RETURN(std::string key, PercentDecode(kv.substr(0, eq), "parameter name"));
    std::string value;
    if (eq != std::string_view::npos) {
      ASSIGN_OR_RETURN(value, PercentDecode(kv.substr(eq + 1), key));
    }
    if (key.empty()) return InvalidArgument("sink uri: empty parameter name");
    if (!u->params.emplace(key, std::move(value)).second) {
      return InvalidArgument(fmt::format("sink uri: parameter '{}' given twice", key));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<SinkUri> SinkUri::Parse(std::string_view uri) {
  SinkUri u;
  size_t sep = uri.find("://");
  if (sep == std::string_view::npos || sep == 0) {
    return InvalidArgument(fmt::format("sink uri '{}' has no scheme (like mysql://)", uri));
  }
  u.scheme = Lower(uri.substr(0, sep));
  for (char c : u.scheme) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      return InvalidArgument(fmt::format("sink uri: bad scheme '{}'", u.scheme));
    }
  }
  std::string_view rest = uri.substr(sep + 3);
  size_t qpos = rest.find('?');
  std::string_view query = qpos == std::string_view::npos ? "" : rest.substr(qpos + 1);
  rest = rest.substr(0, qpos);
  size_t slash = rest.find('/');
  RETURN_IF_ERROR(ParseAuthority(rest.substr(0, slash), &u));
  if (slash != std::string_view::npos) {
    ASSIGN_OR_RETURN(u.path, PercentDecode(rest.substr(slash), "path"));
  }
  RETURN_IF_ERROR(ParseQuery(query, &u));
  return u;
}

Result<std::optional<int64_t>> SinkUri::IntParam(std::string_view name, int64_t min,
                                                 int64_t max) const {
  auto it = params.find(std::string(name));
  if (it == params.end()) return std::optional<int64_t>();
  int64_t v = 0;
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
    return InvalidArgument(
        fmt::format("sink uri: {}='{}' is not an integer in [{}, {}]", name, s, min, max));
  }
  return std::optional<int64_t>(v);
}

Result<std::optional<bool>> SinkUri::BoolParam(std::string_view name) const {
  auto it = params.find(std::string(name));
  if (it == params.end()) return std::optional<bool>();
  std::string v = Lower(it->second);
  if (v == "true" || v == "1") return std::optional<bool>(true);
  if (v == "false" || v == "0") return std::optional<bool>(false);
  return InvalidArgument(fmt::format("sink uri: {}='{}' is not a boolean", name, it->second));
}

Result<std::optional<std::chrono::milliseconds>> SinkUri::DurationParam(
    std::string_view name) const {
  auto it = params.find(std::string(name));
  if (it == params.end()) return std::optional<std::chrono::milliseconds>();
  std::string_view s = it->second;
  auto bad = [&] {
    return InvalidArgument(fmt::format("sink uri: {}='{}' is not a duration like 5s", name, s));
  };
  if (s.empty()) return bad();
  double total_ms = 0;
  while (!s.empty()) {
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc()) return bad();
    s.remove_prefix(end - s.data());
    double unit = 0;
    if (s.starts_with("ms")) {
      unit = 1, s.remove_prefix(2);
    } else if (s.starts_with("s")) {
      unit = 1000, s.remove_prefix(1);
    } else if (s.starts_with("m")) {
      unit = 60'000, s.remove_prefix(1);
    } else if (s.starts_with("h")) {
      unit = 3'600'000, s.remove_prefix(1);
    } else {
      return bad();
    }
    total_ms += v * unit;
  }
  if (total_ms < 0) return bad();
  return std::optional<std::chrono::milliseconds>(
      std::chrono::milliseconds(static_cast<int64_t>(total_ms)));
}

Result<std::optional<int64_t>> SinkUri::SizeParam(std::string_view name) const {
  auto it = params.find(std::string(name));
  if (it == params.end()) return std::optional<int64_t>();
  std::string_view s = it->second;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  std::string unit = Lower(std::string_view(end, s.data() + s.size() - end));
  int64_t mult = 0;
  if (unit.empty() || unit == "b") mult = 1;
  if (unit == "kb" || unit == "kib") mult = int64_t{1} << 10;
  if (unit == "mb" || unit == "mib") mult = int64_t{1} << 20;
  if (unit == "gb" || unit == "gib") mult = int64_t{1} << 30;
  if (ec != std::errc() || mult == 0 || v < 0 || v > (int64_t{1} << 50) / mult) {
    return InvalidArgument(fmt::format("sink uri: {}='{}' is not a size like 64MB", name, s));
  }
  return std::optional<int64_t>(v * mult);
}

std::string SinkUri::Redacted() const {
  std::string out = fmt::format("{}://", scheme);
  if (!user.empty()) out += fmt::format("{}{}@", user, password.empty() ? "" : ":xxxxx");
  out += host;
  if (port) out += fmt::format(":{}", *port);
  out += path;
  char sep = '?';
  for (const auto& [k, v] : params) {
    out += fmt::format("{}{}={}", sep, k, v);
    sep = '&';
  }
  return out;
}

}  // namespace sluice::sink
