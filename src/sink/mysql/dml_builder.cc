#include "sink/mysql/dml_builder.h"

#include <fmt/format.h>

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "sink/mysql/row_keys.h"

namespace sluice::sink {

namespace {

using Row = std::vector<codec::Datum>;

// Writes the rows of one run of one table.
class RunWriter {
 public:
  RunWriter(const event::TableSchema& schema, const DmlBuildOptions& options,
            std::vector<std::string>* out)
      : schema_(schema), options_(options), out_(out), name_(schema.QuotedName()) {
    for (size_t i = 0; i < schema.columns().size(); ++i) {
      if (!schema.IsGenerated(static_cast<int>(i))) writable_.push_back(static_cast<int>(i));
      if (!schema.columns()[i].IsVirtualGenerated()) comparable_.push_back(static_cast<int>(i));
    }
    keyed_ = schema.has_key();
    for (int off : schema.key_columns()) {
      if (schema.columns()[off].IsVirtualGenerated()) keyed_ = false;
    }
  }

  Status Write(const std::vector<const event::RowChange*>& rows, bool safe_mode) {
    std::vector<const Row*> deletes, inserts;
    std::vector<const event::RowChange*> updates;
    for (const event::RowChange* r : rows) {
      switch (r->kind) {
        case event::RowKind::kInsert:
          RETURN_IF_ERROR(CheckWidth(r->row));
          inserts.push_back(&r->row);
          break;
        case event::RowKind::kDelete:
          RETURN_IF_ERROR(CheckWidth(r->pre_row));
          deletes.push_back(&r->pre_row);
          break;
        case event::RowKind::kUpdate:
          RETURN_IF_ERROR(CheckWidth(r->pre_row));
          RETURN_IF_ERROR(CheckWidth(r->row));
          if (safe_mode) {
            deletes.push_back(&r->pre_row);
            inserts.push_back(&r->row);
          } else {
            updates.push_back(r);
          }
          break;
      }
    }
    RETURN_IF_ERROR(WriteDeletes(deletes));
    for (const event::RowChange* r : updates) RETURN_IF_ERROR(WriteUpdate(*r));
    return WriteInserts(inserts, safe_mode);
  }

 private:
  Status CheckWidth(const Row& row) const {
    if (row.size() == schema_.columns().size()) return Status::Ok();
    return Corruption(fmt::format("row of {} has {} values, the table has {} columns", name_,
                                  row.size(), schema_.columns().size()));
  }

  bool KeyHasNull(const Row& row) const {
    for (int off : schema_.key_columns()) {
      if (row[off].is_null()) return true;
    }
    return false;
  }

  // "`a` = 1 AND `b` IS NULL" over the key (or every comparable column).
  Status AppendWhere(const Row& row, std::string* sql) const {
    const std::vector<int>& cols = keyed_ ? schema_.key_columns() : comparable_;
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i > 0) sql->append(" AND ");
      RETURN_IF_ERROR(AppendEquals(row[cols[i]], schema_.columns()[cols[i]], options_.flavor, sql));
    }
    return Status::Ok();
  }

