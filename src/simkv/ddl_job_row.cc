#include "simkv/ddl_job_row.h"

#include <vector>

#include "codec/datum.h"
#include "codec/rowcodec_v2.h"
#include "codec/tablecodec.h"
#include "simkv/tidb_tables.h"

namespace sluice::simkv {

std::string DdlJobRowKey(int64_t job_id) {
  return codec::EncodeRowKey(TableId(kDdlJobTableId), job_id);
}

Result<std::string> EncodeDdlJobRow(const model::TableInfo& job_table, const DdlJobRow& row) {
  const std::pair<const char*, codec::Datum> fields[] = {
      {"reorg", codec::Datum::Int64(row.reorg ? 1 : 0)},
      {"schema_ids", codec::Datum::BytesView(row.schema_ids)},
      {"table_ids", codec::Datum::BytesView(row.table_ids)},
      {"job_meta", codec::Datum::Bytes(model::ToJson(row.job))},
      {"type", codec::Datum::Int64(static_cast<int64_t>(row.job.type))},
      {"processing", codec::Datum::Int64(row.processing ? 1 : 0)},
  };
  std::vector<int64_t> ids;
  std::vector<codec::Datum> values;
  for (const auto& [name, value] : fields) {
    const model::ColumnInfo* col = job_table.FindColumnByName(name);
    if (col == nullptr) return InvalidArgument(std::string("tidb_ddl_job has no column ") + name);
    ids.push_back(col->id);
    values.push_back(value);
  }
  std::string out;
  RETURN_IF_ERROR(codec::EncodeRowV2(ids, values, &out));
  return out;
}

}  // namespace sluice::simkv
