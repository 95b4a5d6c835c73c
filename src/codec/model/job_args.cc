#include "codec/model/job_args.h"

#include <optional>
#include <string_view>

#include "codec/model/json_fields.h"

namespace sluice::model {
namespace {

using internal::ObjectReader;

constexpr std::string_view kArgsPath = "job.raw_args";

// raw_args in the layout of the job's version, checked for shape.
class ArgsView {
 public:
  static Result<ArgsView> Of(const Job& job) {
    if (job.version > kJobVersion2 || job.version < 0) {
      return Corruption("job " + std::to_string(job.id) + ": unknown job version " +
                        std::to_string(job.version));
    }
    const bool named = job.version == kJobVersion2;
    const JsonValue& args = job.raw_args;
    if (!args.is_null() && named && !args.is_object()) {
      return internal::TypeError(kArgsPath, "object", args);
    }
    if (!args.is_null() && !named && !args.is_array()) {
      return internal::TypeError(kArgsPath, "array", args);
    }
    return ArgsView(args, named);
  }

  bool named() const { return named_; }

  // The named arguments (an empty object when raw_args is null).
  const JsonValue& object() const { return args_.is_null() ? EmptyObject() : args_; }

  // Reads positional argument `index` with `read`; past the end is a no-op.
  template <typename T, typename ReadFn>
  Status Read(size_t index, ReadFn read, T* out) const {
    if (args_.is_null() || index >= args_.size()) return Status::Ok();
    return read(args_[index], std::string(kArgsPath) + "[" + std::to_string(index) + "]", out);
  }

 private:
  ArgsView(const JsonValue& args, bool named) : args_(args), named_(named) {}

  static const JsonValue& EmptyObject() {
    static const JsonValue kEmpty = JsonValue::object();
    return kEmpty;
  }