  Status AppendTuple(const Row& row, const std::vector<int>& cols, std::string* sql) const {
    sql->push_back('(');
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i > 0) sql->push_back(',');
      RETURN_IF_ERROR(AppendLiteral(row[cols[i]], schema_.columns()[cols[i]], sql));
    }
    sql->push_back(')');
    return Status::Ok();
  }

  bool Full(const std::string& sql, size_t rows) const {
    return rows >= options_.max_rows_per_statement || sql.size() >= options_.max_statement_bytes;
  }

  Status WriteDeletes(const std::vector<const Row*>& rows) {
    std::string sql;
    size_t in_list = 0;
    auto flush = [&] {
      if (in_list == 0) return;
      sql.append(")");
      out_->push_back(std::move(sql));
      sql.clear();
      in_list = 0;
    };
    for (const Row* row : rows) {
      if (!keyed_ || !options_.batch || KeyHasNull(*row)) {
        std::string one = "DELETE FROM " + name_ + " WHERE ";
        RETURN_IF_ERROR(AppendWhere(*row, &one));
        one.append(" LIMIT 1");
        out_->push_back(std::move(one));
        continue;
      }
      if (in_list == 0) {
        sql = "DELETE FROM " + name_ + " WHERE (";
        for (size_t i = 0; i < schema_.key_columns().size(); ++i) {
          if (i > 0) sql.push_back(',');
          AppendQuotedName(schema_.columns()[schema_.key_columns()[i]].name.original, &sql);
        }
        sql.append(") IN (");
      } else {
        sql.push_back(',');
      }
      RETURN_IF_ERROR(AppendTuple(*row, schema_.key_columns(), &sql));
      if (Full(sql, ++in_list)) flush();
    }
    flush();
    return Status::Ok();
  }

  Status WriteUpdate(const event::RowChange& r) {
    std::string sql = "UPDATE " + name_ + " SET ";
    for (size_t i = 0; i < writable_.size(); ++i) {
      if (i > 0) sql.push_back(',');
      int off = writable_[i];
      AppendQuotedName(schema_.columns()[off].name.original, &sql);
      sql.push_back('=');
      RETURN_IF_ERROR(AppendLiteral(r.row[off], schema_.columns()[off], &sql));
    }
    sql.append(" WHERE ");
    RETURN_IF_ERROR(AppendWhere(r.pre_row, &sql));
    sql.append(" LIMIT 1");
    out_->push_back(std::move(sql));
    return Status::Ok();
  }

  Status WriteInserts(const std::vector<const Row*>& rows, bool replace) {
    std::string head = replace ? "REPLACE INTO " : "INSERT INTO ";
    head += name_ + " (";
    for (size_t i = 0; i < writable_.size(); ++i) {
      if (i > 0) head.push_back(',');
      AppendQuotedName(schema_.columns()[writable_[i]].name.original, &head);
    }
    head.append(") VALUES ");
    std::string sql;
    size_t n = 0;
    for (const Row* row : rows) {
      if (n == 0) {
        sql = head;
      } else {
        sql.push_back(',');
      }
      RETURN_IF_ERROR(AppendTuple(*row, writable_, &sql));
      ++n;
      if (!options_.batch || Full(sql, n)) {
        out_->push_back(std::move(sql));
        n = 0;
      }
    }
    if (n > 0) out_->push_back(std::move(sql));
    return Status::Ok();
  }

  const event::TableSchema& schema_;
  const DmlBuildOptions& options_;
  std::vector<std::string>* out_;
  const std::string name_;
  std::vector<int> writable_;    // Written by INSERT and UPDATE.
  std::vector<int> comparable_;  // Compared in WHERE when there is no key.
  bool keyed_ = false;
};

bool SameTable(const event::TableSchema& a, const event::TableSchema& b) {
  return &a == &b || (a.table_id() == b.table_id() && a.version() == b.version() &&
                      a.QuotedName() == b.QuotedName());
}

}  // namespace

int64_t StatementTableOf(const event::DmlEvent& event) {
  return event.schema == nullptr ? 0 : event.schema->table_id();
}

Status BuildDmlStatements(const std::vector<BatchItem>& items, const DmlBuildOptions& options,
                          std::vector<std::string>* out) {
  const event::TableSchema* run_schema = nullptr;
  bool run_safe = false;
  std::vector<const event::RowChange*> run_rows;
  absl::flat_hash_set<uint64_t> run_ids;  // Row identities: no node for each.
  std::vector<UniqueKey> keys;
  std::vector<uint64_t> ids;

  auto flush = [&]() -> Status {
    if (run_schema != nullptr && !run_rows.empty()) {
      RunWriter writer(*run_schema, options, out);
      RETURN_IF_ERROR(writer.Write(run_rows, run_safe));
    }
    run_rows.clear();
    run_ids.clear();
    return Status::Ok();
  };

  // The batch is one downstream transaction and rows of different tables
  // commute inside it, so the items are grouped by table (keeping their
  // order within a table): interleaved tables then still form long runs.
  std::vector<const BatchItem*> ordered;
  ordered.reserve(items.size());
  for (const BatchItem& item : items) ordered.push_back(&item);
  std::stable_sort(ordered.begin(), ordered.end(), [](const BatchItem* a, const BatchItem* b) {
    // Items without a schema sort first and fail.
    return StatementTableOf(*a->event) < StatementTableOf(*b->event);
  });

  for (const BatchItem* ordered_item : ordered) {
    const BatchItem& item = *ordered_item;
    const event::DmlEvent& e = *item.event;
    if (e.rows.empty()) continue;
    if (e.schema == nullptr) return Corruption("dml event without a table schema");
    bool same = run_schema != nullptr && SameTable(*run_schema, *e.schema);
    if (!same) keys = UniqueKeys(*e.schema);
    ids.clear();
    for (const event::RowChange& r : e.rows) {
      if (!r.row.empty()) AppendRowHashes(*e.schema, keys, r.row, true, &ids);
      if (!r.pre_row.empty()) AppendRowHashes(*e.schema, keys, r.pre_row, true, &ids);
    }
    bool repeats = false;
    for (uint64_t id : ids) repeats = repeats || run_ids.contains(id);
    if (!same || item.safe_mode != run_safe || repeats) {
      RETURN_IF_ERROR(flush());
      run_schema = e.schema.get();
      run_safe = item.safe_mode;
    }
    run_ids.insert(ids.begin(), ids.end());
    for (const event::RowChange& r : e.rows) run_rows.push_back(&r);
  }
  return flush();
}

}  // namespace sluice::sink
