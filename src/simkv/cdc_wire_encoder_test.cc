// The hand-written wire encoding must be byte for byte what protobuf's own
// serializer writes for the same ChangeDataEvent.
#include "simkv/cdc_wire_encoder.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "simkv/cdc_errors.h"

namespace sluice::simkv::wire {
namespace {

// The message protobuf would build for one rows event.
cdcpb::ChangeDataEvent RowsMessage(uint64_t region_id, uint64_t index, uint64_t request_id,
                                   const std::vector<RowView>& rows) {
  cdcpb::ChangeDataEvent message;
  cdcpb::Event* event = message.add_events();
  event->set_region_id(region_id);
  event->set_index(index);
  event->set_request_id(request_id);
  cdcpb::Event::Entries* entries = event->mutable_entries();
  for (const RowView& row : rows) FillRow(row, entries->add_entries());
  return message;
}

std::string Encode(uint64_t region_id, uint64_t index, uint64_t request_id,
                   const std::vector<RowView>& rows) {
  std::string bytes;
  AppendRowsEvent(region_id, index, request_id, rows, &bytes);
  return bytes;
}

TEST(CdcWireEncoderTest, RowsEventMatchesProtobufForEveryFieldShape) {
  // Zero fields are left out; lengths and values cross varint byte widths.
  const std::string long_value(20000, 'v');
  const std::string mid_value(200, 'm');
  std::vector<RowView> rows(4);
  rows[0] = {cdcpb::Event::PREWRITE, Row::PUT, 5, 0, "k", long_value, mid_value};
  rows[1] = {cdcpb::Event::COMMIT, Row::PUT, 5, 1ull << 62, "k", "", ""};
  rows[2] = {cdcpb::Event::ROLLBACK, Row::UNKNOWN, 7, 0, "key2", "", ""};
  rows[3] = {cdcpb::Event::UNKNOWN, Row::UNKNOWN, 0, 0, "", "", ""};
  for (uint64_t region : {0ull, 1ull, 300ull, ~0ull}) {
    for (uint64_t request : {0ull, 127ull, 128ull}) {
      EXPECT_EQ(Encode(region, 42, request, rows),
                RowsMessage(region, 42, request, rows).SerializeAsString())
          << region << " " << request;
    }
  }
  EXPECT_EQ(Encode(1, 0, 1, {}), RowsMessage(1, 0, 1, {}).SerializeAsString());
}

TEST(CdcWireEncoderTest, RandomRowsMatchProtobufAndParseBack) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> storage;
    std::vector<RowView> rows(rng() % 70);
    storage.reserve(rows.size() * 3);
    for (RowView& row : rows) {
      row.type = static_cast<cdcpb::Event::LogType>(rng() % 6);
      row.op_type = static_cast<Row::OpType>(rng() % 3);
      row.start_ts = rng() >> (rng() % 64);
      row.commit_ts = rng() % 2 == 0 ? 0 : rng();
      row.key = storage.emplace_back(rng() % 40, 'a' + static_cast<char>(rng() % 26));
      row.value = storage.emplace_back(rng() % 3 == 0 ? 0 : rng() % 600, 'x');
      row.old_value = storage.emplace_back(rng() % 2 == 0 ? 0 : rng() % 300, 'o');
    }
    const uint64_t region = rng() % 100000;
    const std::string bytes = Encode(region, rng() % 1000, rng() % 10, rows);
    cdcpb::ChangeDataEvent parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    ASSERT_EQ(parsed.events(0).entries().entries_size(), static_cast<int>(rows.size()));
    EXPECT_EQ(parsed.events(0).region_id(), region);
    EXPECT_EQ(bytes, RowsMessage(parsed.events(0).region_id(), parsed.events(0).index(),
                                 parsed.events(0).request_id(), rows)
                         .SerializeAsString());
  }
}

TEST(CdcWireEncoderTest, EventsAndResolvedTsAppendAsTheirFields) {
  cdcpb::ChangeDataEvent message;
  *message.add_events() = ErrorEvent(3, 9, RegionNotFoundError(3));
  message.add_events()->set_region_id(4);
  std::string bytes;
  AppendEvent(message.events(0), &bytes);
  AppendEvent(message.events(1), &bytes);
  EXPECT_EQ(bytes, message.SerializeAsString());

  cdcpb::ChangeDataEvent resolved_message;
  resolved_message.mutable_resolved_ts()->set_ts(1ull << 60);
  resolved_message.mutable_resolved_ts()->add_regions(1);
  resolved_message.mutable_resolved_ts()->add_regions(100000);
  resolved_message.mutable_resolved_ts()->set_request_id(2);
  std::string resolved_bytes;
  AppendResolvedTs(resolved_message.resolved_ts(), &resolved_bytes);
  EXPECT_EQ(resolved_bytes, resolved_message.SerializeAsString());
}

}  // namespace
}  // namespace sluice::simkv::wire
