// Unit tests of the CDC building blocks: version and feature parsing, the
// stream sink's budget and batching, service safepoints, and scan events.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "simkv/cdc_request_validator.h"
#include "simkv/cdc_rows.h"
#include "simkv/cdc_stream_sink.h"
#include "simkv/service_safepoints.h"

namespace sluice::simkv {
namespace {

TEST(ClientVersionTest, ParsesSemverAndOrdersPrereleasesFirst) {
  ClientVersion v = ClientVersion::Parse("8.5.0");
  ASSERT_TRUE(v.parsed);
  EXPECT_TRUE(v.AtLeast(5, 3, 0));
  EXPECT_TRUE(ClientVersion::Parse("4.0.8").AtLeast(4, 0, 8));
  EXPECT_FALSE(ClientVersion::Parse("4.0.8-rc.1").AtLeast(4, 0, 8));
  EXPECT_TRUE(ClientVersion::Parse("4.0.9-rc.1+build.5").AtLeast(4, 0, 8));
  for (const char* bad : {"", "v8.5.0", "8.5", "08.5.0", "8.5.0-", "8.5.0+", "-1.0.0", "8.5.0 ",
                          "99999999999.0.0", "8.5.0-a..b"}) {
    EXPECT_FALSE(ClientVersion::Parse(bad).parsed) << bad;
  }
}

TEST(FeaturesTest, KnownFeaturesOnly) {
  Result<StreamFeatures> ok = ParseFeatures(" stream-multiplexing ");
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->multiplexing);
  Result<StreamFeatures> bad = ParseFeatures("stream-multiplexing,a, b");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "a,b");
  EXPECT_FALSE(ParseFeatures("").ok());  // TiKV reads it as one unknown, empty name.
}

TEST(ValidateRegisterTest, OrderOfStreamLevelChecks) {
  cdcpb::ChangeDataRequest request;
  request.mutable_header()->set_cluster_id(9);
  RequestContext context{1, ClientVersion::Parse("4.0.7"), BusyState{"busy", 10}};
  EXPECT_TRUE(ValidateRegister(request, context)->has_compatibility());
  context.version = ClientVersion::Parse("6.0.0");
  EXPECT_TRUE(ValidateRegister(request, context)->has_cluster_id_mismatch());
  request.mutable_header()->set_cluster_id(1);
  request.set_kv_api(cdcpb::ChangeDataRequest::TxnKV);
  EXPECT_EQ(ValidateRegister(request, context)->compatibility().required_version(), "6.2.0");
  request.set_kv_api(cdcpb::ChangeDataRequest::TiDB);
  EXPECT_TRUE(ValidateRegister(request, context)->has_server_is_busy());
  context.busy.reset();
  EXPECT_FALSE(ValidateRegister(request, context).has_value());
}

Row TestRow(const std::string& key, size_t value_size) {
  Row row;
  row.set_type(cdcpb::Event::PREWRITE);
  row.set_key(key);
  row.set_value(std::string(value_size, 'v'));
  return row;
}

TEST(StreamSinkTest, RowsOfOneBatchShareAnEventAndResolvedTsTravelsAlone) {
  StreamSink sink;
  ASSERT_EQ(sink.PushRow(1, 7, 10, TestRow("a", 1), false), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushRow(1, 7, 10, TestRow("b", 1), false), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushRow(1, 7, 11, TestRow("c", 1), false), StreamSink::PushResult::kOk);
  cdcpb::ResolvedTs resolved;
  resolved.set_ts(5);
  resolved.add_regions(1);
  ASSERT_EQ(sink.PushResolvedTs(resolved), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushRow(2, 7, 12, TestRow("d", 1), false), StreamSink::PushResult::kOk);
  CancelToken never;
  auto first = sink.NextMessage(never);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->events_size(), 2);
  EXPECT_EQ(first->events(0).entries().entries_size(), 2);
  EXPECT_EQ(first->events(0).index(), 10u);
  EXPECT_EQ(first->events(1).index(), 11u);
  EXPECT_FALSE(first->has_resolved_ts());
  auto second = sink.NextMessage(never);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->events_size(), 0);
  EXPECT_EQ(second->resolved_ts().ts(), 5u);
  sink.Close();
  EXPECT_EQ(sink.NextMessage(never)->events(0).region_id(), 2u);  // Drained after Close.
  EXPECT_FALSE(sink.NextMessage(never).has_value());
  EXPECT_EQ(sink.PushRow(1, 7, 13, TestRow("e", 1), true), StreamSink::PushResult::kClosed);
}

