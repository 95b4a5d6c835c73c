// The fault kinds' names and the fault schedule spec parser.
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "simkv/fault_schedule.h"

namespace sluice::simkv {
namespace {

constexpr std::array<std::string_view, kNumFaultKinds> kNames = {
    "split", "merge", "leader", "restart", "busy", "drop", "congest", "epoch"};

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (true) {
    size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next == std::string_view::npos ? next : next - pos));
    if (next == std::string_view::npos) return out;
    pos = next + 1;
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::optional<Clock::Duration> ParseDuration(std::string_view s) {
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  std::optional<int64_t> n = ParseInt(s.substr(0, digits));
  if (!n || *n > 1000000000) return std::nullopt;
  std::string_view unit = s.substr(digits);
  if (unit == "ms") return std::chrono::milliseconds(*n);
  if (unit == "s") return std::chrono::seconds(*n);
  if (unit == "m") return std::chrono::minutes(*n);
  return std::nullopt;
}

Status Bad(std::string_view token, std::string_view why) {
  return InvalidArgument("fault spec: bad token '" + std::string(token) + "': " + std::string(why));
}

Status ParseWeight(std::string_view token, FaultScheduleOptions* out) {
  size_t eq = token.find('=');
  if (eq == std::string_view::npos) return Bad(token, "expected <kind>=<weight>");
  std::optional<FaultKind> kind = ParseFaultKind(Trim(token.substr(0, eq)));
  if (!kind) {
    return Bad(token,
               "unknown fault kind (split, merge, leader, restart, busy, drop, congest, epoch)");
  }
  std::optional<int64_t> w = ParseInt(Trim(token.substr(eq + 1)));
  if (!w || *w > 1000000) return Bad(token, "weight must be an integer in [0, 1000000]");
  out->weights[static_cast<size_t>(*kind)] = static_cast<int>(*w);
  return Status::Ok();
}

Status ParseParam(std::string_view token, FaultScheduleOptions* out) {
  size_t eq = token.find('=');
  if (eq == std::string_view::npos) return Bad(token, "expected <param>=<value>");
  std::string_view name = Trim(token.substr(0, eq));
  std::string_view value = Trim(token.substr(eq + 1));
  if (name == "max_regions") {
    std::optional<int64_t> n = ParseInt(value);
    if (!n || *n < 1) return Bad(token, "max_regions must be a positive integer");
    out->max_regions = static_cast<size_t>(*n);
    return Status::Ok();
  }
  Clock::Duration* target = name == "interval"   ? &out->interval
                            : name == "down_for" ? &out->down_for
                            : name == "busy_for" ? &out->busy_for
                                                 : nullptr;
  if (target == nullptr) {
    return Bad(token, "unknown parameter (interval, down_for, busy_for, max_regions)");
  }
  std::optional<Clock::Duration> d = ParseDuration(value);
  if (!d) return Bad(token, "expected a duration such as 500ms, 2s or 1m");
  if (name == "interval" && d->count() == 0) return Bad(token, "interval must be positive");
  *target = *d;
  return Status::Ok();
}

}  // namespace

std::string_view FaultKindName(FaultKind kind) { return kNames[static_cast<size_t>(kind)]; }

std::optional<FaultKind> ParseFaultKind(std::string_view name) {
  for (size_t i = 0; i < kNumFaultKinds; ++i) {
    if (kNames[i] == name) return static_cast<FaultKind>(i);
  }
  return std::nullopt;
}

Result<FaultScheduleOptions> ParseFaultSpec(std::string_view spec, FaultScheduleOptions base) {
  std::vector<std::string_view> sections = SplitOn(spec, ';');
  if (sections.size() > 2) return Bad(spec, "at most one ';' (weights;parameters)");
  base.weights = {};
  if (!Trim(sections[0]).empty()) {
    for (std::string_view token : SplitOn(sections[0], ',')) {
      RETURN_IF_ERROR(ParseWeight(Trim(token), &base));
    }
  }
  if (sections.size() == 2) {
    for (std::string_view token : SplitOn(sections[1], ',')) {
      RETURN_IF_ERROR(ParseParam(Trim(token), &base));
    }
  }
  return base;
}

}  // namespace sluice::simkv
