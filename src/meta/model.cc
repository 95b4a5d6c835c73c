#include "meta/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace sluice::meta {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxValueBytes = 16 << 20;

// Serializes without throwing: invalid UTF-8 in a string becomes U+FFFD.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Reads typed fields of a JSON object, remembering the first error.
class Fields {
 public:
  Fields(const Json& obj, std::string_view what) : obj_(obj), what_(what) {}

  void Str(const char* name, std::string* out) {
    const Json* v = Find(name);
    if (v == nullptr || v->is_null()) return;
    if (!v->is_string()) return Fail(name, "not a string");
    *out = v->get<std::string>();
  }
  void U64(const char* name, uint64_t* out) {
    const Json* v = Find(name);
    if (v == nullptr || v->is_null()) return;
    if (!v->is_number_unsigned()) return Fail(name, "not an unsigned integer");
    *out = v->get<uint64_t>();
  }
  void I64(const char* name, int64_t* out) {
    const Json* v = Find(name);
    if (v == nullptr || v->is_null()) return;
    if (!v->is_number_integer()) return Fail(name, "not an integer");
    *out = v->get<int64_t>();
  }
  void Time(const char* name, int64_t* ms) {
    std::string text;
    Str(name, &text);
    if (text.empty() || !status_.ok()) return;
    Result<int64_t> parsed = ParseRfc3339(text);
    if (!parsed.ok()) return Fail(name, std::string(parsed.status().message()));
    *ms = *parsed;
  }
  void AdminJob(const char* name, AdminJobType* out) {
    int64_t v = 0;
    I64(name, &v);
    if (v < 0 || v > 4) return Fail(name, "unknown admin job type");
    *out = static_cast<AdminJobType>(v);
  }
  void Error(const char* name, std::optional<RunningError>* out);

  const Json* Find(const char* name) {
    auto it = obj_.find(name);
    return it == obj_.end() ? nullptr : &*it;
  }
  void Fail(std::string_view name, std::string_view why) {
    if (status_.ok()) {
      status_ = Corruption(std::string(what_) + ": field \"" + std::string(name) + "\" " +
                           std::string(why));
    }
  }
  const Status& status() const { return status_; }

 private:
  const Json& obj_;
  std::string_view what_;
  Status status_;
};

void Fields::Error(const char* name, std::optional<RunningError>* out) {
  const Json* v = Find(name);
  if (v == nullptr || v->is_null()) return;
  if (!v->is_object()) return Fail(name, "not an object");
  Fields f(*v, name);
  RunningError e;
  f.Time("time", &e.time_ms);
  f.Str("addr", &e.addr);
  f.Str("code", &e.code);
  f.Str("message", &e.message);
  if (!f.status().ok()) return Fail(name, f.status().message());
  *out = std::move(e);
}

Json ErrorJson(const std::optional<RunningError>& e) {
  if (!e) return nullptr;
  return Json{{"time", FormatRfc3339(e->time_ms)},
              {"addr", e->addr},
              {"code", e->code},
              {"message", e->message}};
}

constexpr int kMaxJsonDepth = 128;

// The deepest nesting of arrays and objects in `text` (strings skipped), so
// that a hostile value cannot exhaust the parser's stack.
int MaxNesting(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

// Parses `text` as a JSON object without exceptions.
Result<Json> ParseObject(std::string_view text, std::string_view what) {
  if (text.size() > kMaxValueBytes) return Corruption(std::string(what) + ": value too large");
  if (MaxNesting(text) > kMaxJsonDepth) return Corruption(std::string(what) + ": nested too deep");
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Corruption(std::string(what) + ": malformed json");
  if (!j.is_object()) return Corruption(std::string(what) + ": not a json object");
  return j;
}

constexpr std::array<std::string_view, 8> kFeedStateNames = {
    "", "normal", "pending", "failed", "stopped", "removed", "finished", "warning"};

// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp + (mp < 10 ? 3 : -9);
  *y = yoe + era * 400 + (*m <= 2);
}