cdcpb::Event ScanEvent(uint64_t request_id, const std::string& key) {
  cdcpb::Event event;
  event.set_region_id(1);
  event.set_request_id(request_id);
  *event.mutable_entries()->add_entries() = TestRow(key, 1);
  return event;
}

TEST(StreamSinkTest, ResolvedTsOvertakesOnlyOtherRequestsScanEvents) {
  StreamSink sink;
  auto resolved = [](uint64_t request_id, uint64_t ts) {
    cdcpb::ResolvedTs r;
    r.set_ts(ts);
    r.set_request_id(request_id);
    r.add_regions(1);
    return r;
  };
  ASSERT_EQ(sink.PushRow(1, 7, 10, TestRow("live", 1), false), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushScanEvent(ScanEvent(8, "s8a")), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushScanEvent(ScanEvent(8, "s8b")), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushScanEvent(ScanEvent(7, "init7")), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushScanEvent(ScanEvent(8, "s8c")), StreamSink::PushResult::kOk);
  // Request 9's batch goes back to the live row; request 7's stops at its
  // own scan event; a batch without a request id (V1) overtakes nothing.
  ASSERT_EQ(sink.PushResolvedTs(resolved(9, 5)), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushResolvedTs(resolved(7, 6)), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushResolvedTs(resolved(0, 7)), StreamSink::PushResult::kOk);
  std::vector<std::string> order;
  while (sink.queued_bytes() > 0) {
    auto message = sink.NextMessage(CancelToken());
    ASSERT_TRUE(message.has_value());
    if (message->has_resolved_ts()) {
      order.push_back("rts" + std::to_string(message->resolved_ts().ts()));
      continue;
    }
    for (const cdcpb::Event& e : message->events()) order.push_back(e.entries().entries(0).key());
  }
  EXPECT_EQ(order, (std::vector<std::string>{"live", "rts5", "s8a", "s8b", "init7", "rts6", "s8c",
                                             "rts7"}));
}

TEST(StreamSinkTest, ResolvedTsNeverOvertakesAnErrorAndFitsBesideAFullScan) {
  StreamSinkOptions options;
  options.max_bytes = 1000;
  StreamSink sink(options);
  ASSERT_EQ(sink.PushScanEvent(ScanEvent(8, "s8a")), StreamSink::PushResult::kOk);
  cdcpb::Event error;
  error.set_region_id(2);
  error.set_request_id(9);
  error.mutable_error()->mutable_congested()->set_region_id(2);
  ASSERT_EQ(sink.PushEvent(error, true), StreamSink::PushResult::kOk);
  cdcpb::Event big = ScanEvent(8, "s8b");
  big.mutable_entries()->mutable_entries(0)->set_value(std::string(2000, 'v'));
  ASSERT_EQ(sink.PushScanEvent(big), StreamSink::PushResult::kOk);
  // The scan is over budget: live rows do not fit, a resolved ts does.
  EXPECT_EQ(sink.PushRow(3, 7, 1, TestRow("live", 1), false), StreamSink::PushResult::kFull);
  cdcpb::ResolvedTs resolved;
  resolved.set_ts(5);
  resolved.set_request_id(7);
  resolved.add_regions(3);
  ASSERT_EQ(sink.PushResolvedTs(resolved), StreamSink::PushResult::kOk);
  std::vector<std::string> order;
  while (sink.queued_bytes() > 0) {
    auto message = sink.NextMessage(CancelToken());
    ASSERT_TRUE(message.has_value());
    if (message->has_resolved_ts()) order.push_back("rts");
    for (const cdcpb::Event& e : message->events()) {
      order.push_back(e.has_error() ? "error" : e.entries().entries(0).key());
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"s8a", "error", "rts", "s8b"}));
}

