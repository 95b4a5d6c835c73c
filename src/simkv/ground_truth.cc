#include "simkv/ground_truth.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "common/hex.h"

namespace sluice::simkv {

namespace {

using Json = nlohmann::json;

constexpr char kFormatName[] = "sluice-simkv-ground-truth";
constexpr int kFormatVersion = 1;
// tablecodec: 't' + 8-byte table id + "_r"; byte 10 is the record marker.
constexpr size_t kRecordPrefixLen = 11;
constexpr uint64_t kSignBit = uint64_t{1} << 63;

bool ChangeOrder(const TruthChange& a, const TruthChange& b) {
  return std::tie(a.commit_ts, a.table_id, a.key) < std::tie(b.commit_ts, b.table_id, b.key);
}

Json ToJson(const TruthChange& c) {
  Json j = {{"table_id", c.table_id.value()},
            {"commit_ts", c.commit_ts.value()},
            {"start_ts", c.start_ts.value()},
            {"op", c.kind == WriteKind::kPut ? "put" : "delete"},
            {"key", HexEncode(c.key)}};
  if (c.kind == WriteKind::kPut) j["value"] = HexEncode(c.value);
  if (c.old_value.has_value()) j["old_value"] = HexEncode(*c.old_value);
  return j;
}

// Reads an optional hex field; an error message on a bad one.
std::optional<std::string> HexField(const Json& j, const char* name, bool required,
                                    std::optional<std::string>* out) {
  auto it = j.find(name);
  if (it == j.end()) {
    if (required) return std::string("missing ") + name;
    return std::nullopt;
  }
  if (!it->is_string()) return std::string(name) + " is not a string";
  *out = HexDecode(it->get<std::string>());
  if (!out->has_value()) return std::string(name) + " is not hex";
  return std::nullopt;
}

Result<uint64_t> UintField(const Json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_number_unsigned()) {
    return Corruption(std::string(name) + " missing or not an unsigned integer");
  }
  return it->get<uint64_t>();
}

Result<WriteKind> OpField(const Json& j) {
  auto it = j.find("op");
  if (it != j.end() && *it == "put") return WriteKind::kPut;
  if (it != j.end() && *it == "delete") return WriteKind::kDelete;
  return Corruption("op must be \"put\" or \"delete\"");
}

Result<TruthChange> FromJson(const Json& j) {
  if (!j.is_object()) return Corruption("not a JSON object");
  auto table = j.find("table_id");
  if (table == j.end() || !table->is_number_integer()) return Corruption("bad table_id");
  TruthChange c;
  c.table_id = TableId(table->get<int64_t>());
  ASSIGN_OR_RETURN(uint64_t commit_ts, UintField(j, "commit_ts"));
  ASSIGN_OR_RETURN(uint64_t start_ts, UintField(j, "start_ts"));
  ASSIGN_OR_RETURN(c.kind, OpField(j));
  c.commit_ts = Ts(commit_ts);
  c.start_ts = Ts(start_ts);
  std::optional<std::string> key, value;
  bool is_put = c.kind == WriteKind::kPut;
  for (auto error : {HexField(j, "key", true, &key), HexField(j, "value", is_put, &value),
                     HexField(j, "old_value", false, &c.old_value)}) {
    if (error.has_value()) return Corruption(*error);
  }
  if (!is_put && value.has_value()) return Corruption("a delete carries a value");
  c.key = *std::move(key);
  c.value = value.value_or("");
  if (GroundTruth::RecordTableId(c.key) != c.table_id) {
    return Corruption("key is not a record key of table_id");
  }
  return c;
}

Status CheckHeader(const std::string& line) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  auto format = j.is_object() ? j.find("format") : j.end();
  if (!j.is_object() || format == j.end() || *format != kFormatName) {
    return Corruption("ground truth: missing header line");
  }
  auto version = j.find("version");
  if (version == j.end() || *version != kFormatVersion) {
    return Corruption("ground truth: unsupported version");
  }
  return Status::Ok();
}

}  // namespace

