#include "simkv/cdc_request_validator.h"

#include <charconv>
#include <tuple>
#include <vector>

#include "simkv/cdc_errors.h"

namespace sluice::simkv {

namespace {

constexpr std::string_view kRawKvRequiredVersion = "6.2.0";

// Parses a decimal number without leading zeros (semver) and advances.
bool ParseNumber(std::string_view* text, int* out) {
  if (text->empty() || text->front() < '0' || text->front() > '9') return false;
  const char* begin = text->data();
  const char* end = begin + text->size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  if (ec != std::errc() || ptr == begin || (*begin == '0' && ptr - begin > 1)) return false;
  text->remove_prefix(static_cast<size_t>(ptr - begin));
  return true;
}

bool Consume(std::string_view* text, char c) {
  if (text->empty() || text->front() != c) return false;
  text->remove_prefix(1);
  return true;
}

// Identifiers after '-' or '+': dot-separated, non-empty, [0-9A-Za-z-].
bool ValidIdentifiers(std::string_view text) {
  if (text.empty() || text.front() == '.' || text.back() == '.') return false;
  char previous = '.';
  for (char c : text) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '-' || (c == '.' && previous != '.');
    if (!ok) return false;
    previous = c;
  }
  return true;
}

std::string_view Trim(std::string_view text) {
  const std::string_view space = " \t\r\n";
  size_t begin = text.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(space);
  return text.substr(begin, end - begin + 1);
}

}  // namespace

ClientVersion ClientVersion::Parse(std::string_view text) {
  ClientVersion version;
  std::string_view rest = text;
  if (!ParseNumber(&rest, &version.major) || !Consume(&rest, '.') ||
      !ParseNumber(&rest, &version.minor) || !Consume(&rest, '.') ||
      !ParseNumber(&rest, &version.patch)) {
    return ClientVersion{};
  }
  size_t plus = rest.find('+');
  std::string_view build = plus == std::string_view::npos ? "" : rest.substr(plus + 1);
  std::string_view pre = rest.substr(0, plus);
  if (plus != std::string_view::npos && !ValidIdentifiers(build)) return ClientVersion{};
  if (!pre.empty()) {
    if (!Consume(&pre, '-') || !ValidIdentifiers(pre)) return ClientVersion{};
    version.prerelease = true;
  }
  version.parsed = true;
  return version;
}

bool ClientVersion::AtLeast(int want_major, int want_minor, int want_patch) const {
  auto have = std::tie(major, minor, patch);
  auto want = std::tie(want_major, want_minor, want_patch);
  if (have != want) return have > want;
  return !prerelease;
}

Result<StreamFeatures> ParseFeatures(std::string_view value) {
  StreamFeatures features;
  std::string unknown;
  bool any_unknown = false;
  size_t begin = 0;
  while (true) {
    size_t comma = value.find(',', begin);
    std::string_view name = Trim(value.substr(begin, comma - begin));
    if (name == kStreamMultiplexing) {
      features.multiplexing = true;
    } else {
      if (any_unknown) unknown += ",";
      unknown += std::string(name);
      any_unknown = true;
    }
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  if (any_unknown) return InvalidArgument(unknown);
  return features;
}

std::optional<cdcpb::Error> ValidateRegister(const cdcpb::ChangeDataRequest& request,
                                             const RequestContext& context) {
  const ClientVersion& version = context.version;
  if (!version.parsed || !version.AtLeast(4, 0, 8)) {
    return CompatibilityError(std::string(kMinClientVersion));
  }
  if (version.AtLeast(5, 3, 0) && request.header().cluster_id() != context.cluster_id) {
    return ClusterIdMismatchError(context.cluster_id, request.header().cluster_id());
  }
  if (request.kv_api() != cdcpb::ChangeDataRequest::TiDB) {
    return CompatibilityError(std::string(kRawKvRequiredVersion));
  }
  if (context.busy) return ServerIsBusyError(context.busy->reason, context.busy->backoff_ms);
  return std::nullopt;
}

}  // namespace sluice::simkv