// Reads `n` digits at `*pos`.
bool Digits(std::string_view s, size_t* pos, int n, int64_t* out) {
  if (*pos + n > s.size()) return false;
  *out = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    *out = *out * 10 + (c - '0');
  }
  *pos += n;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

bool IsValidChangefeedName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '-' || name.back() == '-') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (c == '-' && name[i - 1] == '-') return false;
    if (!alnum && c != '-') return false;
  }
  return true;
}

std::string_view FeedStateName(FeedState state) {
  return kFeedStateNames[static_cast<size_t>(state)];
}

Result<FeedState> ParseFeedState(std::string_view name) {
  for (size_t i = 0; i < kFeedStateNames.size(); ++i) {
    if (kFeedStateNames[i] == name) return static_cast<FeedState>(i);
  }
  return Corruption("unknown changefeed state \"" + std::string(name.substr(0, 64)) + "\"");
}

std::string FormatRfc3339(int64_t ms) {
  int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
  int64_t rest = ms - days * 86400000;
  int64_t y, m, d;
  CivilFromDays(days, &y, &m, &d);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", y, m, d, rest / 3600000,
                     rest / 60000 % 60, rest / 1000 % 60, rest % 1000);
}

Result<int64_t> ParseRfc3339(std::string_view s) {
  size_t p = 0;
  int64_t y, mo, d, h, mi, sec;
  if (!Digits(s, &p, 4, &y) || !Expect(s, &p, '-') || !Digits(s, &p, 2, &mo) ||
      !Expect(s, &p, '-') || !Digits(s, &p, 2, &d) || !Expect(s, &p, 'T') ||
      !Digits(s, &p, 2, &h) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &mi) ||
      !Expect(s, &p, ':') || !Digits(s, &p, 2, &sec) || mo < 1 || mo > 12 || d < 1 || d > 31 ||
      h > 23 || mi > 59 || sec > 60) {
    return Corruption("bad RFC 3339 time");
  }
  int64_t frac_ms = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    int n = 0;
    for (; p < s.size() && s[p] >= '0' && s[p] <= '9'; ++p, ++n) {
      if (n < 3) frac_ms = frac_ms * 10 + (s[p] - '0');
    }
    if (n == 0) return Corruption("bad RFC 3339 fraction");
    for (; n < 3; ++n) frac_ms *= 10;
  }
  int64_t offset_min = 0;
  if (Expect(s, &p, 'Z')) {
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    const int sign = s[p++] == '+' ? 1 : -1;
    int64_t oh, om;
    if (!Digits(s, &p, 2, &oh) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &om)) {
      return Corruption("bad RFC 3339 offset");
    }
    offset_min = sign * (oh * 60 + om);
  } else {
    return Corruption("RFC 3339 time without zone");
  }
  if (p != s.size()) return Corruption("trailing bytes after RFC 3339 time");
  const int64_t seconds = DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
  return (seconds - offset_min * 60) * 1000 + frac_ms;
}

std::string EncodeChangefeedInfo(const ChangefeedInfo& info) {
  Json j = {{"upstream-id", info.upstream_id},
            {"namespace", info.id.ns},
            {"changefeed-id", info.id.name},
            {"sink-uri", info.sink_uri},
            {"create-time", FormatRfc3339(info.create_time_ms)},
            {"start-ts", info.start_ts.value()},
            {"target-ts", info.target_ts.value()},
            {"admin-job-type", static_cast<int>(info.admin_job_type)},
            {"state", FeedStateName(info.state)},
            {"error", ErrorJson(info.error)},
            {"warning", ErrorJson(info.warning)},
            {"creator-version", info.creator_version},
            {"epoch", info.epoch.value()}};
  j["config"] = nullptr;
  if (!info.config_json.empty()) {
    Json config = MaxNesting(info.config_json) <= kMaxJsonDepth
                      ? Json::parse(info.config_json, nullptr, /*allow_exceptions=*/false)
                      : Json(nullptr);
    // A config that is not a JSON object is kept as a string rather than lost.
    j["config"] = config.is_object() ? config : Json(info.config_json);
  }
  return Dump(j);
}