  const JsonValue& args_;
  bool named_;
};

Status ReadIdList(const JsonValue& value, std::string_view path, std::vector<int64_t>* out) {
  return internal::ReadList(value, path, out, internal::ReadInt64Element);
}

Status ReadNameList(const JsonValue& value, std::string_view path, std::vector<CIStr>* out) {
  return internal::ReadList(value, path, out, internal::ReadCIStr);
}

Status DecodeRenameItem(const JsonValue& value, std::string_view path, RenameTablesItem* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("old_schema_id", &out->old_schema_id)
      .Name("old_schema_name", &out->old_schema_name)
      .Name("old_table_name", &out->old_table_name)
      .Int("new_schema_id", &out->new_schema_id)
      .Name("new_table_name", &out->new_table_name)
      .Int("table_id", &out->table_id);
  return reader.status();
}

JsonValue EncodeRenameItem(const RenameTablesItem& item) {
  JsonValue out = JsonValue::object();
  if (item.old_schema_id != 0) out["old_schema_id"] = item.old_schema_id;
  out["old_schema_name"] = internal::NameJson(item.old_schema_name);
  out["old_table_name"] = internal::NameJson(item.old_table_name);
  if (item.new_schema_id != 0) out["new_schema_id"] = item.new_schema_id;
  out["new_table_name"] = internal::NameJson(item.new_table_name);
  if (item.table_id != 0) out["table_id"] = item.table_id;
  return out;
}

// Version 1 spreads RENAME TABLES over six parallel arrays.
struct RenameTablesColumns {
  std::vector<int64_t> old_schema_ids;
  std::vector<int64_t> new_schema_ids;
  std::vector<CIStr> old_table_names;
  std::vector<int64_t> table_ids;
  std::vector<CIStr> old_schema_names;
  std::vector<CIStr> new_table_names;
};

Result<std::vector<RenameTablesItem>> ZipRenameColumns(const RenameTablesColumns& c) {
  const size_t n = c.old_schema_ids.size();
  if (c.new_schema_ids.size() != n || c.table_ids.size() != n || c.old_table_names.size() != n) {
    return Corruption(std::string(kArgsPath) + ": rename tables arrays differ in length");
  }
  std::vector<RenameTablesItem> items(n);
  for (size_t i = 0; i < n; ++i) {
    items[i].old_schema_id = c.old_schema_ids[i];
    items[i].new_schema_id = c.new_schema_ids[i];
    items[i].old_table_name = c.old_table_names[i];
    items[i].table_id = c.table_ids[i];
    // Older TiDB wrote fewer arrays; the names then stay empty.
    if (i < c.old_schema_names.size()) items[i].old_schema_name = c.old_schema_names[i];
    if (i < c.new_table_names.size()) items[i].new_table_name = c.new_table_names[i];
  }
  return items;
}

// Where a finished job keeps its removed ids: position in the v1 array and
// key in the v2 object.
struct DroppedIdsSlot {
  size_t v1_index;
  std::string_view v2_key;
};

std::optional<DroppedIdsSlot> DroppedIdsSlotOf(ActionType type) {
  switch (type) {
    case ActionType::kDropSchema:
      return DroppedIdsSlot{0, "all_dropped_table_ids"};
    case ActionType::kDropTable:
    case ActionType::kTruncateTable:
      return DroppedIdsSlot{1, "old_partition_ids"};
    case ActionType::kTruncateTablePartition:
      return DroppedIdsSlot{0, "old_partition_ids"};
    case ActionType::kDropTablePartition:
    case ActionType::kReorganizePartition:
    case ActionType::kAlterTablePartitioning:
    case ActionType::kRemovePartitioning:
      return DroppedIdsSlot{0, "old_physical_tbl_ids"};
    default:
      return std::nullopt;
  }
}

}  // namespace

Result<RenameTableArgs> GetRenameTableArgs(const Job& job) {
  ASSIGN_OR_RETURN(ArgsView args, ArgsView::Of(job));
  RenameTableArgs out;
  if (args.named()) {
    ObjectReader reader(args.object(), std::string(kArgsPath));
    reader.Int("old_schema_id", &out.old_schema_id)
        .Name("old_schema_name", &out.old_schema_name)
        .Name("new_table_name", &out.new_table_name);
    RETURN_IF_ERROR(reader.status());
    return out;
  }
  RETURN_IF_ERROR(args.Read(0, internal::ReadInt64Element, &out.old_schema_id));
  RETURN_IF_ERROR(args.Read(1, internal::ReadCIStr, &out.new_table_name));
  RETURN_IF_ERROR(args.Read(2, internal::ReadCIStr, &out.old_schema_name));
  return out;
}

JsonValue MakeRenameTableArgs(int64_t job_version, const RenameTableArgs& args) {
  if (job_version == kJobVersion2) {
    JsonValue out = JsonValue::object();
    if (args.old_schema_id != 0) out["old_schema_id"] = args.old_schema_id;
    out["old_schema_name"] = internal::NameJson(args.old_schema_name);
    out["new_table_name"] = internal::NameJson(args.new_table_name);
    return out;
  }
  return JsonValue::array({args.old_schema_id, internal::NameJson(args.new_table_name),
                           internal::NameJson(args.old_schema_name)});
}

Result<std::vector<RenameTablesItem>> GetRenameTablesArgs(const Job& job) {
  ASSIGN_OR_RETURN(ArgsView args, ArgsView::Of(job));
  if (args.named()) {
    std::vector<RenameTablesItem> items;
    ObjectReader reader(args.object(), std::string(kArgsPath));
    reader.List("rename_table_infos", &items, DecodeRenameItem);
    RETURN_IF_ERROR(reader.status());
    return items;
  }
  RenameTablesColumns c;
  RETURN_IF_ERROR(args.Read(0, ReadIdList, &c.old_schema_ids));
  RETURN_IF_ERROR(args.Read(1, ReadIdList, &c.new_schema_ids));
  RETURN_IF_ERROR(args.Read(2, ReadNameList, &c.old_table_names));
  RETURN_IF_ERROR(args.Read(3, ReadIdList, &c.table_ids));
  RETURN_IF_ERROR(args.Read(4, ReadNameList, &c.old_schema_names));
  RETURN_IF_ERROR(args.Read(5, ReadNameList, &c.new_table_names));
  return ZipRenameColumns(c);
}

JsonValue MakeRenameTablesArgs(int64_t job_version, const std::vector<RenameTablesItem>& items) {
  if (job_version == kJobVersion2) {
    JsonValue out = JsonValue::object();
    if (!items.empty()) out["rename_table_infos"] = internal::ListJson(items, EncodeRenameItem);
    return out;
  }
  JsonValue columns[6] = {JsonValue::array(), JsonValue::array(), JsonValue::array(),
                          JsonValue::array(), JsonValue::array(), JsonValue::array()};
  for (const auto& item : items) {
    columns[0].push_back(item.old_schema_id);
    columns[1].push_back(item.new_schema_id);
    columns[2].push_back(internal::NameJson(item.old_table_name));
    columns[3].push_back(item.table_id);
    columns[4].push_back(internal::NameJson(item.old_schema_name));
    columns[5].push_back(internal::NameJson(item.new_table_name));
  }
  JsonValue out = JsonValue::array();
  for (auto& column : columns) out.push_back(std::move(column));
  return out;
}

Result<ExchangePartitionArgs> GetExchangePartitionArgs(const Job& job) {
  ASSIGN_OR_RETURN(ArgsView args, ArgsView::Of(job));
  ExchangePartitionArgs out;
  if (args.named()) {
    ObjectReader reader(args.object(), std::string(kArgsPath));
    reader.Int("partition_id", &out.partition_id)
        .Int("pt_schema_id", &out.pt_schema_id)
        .Int("pt_table_id", &out.pt_table_id)
        .Str("partition_name", &out.partition_name)
        .Bool("with_validation", &out.with_validation);
    RETURN_IF_ERROR(reader.status());
    return out;
  }
  RETURN_IF_ERROR(args.Read(0, internal::ReadInt64Element, &out.partition_id));
  RETURN_IF_ERROR(args.Read(1, internal::ReadInt64Element, &out.pt_schema_id));
  RETURN_IF_ERROR(args.Read(2, internal::ReadInt64Element, &out.pt_table_id));
  RETURN_IF_ERROR(args.Read(3, internal::ReadString, &out.partition_name));
  RETURN_IF_ERROR(args.Read(4, internal::ReadBool, &out.with_validation));
  return out;
}

JsonValue MakeExchangePartitionArgs(int64_t job_version, const ExchangePartitionArgs& args) {
  if (job_version == kJobVersion2) {
    JsonValue out = JsonValue::object();
    if (args.partition_id != 0) out["partition_id"] = args.partition_id;
    if (args.pt_schema_id != 0) out["pt_schema_id"] = args.pt_schema_id;
    if (args.pt_table_id != 0) out["pt_table_id"] = args.pt_table_id;
    if (!args.partition_name.empty()) out["partition_name"] = args.partition_name;
    if (args.with_validation) out["with_validation"] = true;
    return out;
  }
  return JsonValue::array({args.partition_id, args.pt_schema_id, args.pt_table_id,
                           args.partition_name, args.with_validation});
}

bool RecordsDroppedIds(ActionType type) { return DroppedIdsSlotOf(type).has_value(); }

Result<std::vector<int64_t>> GetFinishedDroppedIds(const Job& job) {
  const auto slot = DroppedIdsSlotOf(job.type);
  if (!slot.has_value()) {
    return InvalidArgument(std::string(ActionTypeName(job.type)) + " records no dropped ids");
  }
  if (!job.IsDoneOrSynced()) {
    return InvalidArgument("job " + std::to_string(job.id) + " is " +
                           std::string(JobStateName(job.state)) + ", not finished");
  }
  ASSIGN_OR_RETURN(ArgsView args, ArgsView::Of(job));
  std::vector<int64_t> ids;
  if (args.named()) {
    ObjectReader reader(args.object(), std::string(kArgsPath));
    reader.List(slot->v2_key, &ids, internal::ReadInt64Element);
    RETURN_IF_ERROR(reader.status());
    return ids;
  }
  RETURN_IF_ERROR(args.Read(slot->v1_index, ReadIdList, &ids));
  return ids;
}

JsonValue MakeFinishedDroppedIdsArgs(ActionType type, int64_t job_version,
                                     const std::vector<int64_t>& ids) {
  const auto slot = DroppedIdsSlotOf(type);
  if (!slot.has_value()) return JsonValue();
  if (job_version == kJobVersion2) {
    JsonValue out = JsonValue::object();
    if (!ids.empty()) out[std::string(slot->v2_key)] = internal::IntListJson(ids);
    return out;
  }
  const JsonValue id_list = internal::IntListJson(ids);
  switch (type) {
    case ActionType::kDropTable:  // [start_key, old_partition_ids, old_rule_ids]
      return JsonValue::array({nullptr, id_list, nullptr});
    case ActionType::kTruncateTable:  // [start_key (empty bytes), old_partition_ids]
      return JsonValue::array({"", id_list});
    case ActionType::kDropSchema:
    case ActionType::kTruncateTablePartition:
      return JsonValue::array({id_list});
    default:  // [old_physical_tbl_ids, old_global_indexes]
      return JsonValue::array({id_list, nullptr});
  }
}

}  // namespace sluice::model
