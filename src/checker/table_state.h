// The state of a set of tables as the checker compares it: per table, its
// columns and its rows keyed by their key-column text. Built from simkv's
// ground truth (expected) or read back from a downstream (actual). Value
// types; thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace sluice::checker {

using RowValues = std::vector<std::optional<std::string>>;  // nullopt = NULL

struct TableData {
  std::vector<std::string> columns;  // Lower-case names, in order.
  std::vector<bool> approximate;     // FLOAT/DOUBLE: compared with tolerance.
  std::vector<bool> bit;             // BIT: read back as integers.
  std::vector<int> key_columns;      // Offsets; empty = whole row is the key.
  // Text of each column's value for rows written before it existed.
  std::vector<std::optional<std::string>> defaults;
  std::map<std::string, RowValues> rows;

  // The key under which `row` is stored: the key columns' text joined with a
  // separator that cannot occur in it; keyless tables use the whole row and
  // a counter (so duplicate rows are kept apart).
  std::string KeyOf(const RowValues& row) const;
  // Inserts or replaces the row under KeyOf(row); keyless tables append.
  void Upsert(RowValues row);
  // Removes the row with the same key (keyless: one identical row).
  void Erase(const RowValues& row);
};

using TableName = std::pair<std::string, std::string>;  // (schema, table), lower-case
using DatabaseState = std::map<TableName, TableData>;

struct Difference {
  enum class Kind { kMissingTable, kExtraTable, kMissingRow, kExtraRow, kDifferentRow };
  Kind kind;
  TableName table;
  std::string key;
  RowValues expected;
  RowValues actual;
};

struct DiffReport {
  std::vector<Difference> differences;
  size_t tables_compared = 0;
  size_t rows_compared = 0;
  bool ok() const { return differences.empty(); }
  // One line per difference (at most `limit`), then a summary line.
  void Print(std::ostream& out, size_t limit = 50) const;
};

// Compares `actual` with `expected`: every expected table and row must be
// present with equal values (approximate columns within a relative 1e-5).
DiffReport Compare(const DatabaseState& expected, const DatabaseState& actual);

}  // namespace sluice::checker