Result<ChangefeedInfo> DecodeChangefeedInfo(std::string_view text) {
  ASSIGN_OR_RETURN(Json j, ParseObject(text, "changefeed info"));
  Fields f(j, "changefeed info");
  ChangefeedInfo info;
  uint64_t start = 0, target = 0, epoch = 0;
  std::string state = "normal";
  f.U64("upstream-id", &info.upstream_id);
  f.Str("namespace", &info.id.ns);
  f.Str("changefeed-id", &info.id.name);
  f.Str("sink-uri", &info.sink_uri);
  f.Time("create-time", &info.create_time_ms);
  f.U64("start-ts", &start);
  f.U64("target-ts", &target);
  f.AdminJob("admin-job-type", &info.admin_job_type);
  f.Str("state", &state);
  f.Error("error", &info.error);
  f.Error("warning", &info.warning);
  f.Str("creator-version", &info.creator_version);
  f.U64("epoch", &epoch);
  if (const Json* config = f.Find("config"); config != nullptr && !config->is_null()) {
    if (config->is_object())
      info.config_json = Dump(*config);
    else if (config->is_string())
      info.config_json = config->get<std::string>();
    else
      f.Fail("config", "not an object");
  }
  RETURN_IF_ERROR(f.status());
  ASSIGN_OR_RETURN(info.state, ParseFeedState(state));
  info.start_ts = Ts(start);
  info.target_ts = Ts(target);
  info.epoch = MaintainerEpoch(epoch);
  return info;
}

std::string EncodeChangefeedStatus(const ChangefeedStatus& status) {
  Json j = {{"checkpoint-ts", status.checkpoint_ts.value()},
            {"min-table-barrier-ts", status.min_table_barrier_ts.value()},
            {"admin-job-type", static_cast<int>(status.admin_job_type)}};
  if (status.last_error) j["last-error"] = ErrorJson(status.last_error);
  return Dump(j);
}

Result<ChangefeedStatus> DecodeChangefeedStatus(std::string_view text) {
  ASSIGN_OR_RETURN(Json j, ParseObject(text, "changefeed status"));
  Fields f(j, "changefeed status");
  ChangefeedStatus status;
  uint64_t checkpoint = 0, barrier = 0;
  f.U64("checkpoint-ts", &checkpoint);
  f.U64("min-table-barrier-ts", &barrier);
  f.AdminJob("admin-job-type", &status.admin_job_type);
  f.Error("last-error", &status.last_error);
  RETURN_IF_ERROR(f.status());
  status.checkpoint_ts = Ts(checkpoint);
  status.min_table_barrier_ts = Ts(barrier);
  return status;
}

std::string EncodeCaptureInfo(const CaptureInfo& info) {
  Json j = {{"id", info.id.value()},
            {"address", info.advertise_addr},
            {"version", info.version},
            {"git-hash", info.git_hash},
            {"deploy-path", info.deploy_path},
            {"start-timestamp", info.start_timestamp_s},
            {"is-new-arch", true}};
  if (!info.peer_addr.empty()) j["peer-address"] = info.peer_addr;
  return Dump(j);
}

Result<CaptureInfo> DecodeCaptureInfo(std::string_view text) {
  ASSIGN_OR_RETURN(Json j, ParseObject(text, "capture info"));
  Fields f(j, "capture info");
  CaptureInfo info;
  std::string id;
  f.Str("id", &id);
  f.Str("address", &info.advertise_addr);
  f.Str("version", &info.version);
  f.Str("git-hash", &info.git_hash);
  f.Str("deploy-path", &info.deploy_path);
  f.I64("start-timestamp", &info.start_timestamp_s);
  f.Str("peer-address", &info.peer_addr);
  RETURN_IF_ERROR(f.status());
  if (id.empty()) return Corruption("capture info: empty id");
  info.id = NodeId(std::move(id));
  return info;
}

}  // namespace sluice::meta
