// The API v2 JSON form of ReplicaConfig: ToJson and ReplicaConfigFromJson.
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "config/schema.h"

namespace sluice::config {
namespace {

using nlohmann::json;

// ---- Encoding -------------------------------------------------------------

json Encode(bool v) { return v; }
json Encode(int64_t v) { return v; }
json Encode(uint64_t v) { return v; }
json Encode(const std::string& v) { return v; }
json Encode(const Duration& v) { return static_cast<int64_t>(v.value.count()); }
template <typename T>
json Encode(const std::vector<T>& v) {
  json out = json::array();
  for (const T& item : v) out.push_back(Encode(item));
  return out;
}

class JsonEncoder {
 public:
  explicit JsonEncoder(json& out) : out_(out) {}

  template <typename T>
  void Field(std::string_view /*toml*/, std::string_view key, T& value) {
    if (!key.empty()) out_[std::string(key)] = Encode(value);
  }
  template <typename T>
  void Field(std::string_view /*toml*/, std::string_view key, std::optional<T>& value) {
    if (!key.empty() && value.has_value()) out_[std::string(key)] = Encode(*value);
  }
  template <typename Fn>
  void Section(std::string_view /*toml*/, std::string_view key, Fn&& fn) {
    json sub = json::object();
    JsonEncoder enc(sub);
    fn(enc);
    out_[std::string(key)] = std::move(sub);
  }
  template <typename E, typename Fn>
  void Array(std::string_view /*toml*/, std::string_view key, std::vector<E>& items, Fn&& fn) {
    json arr = json::array();
    for (E& item : items) {
      json sub = json::object();
      JsonEncoder enc(sub);
      fn(enc, item);
      arr.push_back(std::move(sub));
    }
    out_[std::string(key)] = std::move(arr);
  }

 private:
  json& out_;
};

// ---- Decoding -------------------------------------------------------------

Status WrongType(const std::string& path, const json& v, std::string_view expected) {
  return InvalidArgument("field \"" + path + "\": expected " + std::string(expected) + ", got " +
                         v.type_name());
}

Status Decode(const json& v, const std::string& path, bool& out) {
  if (!v.is_boolean()) return WrongType(path, v, "boolean");
  out = v.get<bool>();
  return Status::Ok();
}

Status Decode(const json& v, const std::string& path, int64_t& out) {
  if (v.is_number_unsigned() &&
      v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    out = static_cast<int64_t>(v.get<uint64_t>());
  } else if (v.is_number_integer() && !v.is_number_unsigned()) {
    out = v.get<int64_t>();
  } else {
    return WrongType(path, v, "integer");
  }
  return Status::Ok();
}

Status Decode(const json& v, const std::string& path, uint64_t& out) {
  if (!v.is_number_unsigned()) return WrongType(path, v, "non-negative integer");
  out = v.get<uint64_t>();
  return Status::Ok();
}

Status Decode(const json& v, const std::string& path, std::string& out) {
  if (!v.is_string()) return WrongType(path, v, "string");
  out = v.get<std::string>();
  return Status::Ok();
}

// Nanoseconds, or a Go duration string, as TiCDC's JSONDuration takes.
Status Decode(const json& v, const std::string& path, Duration& out) {
  if (v.is_number_integer()) {
    int64_t ns = 0;
    RETURN_IF_ERROR(Decode(v, path, ns));
    out.value = std::chrono::nanoseconds(ns);
    return Status::Ok();
  }
  if (!v.is_string()) return WrongType(path, v, "duration (nanoseconds or \"10m\")");
  auto parsed = ParseGoDuration(v.get<std::string>());
  if (!parsed.ok()) {
    return InvalidArgument("field \"" + path + "\": " + std::string(parsed.status().message()));
  }
  out.value = *parsed;
  return Status::Ok();
}

template <typename T>
Status Decode(const json& v, const std::string& path, std::optional<T>& out) {
  T value{};
  RETURN_IF_ERROR(Decode(v, path, value));
  out = std::move(value);
  return Status::Ok();
}

template <typename T>
Status Decode(const json& v, const std::string& path, std::vector<T>& out) {
  if (!v.is_array()) return WrongType(path, v, "array");
  std::vector<T> items;
  for (size_t i = 0; i < v.size(); ++i) {
    T item{};
    RETURN_IF_ERROR(Decode(v[i], path + "[" + std::to_string(i) + "]", item));
    items.push_back(std::move(item));
  }
  out = std::move(items);
  return Status::Ok();
}

struct DecodeState {
  Status status;
  bool reject_unknown = false;
};

class JsonDecoder {
 public:
  JsonDecoder(const json& obj, std::string prefix, DecodeState& state)
      : obj_(obj), prefix_(std::move(prefix)), state_(state) {}

