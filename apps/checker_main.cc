// sluice-checker: compares a downstream with simkv's ground truth at a ts.
//
//   sluice-checker --pd 127.0.0.1:2379 --truth truth.txt --ts 4500000000000000
//       (--mysql mysql://root@127.0.0.1:3306/ | --storage /data/out --protocol csv)
//
// The schema at ts is read from the upstream (meta keys, as the schema store
// does); the rows from the ground-truth export (simkv --ground-truth, or GET
// /ground-truth of its control API). Prints every difference and a summary.
// Exit code: 0 no difference, 1 differences, 2 error.
#include <CLI/CLI.hpp>
#include <iostream>

#include "checker/expected.h"
#include "checker/mysql_reader.h"
#include "checker/storage_state.h"
#include "kvclient/meta_reader.h"
#include "kvclient/snapshot_reader.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "sink/sink_uri.h"
#include "sink/storage/storage_options.h"

namespace sluice {
namespace {

struct Flags {
  std::string pd;
  std::string truth;
  uint64_t ts = 0;
  std::string mysql;
  std::vector<std::string> schemas;  // Empty = every user schema.
  std::string storage;
  std::string protocol = "csv";
};

Result<checker::DatabaseState> Actual(const Flags& f, const checker::DatabaseState& expected) {
  if (!f.mysql.empty()) return checker::ReadMysqlState(f.mysql, expected, f.schemas);
  ASSIGN_OR_RETURN(sink::SinkUri uri,
                   sink::SinkUri::Parse("file://" + f.storage + "?protocol=" + f.protocol));
  ASSIGN_OR_RETURN(auto options, sink::storage::StorageSinkOptions::FromUri(uri));
  return checker::ReadStorageState(
      f.storage, sink::storage::ReaderOptions::FromSinkOptions(options), expected);
}

Result<bool> Run(const Flags& f) {
  simkv::GroundTruth truth;
  RETURN_IF_ERROR(truth.ImportFromFile(f.truth));
  pd::PdClientOptions pd_options;
  pd_options.endpoints = {f.pd};
  ASSIGN_OR_RETURN(auto pd, pd::PdClient::Connect(pd_options));
  pd::RegionCache cache(pd.get());
  kvclient::SnapshotReader reader(pd.get(), &cache, kvclient::SnapshotReaderOptions{});
  kvclient::KvMetaReader meta(pd.get(), &reader);
  ASSIGN_OR_RETURN(kvclient::MetaSnapshot schema, meta.Read(Ts(f.ts)));
  ASSIGN_OR_RETURN(checker::DatabaseState expected,
                   checker::ExpectedState(truth, schema, Ts(f.ts)));
  ASSIGN_OR_RETURN(checker::DatabaseState actual, Actual(f, expected));
  checker::DiffReport report = checker::Compare(expected, actual);
  report.Print(std::cout);
  return report.ok();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  sluice::Flags f;
  CLI::App app{"sluice-checker: compare a downstream with simkv's ground truth at a ts"};
  app.add_option("--pd", f.pd, "PD address of the upstream (host:port)")->required();
  app.add_option("--truth", f.truth, "ground-truth export of simkv")->required();
  app.add_option("--ts", f.ts, "the ts to compare at (e.g. the changefeed checkpoint)")->required();
  auto* mysql = app.add_option("--mysql", f.mysql, "downstream MySQL URI (mysql://...)");
  auto* storage = app.add_option("--storage", f.storage, "storage-sink directory");
  app.add_option("--protocol", f.protocol, "storage protocol: csv or canal-json");
  app.add_option("--schemas", f.schemas, "only these downstream schemas (comma-separated)")
      ->delimiter(',');
  mysql->excludes(storage);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (f.mysql.empty() && f.storage.empty()) {
    std::cerr << "sluice-checker: give --mysql or --storage\n";
    return 2;
  }
  sluice::Result<bool> same = sluice::Run(f);
  if (!same.ok()) {
    std::cerr << "sluice-checker: " << same.status().ToString() << "\n";
    return 2;
  }
  return *same ? 0 : 1;
}
