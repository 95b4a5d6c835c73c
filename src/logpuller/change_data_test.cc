#include "logpuller/change_data.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace sluice::logpuller {
namespace {

using Kind = RegionEventRef::Kind;

// Appends a protobuf tag and, for the helpers below, a value.
void PutVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}
void PutTag(uint32_t field, uint32_t wire_type, std::string* out) {
  PutVarint((uint64_t{field} << 3) | wire_type, out);
}
void PutVarintField(uint32_t field, uint64_t value, std::string* out) {
  PutTag(field, 0, out);
  PutVarint(value, out);
}
void PutBytesField(uint32_t field, const std::string& bytes, std::string* out) {
  PutTag(field, 2, out);
  PutVarint(bytes.size(), out);
  out->append(bytes);
}

Kind KindOf(const cdcpb::Event& event) {
  switch (event.event_case()) {
    case cdcpb::Event::kEntries:
      return Kind::kEntries;
    case cdcpb::Event::kAdmin:
      return Kind::kAdmin;
    case cdcpb::Event::kError:
      return Kind::kError;
    case cdcpb::Event::kResolvedTs:
      return Kind::kResolvedTs;
    case cdcpb::Event::kLongTxn:
      return Kind::kLongTxn;
    case cdcpb::Event::EVENT_NOT_SET:
      return Kind::kNone;
  }
  return Kind::kNone;
}

// A row's fields as text, for comparing decoded rows with protobuf's.
std::string Describe(const RowView& row) {
  return std::to_string(row.start_ts) + "/" + std::to_string(row.commit_ts) + "/" +
         std::to_string(row.type) + "/" + std::to_string(row.op_type) + "/" + std::string(row.key) +
         "/" + std::string(row.value) + "/" + std::string(row.old_value) + "/" +
         std::to_string(row.generation);
}
std::string Describe(const std::vector<RowView>& rows) {
  std::string out;
  for (const RowView& row : rows) out += Describe(row) + "\n";
  return out;
}

// Splits and decodes `bytes` as a region worker does. Returns false if any
// step reports Corruption; otherwise checks every field against protobuf's
// parse of the same bytes, which must then succeed.
bool DecodeAndCompare(const std::string& bytes) {
  ChangeDataFrame frame;
  RegionEventDecoder decoder;
  bool ok = SplitChangeData(bytes, &frame).ok();
  std::vector<DecodedRegionEvent> decoded(frame.events.size());
  std::vector<std::string> entries(frame.events.size());
  for (size_t i = 0; ok && i < frame.events.size(); ++i) {
    ok = decoder.Decode(frame.events[i], &decoded[i]).ok();
    // The decoder reuses its Entries message: keep each event's rows.
    if (ok && decoded[i].rows != nullptr) entries[i] = Describe(*decoded[i].rows);
  }
  cdcpb::ChangeDataEvent expected;
  bool protobuf_ok = expected.ParseFromString(bytes);
  EXPECT_EQ(ok, protobuf_ok);
  if (!ok || !protobuf_ok) return false;
  EXPECT_EQ(frame.resolved_ts.has_value(), expected.has_resolved_ts());
  if (frame.resolved_ts.has_value()) {
    EXPECT_EQ(frame.resolved_ts->SerializeAsString(), expected.resolved_ts().SerializeAsString());
  }
  EXPECT_EQ(static_cast<int>(frame.events.size()), expected.events_size());
  for (int i = 0; i < expected.events_size() && i < static_cast<int>(frame.events.size()); ++i) {
    const cdcpb::Event& want = expected.events(i);
    const RegionEventRef& ref = frame.events[i];
    SCOPED_TRACE("event " + std::to_string(i));
    EXPECT_EQ(ref.region_id, want.region_id());
    EXPECT_EQ(ref.request_id, want.request_id());
    EXPECT_EQ(decoded[i].kind, KindOf(want));
    if (want.has_entries()) {
      std::vector<RowView> want_rows;
      for (const cdcpb::Event_Row& row : want.entries().entries()) want_rows.push_back(ViewOf(row));
      EXPECT_EQ(entries[i], Describe(want_rows));
    }
    if (want.has_error()) {
      EXPECT_EQ(decoded[i].error.SerializeAsString(), want.error().SerializeAsString());
    }
    if (want.event_case() == cdcpb::Event::kResolvedTs) {
      EXPECT_EQ(decoded[i].resolved_ts, want.resolved_ts());
    }
  }
  return true;
}