  template <typename T>
  void Field(std::string_view /*toml*/, std::string_view key, T& out) {
    const json* v = Take(key);
    if (v != nullptr) state_.status = Decode(*v, internal::JoinKey(prefix_, key), out);
  }

  template <typename Fn>
  void Section(std::string_view /*toml*/, std::string_view key, Fn&& fn) {
    const json* v = Take(key);
    if (v == nullptr) return;
    std::string path = internal::JoinKey(prefix_, key);
    if (!v->is_object()) {
      state_.status = WrongType(path, *v, "object");
      return;
    }
    JsonDecoder sub(*v, path, state_);
    fn(sub);
    sub.Finish();
  }

  template <typename E, typename Fn>
  void Array(std::string_view /*toml*/, std::string_view key, std::vector<E>& items, Fn&& fn) {
    const json* v = Take(key);
    if (v == nullptr) return;
    std::string path = internal::JoinKey(prefix_, key);
    if (!v->is_array()) {
      state_.status = WrongType(path, *v, "array of objects");
      return;
    }
    items.clear();
    for (size_t i = 0; i < v->size() && state_.status.ok(); ++i) {
      std::string el_path = path + "[" + std::to_string(i) + "]";
      if (!(*v)[i].is_object()) {
        state_.status = WrongType(el_path, (*v)[i], "object");
        return;
      }
      JsonDecoder sub((*v)[i], el_path, state_);
      fn(sub, items.emplace_back());
      sub.Finish();
    }
  }

  void Finish() {
    if (!state_.status.ok() || !state_.reject_unknown) return;
    for (const auto& [key, value] : obj_.items()) {
      if (known_.count(key) == 0) {
        state_.status =
            InvalidArgument("unknown field \"" + internal::JoinKey(prefix_, key) + "\"");
        return;
      }
    }
  }

 private:
  // The value of `key`; nullptr when absent, null (Go leaves the field), or
  // after an error.
  const json* Take(std::string_view key) {
    if (!state_.status.ok() || key.empty()) return nullptr;
    known_.emplace(key);
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  const json& obj_;
  std::string prefix_;
  DecodeState& state_;
  std::set<std::string, std::less<>> known_;
};

// The JSON field path of a TOML key path, for value errors.
std::string JsonPath(std::string key) {
  for (auto [from, to] :
       {std::pair<std::string_view, std::string_view>{"file-index-digit", "file-index-width"},
        {"max-multi-update-row", "max-multi-update-row-count"}}) {
    if (key.size() >= from.size() &&
        key.compare(key.size() - from.size(), from.size(), from) == 0) {
      key.replace(key.size() - from.size(), from.size(), to);
    }
  }
  for (char& c : key) c = c == '-' ? '_' : c;
  return key;
}

Result<json> ParseJson(std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return InvalidArgument("JSON syntax error at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("JSON parse failed: ") + e.what());
  }
}

}  // namespace

std::string ToJson(const ReplicaConfig& config) {
  ReplicaConfig copy = config;
  if (copy.sink.kafka_config.sasl_password.has_value()) {
    copy.sink.kafka_config.sasl_password = "xxxxx";
  }
  json out = json::object();
  JsonEncoder enc(out);
  internal::VisitReplicaConfig(enc, copy);
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<ReplicaConfig> ReplicaConfigFromJson(std::string_view text, bool reject_unknown) {
  ASSIGN_OR_RETURN(json doc, ParseJson(text));
  if (!doc.is_object()) return InvalidArgument("replica config JSON must be an object");
  ReplicaConfig config;
  DecodeState state{Status::Ok(), reject_unknown};
  JsonDecoder top(doc, "", state);
  internal::VisitReplicaConfig(top, config);
  top.Finish();
  if (!state.status.ok()) return state.status;
  internal::Normalize(config);
  if (auto err = internal::CheckValues(config)) {
    return InvalidArgument("invalid value for field \"" + JsonPath(err->key) +
                           "\": " + err->message);
  }
  return config;
}

}  // namespace sluice::config
