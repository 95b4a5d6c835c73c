// sluice-demo: the end-to-end demo of what exists today (the playground
// replaces it once the server exists). A simulated TiKV store runs Percolator
// transactions on a TiDB table; every change leaves as cdcpb.ChangeDataEvent
// wire bytes; a CDC client side parses them, pairs commits with prewrites,
// decodes rows with the table schema and writes canal-json; a checker
// compares the result with the store's ground truth.
//   sluice-demo --output DIR [--txns N] [--seed S]
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>

#include "apps/demo/row_formatter.h"
#include "apps/demo/wire_decoder.h"
#include "apps/demo/wire_encoder.h"
#include "apps/demo/workload.h"
#include "codec/model/job.h"
#include "simkv/ground_truth.h"
#include "simkv/mvcc_store.h"
#include "simkv/tso_allocator.h"

namespace sluice::demo {
namespace {

struct Options {
  std::string output;
  int txns = 2000;
  uint64_t seed = 1;
};

struct Replica {
  std::map<std::string, nlohmann::json> rows;  // raw key -> row image
  size_t inserts = 0, updates = 0, deletes = 0;
};

Status Deliver(const RowFormatter& formatter, std::vector<CommittedChange> changes,
               std::ofstream& out, Replica* replica) {
  for (const CommittedChange& c : changes) {
    ASSIGN_OR_RETURN(nlohmann::json msg, formatter.Format(c));
    out << msg.dump() << "\n";
    const std::string& type = msg["type"].get_ref<const std::string&>();
    if (type == "DELETE") {
      replica->rows.erase(c.key);
      ++replica->deletes;
    } else {
      replica->rows[c.key] = msg["data"][0];
      ++(type == "INSERT" ? replica->inserts : replica->updates);
    }
  }
  return Status::Ok();
}

// Rows of the ground truth at `ts` that the replica lacks or has differently,
// plus rows the replica has and the truth does not.
Result<size_t> CountDifferences(const simkv::GroundTruth& truth, const RowFormatter& formatter,
                                const model::TableInfo& table, Ts ts, const Replica& replica) {
  size_t diffs = 0;
  auto state = truth.StateAt(TableId(table.id), ts);
  for (const auto& [key, value] : state) {
    ASSIGN_OR_RETURN(nlohmann::json want, formatter.RowImage(key, value));
    auto it = replica.rows.find(key);
    if (it == replica.rows.end() || it->second != want) ++diffs;
  }
  for (const auto& [key, row] : replica.rows) {
    if (!state.contains(key)) ++diffs;
  }
  return diffs;
}

Status Run(const Options& opt) {
  ASSIGN_OR_RETURN(model::Job job, model::ParseJob(kCreateOrdersJob));
  const model::TableInfo* table = job.FinishedTableInfo();
  if (table == nullptr) return Corruption("demo DDL job carries no table info");
  std::cout << "sluice-demo: the most complete end-to-end demo available today (the full\n"
            << "playground arrives with the server). Table from DDL job " << job.id << ": "
            << job.query << "\n";

  simkv::MvccStore store;
  simkv::TsoAllocator tso;
  simkv::GroundTruth truth;
  WireEncoder encoder(/*region_id=*/2, /*request_id=*/1, /*rows_per_batch=*/128);
  store.AddObserver(&truth);
  store.AddObserver(&encoder);

  OrdersWorkload workload(*table, opt.seed);
  RETURN_IF_ERROR(workload.Run(opt.txns, &store, &tso, &encoder));
  encoder.Flush();
  store.RemoveObserver(&encoder);
  store.RemoveObserver(&truth);

  std::filesystem::path dir = std::filesystem::path(opt.output) / "shop" / table->name.original;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / "data.canal-json.jsonl");
  std::ofstream(dir / "schema.json") << model::ToJson(*table) << "\n";
  RowFormatter formatter("shop", *table);
  WireDecoder decoder;
  Replica replica;
  for (const std::string& wire : encoder.messages()) {
    RETURN_IF_ERROR(decoder.Consume(wire));
    RETURN_IF_ERROR(Deliver(formatter, decoder.TakeResolved(), out, &replica));
  }
  out.close();
  RETURN_IF_ERROR(truth.ExportToFile((std::filesystem::path(opt.output) / "ground-truth.jsonl")));

  ASSIGN_OR_RETURN(size_t diffs,
                   CountDifferences(truth, formatter, *table, decoder.resolved_ts(), replica));
  std::cout << "upstream:   " << workload.committed() << " transactions committed, "
            << workload.rolled_back() << " rolled back\n"
            << "wire:       " << encoder.messages().size() << " ChangeDataEvent messages, "
            << encoder.wire_bytes() << " bytes, " << decoder.rows_seen() << " rows\n"
            << "downstream: " << replica.inserts << " inserts, " << replica.updates << " updates, "
            << replica.deletes << " deletes up to resolved ts " << decoder.resolved_ts().value()
            << "\n"
            << "output:     " << (dir / "data.canal-json.jsonl").string() << "\n"
            << "checker:    " << replica.rows.size() << " rows, " << diffs << " differences\n";
  if (diffs != 0) return Internal("replica differs from the ground truth");
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::demo

int main(int argc, char** argv) {
  sluice::demo::Options opt;
  CLI::App app("sluice-demo: TiDB rows through the TiKV CDC wire format to canal-json");
  app.add_option("--output", opt.output, "output directory")->required();
  app.add_option("--txns", opt.txns, "transactions to run")->check(CLI::Range(1, 10000000));
  app.add_option("--seed", opt.seed, "workload seed");
  CLI11_PARSE(app, argc, argv);
  sluice::Status st = sluice::demo::Run(opt);
  if (!st.ok()) {
    std::cerr << "sluice-demo: " << st.ToString() << "\n";
    return 1;
  }
  return 0;
}
