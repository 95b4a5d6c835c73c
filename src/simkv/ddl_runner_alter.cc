// DdlRunner: column and index actions (ALTER TABLE ...).
#include <algorithm>
#include <utility>

#include "codec/mysql_type.h"
#include "simkv/ddl_runner.h"
#include "simkv/sql_render.h"

namespace sluice::simkv {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;
using model::ActionType;
using model::SchemaState;

namespace {

// Re-numbers column offsets and the offsets index columns point at.
void RecomputeOffsets(model::TableInfo* table) {
  for (size_t i = 0; i < table->columns.size(); ++i) {
    table->columns[i].offset = static_cast<int64_t>(i);
  }
  for (model::IndexInfo& index : table->indices) {
    for (model::IndexColumn& ic : index.columns) {
      for (const model::ColumnInfo& c : table->columns) {
        if (c.name.lower == ic.name.lower) ic.offset = c.offset;
      }
    }
  }
}

bool IsIndexed(const model::TableInfo& table, const model::ColumnInfo& column) {
  for (const model::IndexInfo& index : table.indices) {
    for (const model::IndexColumn& ic : index.columns) {
      if (ic.name.lower == column.name.lower) return true;
    }
  }
  return false;
}

// The column of `name`, or nullptr.
model::ColumnInfo* ColumnNamed(model::TableInfo* table, std::string_view name) {
  std::string lower = model::AsciiLower(name);
  for (model::ColumnInfo& c : table->columns) {
    if (c.name.lower == lower) return &c;
  }
  return nullptr;
}

int IntegerRank(uint8_t tp) {
  switch (tp) {
    case mt::kTiny:
      return 1;
    case mt::kShort:
      return 2;
    case mt::kInt24:
      return 3;
    case mt::kLong:
      return 4;
    case mt::kLonglong:
      return 5;
    default:
      return 0;
  }
}

// Whether `to` holds every value of `from` with the same row encoding.
bool IsWidening(const model::FieldType& from, const model::FieldType& to) {
  if (IntegerRank(from.tp) > 0 && IntegerRank(to.tp) > 0) {
    return IntegerRank(to.tp) >= IntegerRank(from.tp) &&
           from.HasFlag(mf::kUnsigned) == to.HasFlag(mf::kUnsigned);
  }
  bool strings = (from.tp == mt::kVarchar || from.tp == mt::kString) && to.tp == mt::kVarchar;
  return strings && to.flen >= from.flen && from.charset == to.charset;
}

model::JsonValue Position() {
  model::JsonValue pos = model::JsonValue::object();
  pos["Tp"] = 0;
  pos["RelativeColumn"] = nullptr;
  return pos;
}

model::JsonValue NameJson(const model::CIStr& name) {
  model::JsonValue out = model::JsonValue::object();
  out["O"] = name.original;
  out["L"] = name.lower;
  return out;
}

std::string AlterPrefix(const model::TableInfo& table) {
  return "ALTER TABLE " + QuoteName(table.name.original) + " ";
}

}  // namespace

Result<model::Job> DdlRunner::PublishNewElement(DdlJobRow* row, int64_t db_id,
                                                model::TableInfo* info, model::SchemaState* state) {
  auto step = [&](Ts start, MutationSet* txn, model::Job* job) {
    *state = job->schema_state;
    PutTable(db_id, start, info, txn);
    return Status::Ok();
  };
  auto final_step = [&](Ts start, MutationSet* txn, model::Job* job) {
    *state = SchemaState::kPublic;
    PutTable(db_id, start, info, txn);
    job->binlog->table_info = *info;
    return Status::Ok();
  };
  return RunSteps(
      row, {SchemaState::kDeleteOnly, SchemaState::kWriteOnly, SchemaState::kWriteReorganization},
      step, SchemaState::kPublic, final_step);
}

Result<model::Job> DdlRunner::AddColumn(int64_t table_id, model::ColumnInfo column) {
  ASSIGN_OR_RETURN(TableTarget target, ResolveTable(table_id));
  model::TableInfo info = target.entry->info;
  int64_t db_id = target.db->id;
  if (ColumnNamed(&info, column.name.original) != nullptr) {
    return AlreadyExists("ddl: column " + column.name.original + " exists");
  }
  column.id = info.max_col_id + 1;
  column.offset = static_cast<int64_t>(info.columns.size());
  DdlJobRow row = NewJob(ActionType::kAddColumn, *target.db, &info,
                         AlterPrefix(info) + "ADD COLUMN " + ColumnDefinitionSql(column));
  row.job.raw_args =
      model::JsonValue::array({model::EncodeColumnInfo(column), Position(), column.offset, false});
  RETURN_IF_ERROR(Submit(&row, 0, nullptr));
  info.columns.push_back(column);
  info.max_col_id = column.id;
  return PublishNewElement(&row, db_id, &info, &info.columns.back().state);
}

Result<model::Job> DdlRunner::DropColumn(int64_t table_id, std::string_view name) {
  ASSIGN_OR_RETURN(TableTarget target, ResolveTable(table_id));
  model::TableInfo info = target.entry->info;
  int64_t db_id = target.db->id;
  model::ColumnInfo* column = ColumnNamed(&info, name);
  if (column == nullptr) return NotFound("ddl: no column " + std::string(name));
  if (column->IsPrimaryKey() || IsIndexed(info, *column) || info.columns.size() < 2) {
    return InvalidArgument("ddl: column " + std::string(name) + " cannot be dropped");
  }
  model::CIStr col_name = column->name;
  DdlJobRow row = NewJob(ActionType::kDropColumn, *target.db, &info,
                         AlterPrefix(info) + "DROP COLUMN " + QuoteName(col_name.original));
  row.job.raw_args = model::JsonValue::array({NameJson(col_name), false});
  RETURN_IF_ERROR(Submit(&row, 0, nullptr));
  auto step = [&](Ts start, MutationSet* txn, model::Job* job) {
    ColumnNamed(&info, col_name.lower)->state = job->schema_state;
    PutTable(db_id, start, &info, txn);
    return Status::Ok();
  };
  auto final_step = [&](Ts start, MutationSet* txn, model::Job* job) {
    std::erase_if(info.columns,
                  [&](const model::ColumnInfo& c) { return c.name.lower == col_name.lower; });
    RecomputeOffsets(&info);
    PutTable(db_id, start, &info, txn);
    job->binlog->table_info = info;
    return Status::Ok();
  };
  return RunSteps(
      &row, {SchemaState::kWriteOnly, SchemaState::kDeleteOnly, SchemaState::kDeleteReorganization},
      step, SchemaState::kNone, final_step);
}

Result<model::Job> DdlRunner::ModifyColumn(int64_t table_id, std::string_view name,
                                           model::FieldType type) {
  ASSIGN_OR_RETURN(TableTarget target, ResolveTable(table_id));
  model::TableInfo info = target.entry->info;
  int64_t db_id = target.db->id;
  model::ColumnInfo* column = ColumnNamed(&info, name);
  if (column == nullptr) return NotFound("ddl: no column " + std::string(name));
  if (!IsWidening(column->type, type)) {
    return InvalidArgument("ddl: MODIFY COLUMN " + std::string(name) + " is not a widening");
  }
  type.flag |= column->type.flag & (mf::kNotNull | mf::kPriKey | mf::kNoDefaultValue);
  column->type = std::move(type);
  DdlJobRow row = NewJob(ActionType::kModifyColumn, *target.db, &info,
                         AlterPrefix(info) + "MODIFY COLUMN " + ColumnDefinitionSql(*column));
  row.job.raw_args = model::JsonValue::array(
      {model::EncodeColumnInfo(*column), NameJson(column->name), Position(), 0, 0});
  RETURN_IF_ERROR(Submit(&row, 0, nullptr));
  return RunSteps(&row, {}, nullptr, SchemaState::kPublic,
                  [&](Ts start, MutationSet* txn, model::Job* job) {
                    PutTable(db_id, start, &info, txn);
                    job->binlog->table_info = info;
                    return Status::Ok();
                  });
}

Result<model::Job> DdlRunner::AddIndex(int64_t table_id, std::string_view index_name,
                                       std::string_view column_name) {
  ASSIGN_OR_RETURN(TableTarget target, ResolveTable(table_id));
  model::TableInfo info = target.entry->info;
  int64_t db_id = target.db->id;
  const model::ColumnInfo* column = ColumnNamed(&info, column_name);
  if (column == nullptr) return NotFound("ddl: no column " + std::string(column_name));
  if (info.FindIndexByName(index_name) != nullptr) {
    return AlreadyExists("ddl: index " + std::string(index_name) + " exists");
  }
  model::IndexInfo index;
  index.id = info.max_idx_id + 1;
  index.name = model::CIStr::From(index_name);
  index.columns = {{column->name, column->offset, model::kUnspecifiedLength}};
  index.tp = model::IndexType::kBtree;
  DdlJobRow row = NewJob(ActionType::kAddIndex, *target.db, &info,
                         AlterPrefix(info) + "ADD INDEX " + QuoteName(index.name.original) + " (" +
                             QuoteName(column->name.original) + ")");
  row.reorg = true;
  model::JsonValue part = model::JsonValue::object();
  part["Column"] = {{"Name", NameJson(column->name)}};
  part["Length"] = model::kUnspecifiedLength;
  row.job.raw_args = model::JsonValue::array(
      {false, NameJson(index.name), model::JsonValue::array({part}), nullptr, nullptr, false});
  RETURN_IF_ERROR(Submit(&row, 0, nullptr));
  info.indices.push_back(index);
  info.max_idx_id = index.id;
  return PublishNewElement(&row, db_id, &info, &info.indices.back().state);
}

Result<model::Job> DdlRunner::DropIndex(int64_t table_id, std::string_view index_name) {
  ASSIGN_OR_RETURN(TableTarget target, ResolveTable(table_id));
  model::TableInfo info = target.entry->info;
  int64_t db_id = target.db->id;
  const model::IndexInfo* found = info.FindIndexByName(index_name);
  if (found == nullptr || found->primary) {
    return NotFound("ddl: no secondary index " + std::string(index_name));
  }
  model::CIStr name = found->name;
  DdlJobRow row = NewJob(ActionType::kDropIndex, *target.db, &info,
                         AlterPrefix(info) + "DROP INDEX " + QuoteName(name.original));
  row.job.raw_args = model::JsonValue::array({NameJson(name), false});
  RETURN_IF_ERROR(Submit(&row, 0, nullptr));
  auto find = [&]() {
    return std::find_if(info.indices.begin(), info.indices.end(),
                        [&](const model::IndexInfo& i) { return i.name.lower == name.lower; });
  };
  auto step = [&](Ts start, MutationSet* txn, model::Job* job) {
    find()->state = job->schema_state;
    PutTable(db_id, start, &info, txn);
    return Status::Ok();
  };
  auto final_step = [&](Ts start, MutationSet* txn, model::Job* job) {
    info.indices.erase(find());
    PutTable(db_id, start, &info, txn);
    job->binlog->table_info = info;
    return Status::Ok();
  };
  return RunSteps(
      &row, {SchemaState::kWriteOnly, SchemaState::kDeleteOnly, SchemaState::kDeleteReorganization},
      step, SchemaState::kNone, final_step);
}

}  // namespace sluice::simkv
