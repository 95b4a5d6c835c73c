#include "apps/demo/workload.h"

#include <algorithm>
#include <string>

#include "codec/datum.h"
#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"
#include "codec/rowcodec_v2.h"
#include "codec/tablecodec.h"

namespace sluice::demo {

const char* const kCreateOrdersJob = R"json({
 "id": 110, "type": 3, "schema_id": 2, "table_id": 108, "schema_name": "shop",
 "table_name": "orders", "state": 6, "schema_state": 5, "version": 1,
 "query": "CREATE TABLE orders (id BIGINT PRIMARY KEY, customer VARCHAR(64), amount DECIMAL(12,2), status ENUM('new','paid','shipped'), created DATETIME(3), note JSON)",
 "binlog": {"SchemaVersion": 54, "FinishedTS": 0, "TableInfo": {
  "id": 108, "name": {"O": "orders", "L": "orders"}, "charset": "utf8mb4",
  "collate": "utf8mb4_bin", "pk_is_handle": true, "state": 5, "max_col_id": 6,
  "cols": [
   {"id": 1, "name": {"O": "id", "L": "id"}, "offset": 0, "state": 5,
    "type": {"Tp": 8, "Flag": 4099, "Flen": 20, "Decimal": 0, "Charset": "binary", "Collate": "binary"}},
   {"id": 2, "name": {"O": "customer", "L": "customer"}, "offset": 1, "state": 5,
    "type": {"Tp": 15, "Flag": 0, "Flen": 64, "Decimal": 0, "Charset": "utf8mb4", "Collate": "utf8mb4_bin"}},
   {"id": 3, "name": {"O": "amount", "L": "amount"}, "offset": 2, "state": 5,
    "type": {"Tp": 246, "Flag": 0, "Flen": 12, "Decimal": 2, "Charset": "binary", "Collate": "binary"}},
   {"id": 4, "name": {"O": "status", "L": "status"}, "offset": 3, "state": 5,
    "type": {"Tp": 247, "Flag": 0, "Flen": 7, "Decimal": 0, "Charset": "utf8mb4", "Collate": "utf8mb4_bin",
             "Elems": ["new", "paid", "shipped"]}},
   {"id": 5, "name": {"O": "created", "L": "created"}, "offset": 4, "state": 5,
    "type": {"Tp": 12, "Flag": 0, "Flen": 23, "Decimal": 3, "Charset": "binary", "Collate": "binary"}},
   {"id": 6, "name": {"O": "note", "L": "note"}, "offset": 5, "state": 5,
    "type": {"Tp": 245, "Flag": 128, "Flen": 4294967295, "Decimal": 0, "Charset": "binary", "Collate": "binary"}}
  ]}}
}
)json";

Result<std::string> OrdersWorkload::NewRowValue() {
  namespace t = codec::mysql_type;
  uint64_t r = rng_();
  std::string customer = "customer-" + std::to_string(r % 1000);
  std::string amount = std::to_string(r % 100000) + "." + std::to_string(10 + r % 90);
  codec::MysqlTime created{2026,
                           1 + static_cast<int>(r % 12),
                           1 + static_cast<int>(r % 28),
                           static_cast<int>(r % 24),
                           static_cast<int>(r % 60),
                           static_cast<int>(r % 60),
                           static_cast<int>(r % 1000) * 1000};
  std::vector<int64_t> ids = {2, 3, 4, 5, 6};
  std::vector<codec::Datum> values = {
      codec::Datum::BytesView(customer), codec::Datum::Decimal(amount, 12, 2),
      codec::Datum::Enum(1 + r % 3),
      codec::Datum::Time(codec::ToPackedUint(created), t::kDatetime, 3), codec::Datum::Null()};
  std::string json_bin;
  if (r % 3 != 0) {
    ASSIGN_OR_RETURN(json_bin, codec::JsonTextToBinary(
                                   "{\"gift\": " + std::string(r % 2 ? "true" : "false") +
                                   ", \"items\": [" + std::to_string(r % 7) + ", \"box\"]}"));
    values[4] = codec::Datum::JsonView(json_bin);
  }
  std::string out;
  RETURN_IF_ERROR(codec::EncodeRowV2(ids, values, &out));
  return out;
}

std::vector<simkv::Mutation> OrdersWorkload::NextMutations() {
  std::vector<simkv::Mutation> muts;
  int rows = 1 + static_cast<int>(rng_() % 4);
  std::vector<int64_t> used;
  for (int i = 0; i < rows; ++i) {
    uint64_t dice = rng_() % 100;
    int64_t id;
    simkv::MutationOp op = simkv::MutationOp::kPut;
    if (live_ids_.empty() || dice < 50) {
      id = next_id_++;
    } else {
      id = live_ids_[rng_() % live_ids_.size()];
      if (dice >= 85) op = simkv::MutationOp::kDelete;
    }
    if (std::find(used.begin(), used.end(), id) != used.end()) continue;
    used.push_back(id);
    simkv::Mutation m;
    m.op = op;
    m.key = codec::EncodeRowKey(TableId(table_.id), id);
    muts.push_back(std::move(m));
  }
  return muts;
}

Status OrdersWorkload::RunOne(simkv::MvccStore* store, simkv::TsoAllocator* tso) {
  std::vector<simkv::Mutation> muts = NextMutations();
  for (simkv::Mutation& m : muts) {
    if (m.op == simkv::MutationOp::kPut) {
      ASSIGN_OR_RETURN(m.value, NewRowValue());
    }
  }
  ASSIGN_OR_RETURN(Ts start_ts, tso->Allocate());
  const std::string primary = muts.front().key;
  RETURN_IF_ERROR(store->Prewrite(muts, primary, start_ts, 3000).status());
  std::vector<std::string> keys;
  for (const simkv::Mutation& m : muts) keys.push_back(m.key);
  if (rng_() % 20 == 0) {
    ++rolled_back_;
    return store->Rollback(keys, start_ts).status();
  }
  ASSIGN_OR_RETURN(Ts commit_ts, tso->Allocate());
  RETURN_IF_ERROR(store->Commit(keys, start_ts, commit_ts).status());
  ++committed_;
  for (const simkv::Mutation& m : muts) {
    auto decoded = codec::DecodeRowKey(m.key);
    if (!decoded.ok()) return decoded.status();
    int64_t id = decoded->handle.int_value;
    auto it = std::find(live_ids_.begin(), live_ids_.end(), id);
    if (m.op == simkv::MutationOp::kDelete && it != live_ids_.end()) {
      live_ids_.erase(it);
    } else if (m.op == simkv::MutationOp::kPut && it == live_ids_.end()) {
      live_ids_.push_back(id);
    }
  }
  return Status::Ok();
}

Status OrdersWorkload::Run(int txns, simkv::MvccStore* store, simkv::TsoAllocator* tso) {
  for (int i = 1; i <= txns; ++i) RETURN_IF_ERROR(RunOne(store, tso));
  return Status::Ok();
}

}  // namespace sluice::demo