TEST(StreamSinkTest, BudgetRefusesUnforcedPushesOnly) {
  StreamSinkOptions options;
  options.max_bytes = 1000;
  StreamSink sink(options);
  EXPECT_EQ(sink.PushRow(1, 1, 1, TestRow("a", 900), false), StreamSink::PushResult::kOk);
  EXPECT_EQ(sink.PushRow(1, 1, 2, TestRow("b", 200), false), StreamSink::PushResult::kFull);
  cdcpb::Event error;
  error.mutable_error()->mutable_congested()->set_region_id(1);
  EXPECT_EQ(sink.PushEvent(error, true), StreamSink::PushResult::kOk);
  CancelSource cancel;
  cancel.Cancel();
  EXPECT_FALSE(sink.WaitForSpace(cancel.token()));
  ASSERT_TRUE(sink.NextMessage(CancelToken()).has_value());
  EXPECT_TRUE(sink.WaitForSpace(CancelToken()));
}

TEST(StreamSinkTest, ReusedMessageCarriesOnlyTheNextEvents) {
  StreamSinkOptions options;
  options.max_events_per_message = 2;
  StreamSink sink(options);
  std::vector<RowView> rows(2);
  rows[0].type = cdcpb::Event::PREWRITE;
  rows[0].key = "k1";
  rows[0].value = "a long value that fills the buffer";
  rows[0].old_value = "old";
  rows[1].type = cdcpb::Event::COMMIT;
  rows[1].key = "k2";
  rows[1].commit_ts = 9;
  ASSERT_EQ(sink.PushRow(1, 7, 10, TestRow("b", 1), false), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushRows(1, 7, 11, rows, false), StreamSink::PushResult::kOk);
  ASSERT_EQ(sink.PushRow(1, 7, 12, TestRow("c", 2), false), StreamSink::PushResult::kOk);
  std::string bytes;
  cdcpb::ChangeDataEvent message;
  bool more = false;
  ASSERT_TRUE(sink.NextMessage(CancelToken(), &bytes, &more));
  EXPECT_TRUE(more);
  ASSERT_TRUE(message.ParseFromString(bytes));
  ASSERT_EQ(message.events_size(), 2);
  EXPECT_EQ(message.events(0).entries().entries(0).key(), "b");
  const cdcpb::Event::Entries& first = message.events(1).entries();
  ASSERT_EQ(first.entries_size(), 2);
  EXPECT_EQ(first.entries(0).value(), "a long value that fills the buffer");
  EXPECT_EQ(first.entries(0).old_value(), "old");
  EXPECT_EQ(first.entries(1).key(), "k2");
  EXPECT_EQ(first.entries(1).commit_ts(), 9u);
  EXPECT_EQ(first.entries(1).value(), "");
  // The next message reuses the buffer of this one: nothing of it may remain.
  ASSERT_TRUE(sink.NextMessage(CancelToken(), &bytes, &more));
  EXPECT_FALSE(more);
  ASSERT_TRUE(message.ParseFromString(bytes));
  ASSERT_EQ(message.events_size(), 1);
  EXPECT_EQ(message.events(0).index(), 12u);
  ASSERT_EQ(message.events(0).entries().entries_size(), 1);
  EXPECT_EQ(message.events(0).entries().entries(0).key(), "c");
  EXPECT_EQ(message.events(0).entries().entries(0).value(), "vv");
  EXPECT_EQ(message.events(0).entries().entries(0).old_value(), "");
}

TEST(StreamSinkTest, PushRowsStopsAtTheFirstRowThatDoesNotFit) {
  StreamSinkOptions options;
  options.max_bytes = 200;
  StreamSink sink(options);
  std::string big(100, 'v');
  std::vector<RowView> rows(3);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].type = cdcpb::Event::PREWRITE;
    rows[i].key = "k";
    rows[i].value = big;
  }
  EXPECT_EQ(sink.PushRows(1, 1, 1, rows, false), StreamSink::PushResult::kFull);
  auto message = sink.NextMessage(CancelToken());
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->events(0).entries().entries_size(), 1);
}