cdcpb::ChangeDataEvent RandomMessage(std::mt19937_64& rng) {
  cdcpb::ChangeDataEvent msg;
  int num_events = static_cast<int>(rng() % 6);
  for (int i = 0; i < num_events; ++i) {
    cdcpb::Event* event = msg.add_events();
    event->set_region_id(rng() % 3 == 0 ? rng() : rng() % 100);
    event->set_index(rng() % 1000);
    event->set_request_id(rng() % 50);
    switch (rng() % 6) {
      case 0: {
        cdcpb::Event_Entries* entries = event->mutable_entries();
        int rows = static_cast<int>(rng() % 8);
        for (int r = 0; r < rows; ++r) {
          cdcpb::Event_Row* row = entries->add_entries();
          row->set_start_ts(rng() % 1000000);
          row->set_commit_ts(rng() % 2 ? rng() % 1000000 : 0);
          // Open enums: negative values travel as ten-byte varints.
          row->set_type(static_cast<cdcpb::Event_LogType>(static_cast<int>(rng() % 8) - 1));
          row->set_op_type(static_cast<cdcpb::Event_Row_OpType>(static_cast<int>(rng() % 4) - 1));
          row->set_key(std::string(rng() % 30, static_cast<char>('a' + rng() % 26)));
          row->set_value(std::string(rng() % 200, static_cast<char>(rng())));
          if (rng() % 3 == 0) row->set_old_value(std::string(rng() % 50, 'o'));
          if (rng() % 4 == 0) row->set_generation(rng() % 5);
        }
        break;
      }
      case 1:
        event->mutable_error()->mutable_not_leader()->set_region_id(event->region_id());
        break;
      case 2:
        event->set_resolved_ts(rng() % 2 ? rng() : 0);
        break;
      case 3:
        event->mutable_admin();
        break;
      case 4:
        event->mutable_long_txn();
        break;
      default:
        break;  // No member set.
    }
  }
  if (rng() % 2) {
    cdcpb::ResolvedTs* resolved = msg.mutable_resolved_ts();
    resolved->set_ts(rng());
    resolved->set_request_id(rng() % 50);
    for (uint64_t r = rng() % 10; r > 0; --r) resolved->add_regions(rng() % 100);
  }
  return msg;
}

TEST(ChangeDataTest, RandomMessagesDecodeAsProtobufParsesThem) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 500; ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    ASSERT_TRUE(DecodeAndCompare(RandomMessage(rng).SerializeAsString()));
  }
}

TEST(ChangeDataTest, RowsPointIntoTheMessageBytes) {
  cdcpb::ChangeDataEvent msg;
  for (int i = 0; i < 3; ++i) {
    cdcpb::Event* event = msg.add_events();
    event->set_region_id(i);
    for (int r = 0; r < 10 - i * 4; ++r) {
      cdcpb::Event_Row* row = event->mutable_entries()->add_entries();
      row->set_key("key" + std::to_string(r));
      row->set_value(std::string(100, 'v'));
    }
  }
  std::string bytes = msg.SerializeAsString();
  ChangeDataFrame frame;
  ASSERT_TRUE(SplitChangeData(bytes, &frame).ok());
  ASSERT_EQ(frame.events.size(), 3u);
  RegionEventDecoder decoder;
  DecodedRegionEvent decoded;
  auto inside = [&](std::string_view view) {
    return view.data() >= bytes.data() && view.data() + view.size() <= bytes.data() + bytes.size();
  };
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(decoder.Decode(frame.events[i], &decoded).ok());
    ASSERT_NE(decoded.rows, nullptr);
    ASSERT_EQ(decoded.rows->size(), 10 - i * 4);
    for (const RowView& row : *decoded.rows) {
      EXPECT_TRUE(inside(row.key) && inside(row.value)) << "rows must not be copied";
      EXPECT_EQ(row.value, std::string(100, 'v'));
    }
  }
}

