// ParseReplicaConfigToml: toml++ document -> ReplicaConfig, strictly.
#include <toml++/toml.h>

#include <exception>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "config/schema.h"

namespace sluice::config {
namespace {

using internal::JoinKey;

struct TomlDecodeState {
  Status status;
  std::map<std::string, int64_t> lines;  // key path -> line, for value errors
};

int64_t LineOf(const toml::node& node) { return node.source().begin.line; }

std::string_view TypeName(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    default:
      return "nothing";
  }
}

Status WrongType(const std::string& path, const toml::node& node, std::string_view expected) {
  return InvalidArgument("key \"" + path + "\" at line " + std::to_string(LineOf(node)) +
                         ": expected " + std::string(expected) + ", got " +
                         std::string(TypeName(node.type())));
}

Status Decode(const toml::node& n, const std::string& path, bool& out) {
  if (!n.is_boolean()) return WrongType(path, n, "boolean");
  out = n.as_boolean()->get();
  return Status::Ok();
}

Status Decode(const toml::node& n, const std::string& path, int64_t& out) {
  if (!n.is_integer()) return WrongType(path, n, "integer");
  out = n.as_integer()->get();
  return Status::Ok();
}

Status Decode(const toml::node& n, const std::string& path, uint64_t& out) {
  if (!n.is_integer() || n.as_integer()->get() < 0) {
    return WrongType(path, n, "non-negative integer");
  }
  out = static_cast<uint64_t>(n.as_integer()->get());
  return Status::Ok();
}

Status Decode(const toml::node& n, const std::string& path, std::string& out) {
  if (!n.is_string()) return WrongType(path, n, "string");
  out = n.as_string()->get();
  return Status::Ok();
}

// A Go duration string ("1h30m"), or an integer of nanoseconds as Go's
// TOML decoder also takes.
Status Decode(const toml::node& n, const std::string& path, Duration& out) {
  if (n.is_integer()) {
    out.value = std::chrono::nanoseconds(n.as_integer()->get());
    return Status::Ok();
  }
  if (!n.is_string()) return WrongType(path, n, "duration string such as \"10m\"");
  auto parsed = ParseGoDuration(n.as_string()->get());
  if (!parsed.ok()) {
    return InvalidArgument("invalid value for key \"" + path + "\" at line " +
                           std::to_string(LineOf(n)) + ": " +
                           std::string(parsed.status().message()));
  }
  out.value = *parsed;
  return Status::Ok();
}

template <typename T>
Status Decode(const toml::node& n, const std::string& path, std::optional<T>& out) {
  T value{};
  RETURN_IF_ERROR(Decode(n, path, value));
  out = std::move(value);
  return Status::Ok();
}

template <typename T>
Status Decode(const toml::node& n, const std::string& path, std::vector<T>& out) {
  if (!n.is_array()) return WrongType(path, n, "array");
  std::vector<T> items;
  size_t i = 0;
  for (const toml::node& el : *n.as_array()) {
    T item{};
    RETURN_IF_ERROR(Decode(el, path + "[" + std::to_string(i++) + "]", item));
    items.push_back(std::move(item));
  }
  out = std::move(items);
  return Status::Ok();
}

// Visitor over one TOML table; see schema.h.
class TomlDecoder {
 public:
  TomlDecoder(const toml::table& table, std::string prefix, TomlDecodeState& state)
      : table_(table), prefix_(std::move(prefix)), state_(state) {}

  template <typename T>
  void Field(std::string_view key, std::string_view /*json*/, T& out) {
    const toml::node* node = Take(key);
    if (node == nullptr) return;
    std::string path = JoinKey(prefix_, key);
    state_.lines[path] = LineOf(*node);
    state_.status = Decode(*node, path, out);
  }

  template <typename Fn>
  void Section(std::string_view key, std::string_view /*json*/, Fn&& fn) {
    const toml::node* node = Take(key);
    if (node == nullptr) return;
    std::string path = JoinKey(prefix_, key);
    if (!node->is_table()) {
      state_.status = WrongType(path, *node, "table");
      return;
    }
    TomlDecoder sub(*node->as_table(), path, state_);
    fn(sub);
    sub.Finish();
  }

  template <typename E, typename Fn>
  void Array(std::string_view key, std::string_view /*json*/, std::vector<E>& items, Fn&& fn) {
    const toml::node* node = Take(key);
    if (node == nullptr) return;
    std::string path = JoinKey(prefix_, key);
    if (!node->is_array()) {
      state_.status = WrongType(path, *node, "array of tables");
      return;
    }
    items.clear();
    size_t i = 0;
    for (const toml::node& el : *node->as_array()) {
      std::string el_path = path + "[" + std::to_string(i++) + "]";
      if (!el.is_table()) {
        state_.status = WrongType(el_path, el, "table");
        return;
      }
      TomlDecoder sub(*el.as_table(), el_path, state_);
      fn(sub, items.emplace_back());
      sub.Finish();
      if (!state_.status.ok()) return;
    }
  }

  // Reports the first (by line) key of the table no visitor call took.
  void Finish() {
    if (!state_.status.ok()) return;
    const toml::key* first = nullptr;
    for (const auto& [key, node] : table_) {
      if (known_.count(std::string(key.str())) != 0) continue;
      if (first == nullptr || key.source().begin.line < first->source().begin.line) first = &key;
    }
    if (first == nullptr) return;
    state_.status = InvalidArgument("unknown key \"" + JoinKey(prefix_, first->str()) +
                                    "\" at line " + std::to_string(first->source().begin.line));
  }

 private:
  const toml::node* Take(std::string_view key) {
    if (!state_.status.ok()) return nullptr;
    known_.emplace(key);
    return table_.get(key);
  }

  const toml::table& table_;
  std::string prefix_;
  TomlDecodeState& state_;
  std::set<std::string, std::less<>> known_;
};

// toml++ reports errors by exception; they stop here.
Result<toml::table> ParseDocument(std::string_view text) {
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& e) {
    return InvalidArgument("TOML syntax error at line " + std::to_string(e.source().begin.line) +
                           ", column " + std::to_string(e.source().begin.column) + ": " +
                           std::string(e.description()));
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("TOML parse failed: ") + e.what());
  } catch (...) {
    return InvalidArgument("TOML parse failed");
  }
}

}  // namespace

Result<ReplicaConfig> ParseReplicaConfigToml(std::string_view text) {
  ASSIGN_OR_RETURN(toml::table doc, ParseDocument(text));
  ReplicaConfig config;
  TomlDecodeState state;
  TomlDecoder top(doc, "", state);
  internal::VisitReplicaConfig(top, config);
  top.Finish();
  if (!state.status.ok()) return state.status;
  internal::Normalize(config);
  if (auto err = internal::CheckValues(config)) {
    auto line = state.lines.find(err->key);
    std::string where = line == state.lines.end() ? "" : " at line " + std::to_string(line->second);
    return InvalidArgument("invalid value for key \"" + err->key + "\"" + where + ": " +
                           err->message);
  }
  return config;
}

}  // namespace sluice::config