TEST(ServiceSafePointsTest, MinimumIncludesTheGcWorker) {
  ServiceSafePoints points;
  auto result = points.Update("ticdc", Ts(100), 10, 1000, Ts(50));
  EXPECT_TRUE(result.updated);
  EXPECT_EQ(result.min.service_id, "gc_worker");
  EXPECT_EQ(result.min.safe_point, Ts(50));
  EXPECT_EQ(TtlLeft(result.min, 1000), ServiceSafePoint::kNeverExpires - 1000);
  result = points.Update("br", Ts(40), 10, 1000, Ts(50));
  EXPECT_FALSE(result.updated);  // Below the GC safe point.
  EXPECT_EQ(points.MinService(1000), Ts(100));
  EXPECT_EQ(points.Min(1000, Ts(200)).service_id, "ticdc");
  EXPECT_EQ(TtlLeft(points.Min(1005, Ts(200)), 1005), 5);
  EXPECT_FALSE(points.MinService(1011).has_value());  // Expired.
  points.Update("ticdc", Ts(100), std::numeric_limits<int64_t>::max(), 1000, Ts(0));
  EXPECT_EQ(points.Live(std::numeric_limits<int64_t>::max() - 1).size(), 1u);  // Saturated.
  points.Update("ticdc", Ts(std::numeric_limits<uint64_t>::max()), 10, 1000, Ts(0));
  EXPECT_TRUE(points.Live(1000).empty());
}

TEST(ScanRowsTest, ScannedRowsBecomeWireRowsAndBatchesAreCut) {
  ScannedRow lock;
  lock.is_lock = true;
  lock.key = "b";
  lock.start_ts = Ts(5);
  lock.lock_op = MutationOp::kDelete;
  lock.old_value = "y";
  ScannedRow write;
  write.key = "b";
  write.start_ts = Ts(3);
  write.commit_ts = Ts(4);
  write.value = "y";
  write.old_value = "x";
  std::vector<RowBatch> batches;
  AppendScanRow(ViewOfScanned(lock, /*with_old_value=*/true), 9, 3, &batches);
  AppendScanRow(ViewOfScanned(write, /*with_old_value=*/false), 9, 3, &batches);
  ASSERT_EQ(batches.size(), 1u);

  StreamSink sink;
  ASSERT_EQ(sink.PushScanRows(std::move(batches[0])), StreamSink::PushResult::kOk);
  std::optional<cdcpb::ChangeDataEvent> message = sink.NextMessage(CancelToken());
  ASSERT_TRUE(message.has_value());
  ASSERT_EQ(message->events_size(), 1);
  const cdcpb::Event& event = message->events(0);
  EXPECT_EQ(event.region_id(), 9u);
  EXPECT_EQ(event.request_id(), 3u);
  const auto& rows = event.entries().entries();
  ASSERT_EQ(rows.size(), 2);
  EXPECT_EQ(rows[0].type(), cdcpb::Event::PREWRITE);
  EXPECT_EQ(rows[0].op_type(), Row::DELETE);
  EXPECT_EQ(rows[0].start_ts(), 5u);
  EXPECT_EQ(rows[0].old_value(), "y");
  EXPECT_EQ(rows[1].type(), cdcpb::Event::COMMITTED);
  EXPECT_EQ(rows[1].op_type(), Row::PUT);
  EXPECT_EQ(rows[1].commit_ts(), 4u);
  EXPECT_EQ(rows[1].value(), "y");
  EXPECT_TRUE(rows[1].old_value().empty());  // Not asked for.

  std::vector<RowBatch> big;
  const std::string value(10000, 'v');
  const std::string keys = "abcdefghij";
  for (int i = 0; i < 10; ++i) {
    write.key = std::string_view(keys).substr(i, 1);
    write.value = value;
    AppendScanRow(ViewOfScanned(write, true), 1, 1, &big);
  }
  ASSERT_EQ(big.size(), 4u);  // 32 KiB of rows per event: 3 + 3 + 3 + 1.
  EXPECT_EQ(big[0].rows.size(), 3u);
  EXPECT_EQ(big[3].rows.size(), 1u);
  std::vector<RowView> views;
  big[3].Views(&views);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].key, "j");
  EXPECT_EQ(views[0].value, value);
  EXPECT_EQ(views[0].old_value, "x");
}

}  // namespace
}  // namespace sluice::simkv