// Field orders, unknown fields and repeated fields that protobuf's own
// serializer never writes but its parser accepts.
TEST(ChangeDataTest, UnusualLayoutsDecodeAsProtobufParsesThem) {
  cdcpb::Event_Entries rows;
  rows.add_entries()->set_key("a");
  cdcpb::Event_Entries more_rows;
  more_rows.add_entries()->set_key("b");
  cdcpb::Error error;
  error.mutable_epoch_not_match();

  std::string event;  // request id and entries before the region id, unknowns between.
  PutVarintField(7, 9, &event);
  PutBytesField(3, rows.SerializeAsString(), &event);
  PutTag(99, 5, &event);
  event.append("abcd");  // fixed32
  PutTag(98, 1, &event);
  event.append("abcdefgh");  // fixed64
  PutTag(97, 3, &event);     // a group holding a varint and a nested group
  PutVarintField(1, 5, &event);
  PutTag(2, 3, &event);
  PutTag(2, 4, &event);
  PutTag(97, 4, &event);
  PutVarintField(1, 12, &event);
  PutBytesField(1, "not a varint", &event);  // region id, wrong wire type: unknown
  std::string message;
  PutVarintField(55, 1, &message);
  PutBytesField(1, event, &message);
  EXPECT_TRUE(DecodeAndCompare(message));

  std::string twice;  // The oneof set twice: the last member wins.
  PutVarintField(1, 3, &twice);
  PutBytesField(3, rows.SerializeAsString(), &twice);
  PutBytesField(5, error.SerializeAsString(), &twice);
  message.clear();
  PutBytesField(1, twice, &message);
  EXPECT_TRUE(DecodeAndCompare(message));

  std::string merged;  // Entries twice: protobuf merges the rows.
  PutBytesField(3, rows.SerializeAsString(), &merged);
  PutBytesField(3, more_rows.SerializeAsString(), &merged);
  message.clear();
  PutBytesField(1, merged, &message);
  cdcpb::ResolvedTs first;
  first.set_ts(5);
  first.add_regions(1);
  cdcpb::ResolvedTs second;
  second.set_request_id(4);
  second.add_regions(2);
  PutBytesField(2, first.SerializeAsString(), &message);
  PutBytesField(2, second.SerializeAsString(), &message);
  ASSERT_TRUE(DecodeAndCompare(message));
  ChangeDataFrame frame;
  ASSERT_TRUE(SplitChangeData(message, &frame).ok());
  EXPECT_TRUE(frame.events[0].reparse);
  EXPECT_EQ(frame.resolved_ts->regions_size(), 2);
}

// `levels` nested unknown groups (field 50).
std::string NestedGroups(int levels) {
  std::string out;
  for (int i = 0; i < levels; ++i) PutTag(50, 3, &out);
  for (int i = 0; i < levels; ++i) PutTag(50, 4, &out);
  return out;
}

