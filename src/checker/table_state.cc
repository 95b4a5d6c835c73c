#include "checker/table_state.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace sluice::checker {

namespace {

constexpr char kSep = '\x1f';

std::string Text(const std::optional<std::string>& v) { return v ? *v : std::string("NULL"); }

std::string RowText(const RowValues& row) {
  std::string out = "(";
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) out += ", ";
    out += Text(row[i]);
  }
  return out + ")";
}

bool ApproxEqual(const std::string& a, const std::string& b) {
  char* ea = nullptr;
  char* eb = nullptr;
  double x = std::strtod(a.c_str(), &ea);
  double y = std::strtod(b.c_str(), &eb);
  if (*ea != '\0' || *eb != '\0') return a == b;
  if (x == y) return true;
  return std::fabs(x - y) <= 1e-5 * std::max(std::fabs(x), std::fabs(y));
}

bool RowsEqual(const TableData& t, const RowValues& a, const RowValues& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].has_value() != b[i].has_value()) return false;
    if (!a[i]) continue;
    bool approx = i < t.approximate.size() && t.approximate[i];
    if (approx ? !ApproxEqual(*a[i], *b[i]) : *a[i] != *b[i]) return false;
  }
  return true;
}

const char* KindName(Difference::Kind k) {
  switch (k) {
    case Difference::Kind::kMissingTable:
      return "missing table";
    case Difference::Kind::kExtraTable:
      return "extra table";
    case Difference::Kind::kMissingRow:
      return "missing row";
    case Difference::Kind::kExtraRow:
      return "extra row";
    case Difference::Kind::kDifferentRow:
      return "different row";
  }
  return "?";
}

}  // namespace

std::string TableData::KeyOf(const RowValues& row) const {
  std::string key;
  if (key_columns.empty()) {
    for (const auto& v : row) key += (v ? "v" + *v : std::string("n")) + kSep;
    return key;
  }
  for (int off : key_columns) key += (row[off] ? "v" + *row[off] : std::string("n")) + kSep;
  return key;
}

void TableData::Upsert(RowValues row) {
  std::string key = KeyOf(row);
  if (key_columns.empty()) {
    int n = 0;
    while (rows.count(key + std::to_string(n)) > 0) ++n;
    key += std::to_string(n);
  }
  rows[key] = std::move(row);
}

void TableData::Erase(const RowValues& row) {
  std::string key = KeyOf(row);
  if (!key_columns.empty()) {
    rows.erase(key);
    return;
  }
  for (auto it = rows.lower_bound(key); it != rows.end() && it->first.starts_with(key); ++it) {
    if (it->second == row) {
      rows.erase(it);
      return;
    }
  }
}

DiffReport Compare(const DatabaseState& expected, const DatabaseState& actual) {
  DiffReport report;
  for (const auto& [name, want] : expected) {
    auto it = actual.find(name);
    if (it == actual.end()) {
      report.differences.push_back({Difference::Kind::kMissingTable, name, "", {}, {}});
      continue;
    }
    ++report.tables_compared;
    const TableData& got = it->second;
    for (const auto& [key, row] : want.rows) {
      ++report.rows_compared;
      auto r = got.rows.find(key);
      if (r == got.rows.end()) {
        report.differences.push_back({Difference::Kind::kMissingRow, name, key, row, {}});
      } else if (!RowsEqual(want, row, r->second)) {
        report.differences.push_back({Difference::Kind::kDifferentRow, name, key, row, r->second});
      }
    }
    for (const auto& [key, row] : got.rows) {
      if (want.rows.count(key) == 0) {
        report.differences.push_back({Difference::Kind::kExtraRow, name, key, {}, row});
      }
    }
  }
  for (const auto& [name, got] : actual) {
    if (expected.count(name) == 0) {
      report.differences.push_back({Difference::Kind::kExtraTable, name, "", {}, {}});
    }
  }
  return report;
}

void DiffReport::Print(std::ostream& out, size_t limit) const {
  size_t shown = 0;
  for (const Difference& d : differences) {
    if (shown++ == limit) {
      out << "... " << (differences.size() - limit) << " more\n";
      break;
    }
    out << fmt::format("{} `{}`.`{}`", KindName(d.kind), d.table.first, d.table.second);
    if (!d.expected.empty()) out << " expected " << RowText(d.expected);
    if (!d.actual.empty()) out << " actual " << RowText(d.actual);
    out << "\n";
  }
  out << fmt::format("checker: {} differences ({} tables, {} rows compared)\n", differences.size(),
                     tables_compared, rows_compared);
}

}  // namespace sluice::checker