std::optional<TableId> GroundTruth::RecordTableId(std::string_view raw_key) {
  if (raw_key.size() <= kRecordPrefixLen || raw_key[0] != 't' || raw_key[10] != 'r') {
    return std::nullopt;
  }
  uint64_t bits = 0;
  for (size_t i = 1; i <= 8; ++i) bits = bits << 8 | static_cast<uint8_t>(raw_key[i]);
  return TableId(static_cast<int64_t>(bits ^ kSignBit));
}

void GroundTruth::OnCommit(const CommitEvent& event) {
  if (event.kind != WriteKind::kPut && event.kind != WriteKind::kDelete) return;
  std::optional<TableId> table_id = RecordTableId(event.key);
  if (!table_id.has_value()) return;
  TruthChange change{*table_id,
                     event.commit_ts,
                     event.start_ts,
                     std::string(event.key),
                     event.kind,
                     std::string(event.value),
                     event.old_value ? std::optional<std::string>(*event.old_value) : std::nullopt};
  Record(std::move(change));
}

void GroundTruth::Record(TruthChange change) {
  MutexLock lock(&mu_);
  tables_[change.table_id].push_back(std::move(change));
}

std::vector<TableId> GroundTruth::Tables() const {
  MutexLock lock(&mu_);
  std::vector<TableId> out;
  for (const auto& [id, changes] : tables_) out.push_back(id);
  return out;
}

size_t GroundTruth::size() const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [id, changes] : tables_) n += changes.size();
  return n;
}

std::vector<TruthChange> GroundTruth::History(TableId table_id) const {
  std::vector<TruthChange> out;
  {
    MutexLock lock(&mu_);
    auto it = tables_.find(table_id);
    if (it != tables_.end()) out = it->second;
  }
  std::stable_sort(out.begin(), out.end(), ChangeOrder);
  return out;
}

std::vector<TruthChange> GroundTruth::AllChanges() const {
  std::vector<TruthChange> out;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, changes] : tables_) out.insert(out.end(), changes.begin(), changes.end());
  }
  std::stable_sort(out.begin(), out.end(), ChangeOrder);
  return out;
}

std::map<std::string, std::string> GroundTruth::StateAt(TableId table_id, Ts ts) const {
  std::map<std::string, std::string> state;
  for (TruthChange& change : History(table_id)) {
    if (change.commit_ts > ts) break;
    if (change.kind == WriteKind::kPut) {
      state[change.key] = std::move(change.value);
    } else {
      state.erase(change.key);
    }
  }
  return state;
}

Status GroundTruth::Export(std::ostream& out) const {
  out << Json{{"format", kFormatName}, {"version", kFormatVersion}}.dump() << '\n';
  for (const TruthChange& change : AllChanges()) out << ToJson(change).dump() << '\n';
  out.flush();
  if (!out) return IoError("ground truth: write failed");
  return Status::Ok();
}

Status GroundTruth::ExportToFile(const std::string& path) const {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return IoError("ground truth: cannot open " + path);
  return Export(out);
}

Result<std::vector<TruthChange>> GroundTruth::Read(std::istream& in) {
  std::vector<TruthChange> out;
  std::string line;
  size_t line_no = 0;
  bool header_seen = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    if (!header_seen) {
      RETURN_IF_ERROR(CheckHeader(line));
      header_seen = true;
      continue;
    }
    Result<TruthChange> change = FromJson(Json::parse(line, nullptr, false));
    if (!change.ok()) {
      return change.status().WithContext("ground truth line " + std::to_string(line_no));
    }
    out.push_back(std::move(change).value());
  }
  if (in.bad()) return IoError("ground truth: read failed");
  if (!header_seen) return Corruption("ground truth: missing header line");
  return out;
}

Status GroundTruth::Import(std::istream& in) {
  ASSIGN_OR_RETURN(std::vector<TruthChange> changes, Read(in));
  for (TruthChange& change : changes) Record(std::move(change));
  return Status::Ok();
}

Status GroundTruth::ImportFromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return IoError("ground truth: cannot open " + path);
  return Import(in);
}

}  // namespace sluice::simkv