// Protobuf allows 100 levels of messages and groups below the top-level
// message; the decoder counts the levels of the messages around the groups.
TEST(ChangeDataTest, DeepGroupsAreRejectedWhereProtobufRejectsThem) {
  int accepted = 0;
  int rejected = 0;
  for (int levels = 94; levels <= 101; ++levels) {
    SCOPED_TRACE("levels " + std::to_string(levels));
    std::string groups = NestedGroups(levels);
    std::string row = groups;  // In a row: level 3.
    PutVarintField(1, 7, &row);
    std::string entries;
    PutBytesField(1, row, &entries);
    std::string in_row;
    PutBytesField(3, entries, &in_row);
    std::string error = groups;  // In an error: level 2.
    std::string in_error;
    PutBytesField(5, error, &in_error);
    std::string admin = groups;  // In an admin event: level 2.
    std::string in_admin;
    PutBytesField(4, admin, &in_admin);
    for (const std::string& event : {in_row, in_error, in_admin, groups}) {
      std::string message;
      PutBytesField(1, event, &message);
      (DecodeAndCompare(message) ? accepted : rejected)++;
    }
    std::string top = groups;  // At the top and in the resolved ts.
    PutBytesField(2, groups, &top);
    (DecodeAndCompare(top) ? accepted : rejected)++;
    if (HasFailure()) return;
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

TEST(ChangeDataTest, MalformedBytesAreCorruptionAsForProtobuf) {
  std::mt19937_64 rng(11);
  int rejected = 0;
  int accepted = 0;
  for (int i = 0; i < 300; ++i) {
    std::string bytes = RandomMessage(rng).SerializeAsString();
    if (bytes.empty()) continue;
    SCOPED_TRACE("message " + std::to_string(i));
    // A random truncation and a few random byte flips: either both accept
    // with the same result, or both reject.
    std::string cut = bytes.substr(0, rng() % bytes.size());
    (DecodeAndCompare(cut) ? accepted : rejected)++;
    for (int flip = 0; flip < 4; ++flip) {
      std::string bad = bytes;
      bad[rng() % bad.size()] = static_cast<char>(rng());
      (DecodeAndCompare(bad) ? accepted : rejected)++;
    }
    if (HasFailure()) return;
  }
  // Both outcomes occur, so the comparison covered both.
  EXPECT_GT(rejected, 100);
  EXPECT_GT(accepted, 100);

  ChangeDataFrame frame;
  const std::string bad_inputs[] = {
      std::string("\x0a\x05\x08", 3),                                       // truncated event
      std::string("\x0c", 1),                                               // end group
      std::string("\x00", 1),                                               // field 0
      std::string("\x0f", 1),                                               // wire type 7
      std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12),  // 11-byte varint
      std::string("\x88\x80\x80\x80\x80\x00\x00", 7),                       // six-byte tag
      std::string("\x12\x80\x80\x80\x80\x80\x00", 7),                       // six-byte size
  };
  for (const std::string& bad : bad_inputs) {
    Status status = SplitChangeData(bad, &frame);
    EXPECT_EQ(status.code(), Code::kCorruption) << status.ToString();
    EXPECT_FALSE(DecodeAndCompare(bad));
  }
  // Accepted by protobuf: a ten-byte varint in a row, and a five-byte tag
  // whose bits beyond 32 are dropped (field 1, varint) in an event.
  EXPECT_TRUE(DecodeAndCompare(
      std::string("\x0a\x0f\x1a\x0d\x0a\x0b\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 17)));
  EXPECT_TRUE(DecodeAndCompare(std::string("\x0a\x06\x88\x80\x80\x80\x10\x05", 8)));
}

TEST(ChangeDataTest, AnEventWithABadRowYieldsNoRows) {
  cdcpb::ChangeDataEvent msg;
  cdcpb::Event* event = msg.add_events();
  event->set_region_id(1);
  event->mutable_entries()->add_entries()->set_key("good");
  const std::string good_bytes = msg.SerializeAsString();
  std::string entries = msg.events(0).entries().SerializeAsString();
  PutBytesField(1, std::string("\x08", 1), &entries);  // A row whose only field is cut short.
  std::string body;
  PutVarintField(1, 1, &body);
  PutBytesField(3, entries, &body);
  std::string message;
  PutBytesField(1, body, &message);
  ChangeDataFrame good;
  ChangeDataFrame bad;
  ASSERT_TRUE(SplitChangeData(good_bytes, &good).ok());
  ASSERT_TRUE(SplitChangeData(message, &bad).ok());
  ASSERT_EQ(bad.events.size(), 1u);
  RegionEventDecoder decoder;
  DecodedRegionEvent decoded;
  // A good event first, so that the failed decode has rows to forget.
  ASSERT_TRUE(decoder.Decode(good.events[0], &decoded).ok());
  ASSERT_NE(decoded.rows, nullptr);
  Status status = decoder.Decode(bad.events[0], &decoded);
  EXPECT_EQ(status.code(), Code::kCorruption) << status.ToString();
  EXPECT_EQ(decoded.rows, nullptr);
  EXPECT_EQ(decoded.kind, RegionEventRef::Kind::kNone);
}

}  // namespace
}  // namespace sluice::logpuller
