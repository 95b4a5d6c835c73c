// Parsing beyond the golden bytes: malformed, truncated, over-nested and
// randomly mutated input is rejected or parsed without crashing.

#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "cdcpb.pb.h"
#include "etcd/rpc.pb.h"
#include "golden_samples.h"
#include "golden_util.h"
#include "pdpb.pb.h"

namespace sluice::golden {
namespace {

using google::protobuf::Message;

TEST(ParseTest, RejectsMalformedInput) {
  const std::string cases[] = {
      "\x08"s,                                         // tag without value
      "\x08\xFF"s,                                     // truncated varint
      Cat({"\x08", std::string(10, '\xFF'), "\x01"}),  // varint longer than ten bytes
      "\x1A\x0A\x01\x02"s,                             // length beyond the end of the input
      "\x1A\xFF\xFF\xFF\xFF\x0F"s,                     // length near 4 GiB
      "\x00"s,                                         // field number 0
      "\x0F\x00"s,                                     // wire type 7 does not exist
      "\x0C"s,                                         // end-group without start-group
      "\x0B\x08\x01"s,                                 // start-group never closed
  };
  for (const std::string& bytes : cases) {
    SCOPED_TRACE(Hex(bytes));
    EXPECT_FALSE(Parses<cdcpb::Event>(bytes));
    EXPECT_FALSE(Parses<cdcpb::ChangeDataEvent>(bytes));
    EXPECT_FALSE(Parses<pdpb::TsoResponse>(bytes));
    EXPECT_FALSE(Parses<etcdserverpb::WatchResponse>(bytes));
  }
}

TEST(ParseTest, RejectsEveryTruncationInsideAField) {
  cdcpb::ChangeDataEvent m;
  auto* e = m.add_events();
  e->set_region_id(1001);
  *e->mutable_entries()->add_entries() = MakePrewrite();
  const std::string full = m.SerializeAsString();
  ASSERT_TRUE(Parses<cdcpb::ChangeDataEvent>(full));
  // The message is a single field 1, so every proper prefix cuts it.
  for (size_t n = 1; n < full.size(); ++n) {
    EXPECT_FALSE(Parses<cdcpb::ChangeDataEvent>(std::string_view(full).substr(0, n))) << n;
  }
}

TEST(ParseTest, RejectsNestingBeyondTheRecursionLimit) {
  // TxnRequest -> RequestOp -> TxnRequest -> ... far deeper than protobuf's
  // default limit of 100.
  std::string bytes;
  for (int depth = 0; depth < 300; ++depth) bytes = L(2, L(4, bytes));
  EXPECT_FALSE(Parses<etcdserverpb::TxnRequest>(bytes));
}

TEST(ParseTest, MutatedGoldenBytesNeverCrashAndReparseStably) {
  std::mt19937_64 rng(20260820);
  int accepted = 0;
  int rejected = 0;
  for (const Golden& g : AllGoldens()) {
    SCOPED_TRACE(g.name);
    if (g.expected.empty()) continue;
    for (int i = 0; i < 200; ++i) {
      std::string bytes = g.expected;
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
      }
      if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
      std::unique_ptr<Message> m(g.message->New());
      if (!m->ParseFromString(bytes)) {
        ++rejected;
        continue;
      }
      ++accepted;
      std::unique_ptr<Message> again(g.message->New());
      ASSERT_TRUE(again->ParseFromString(m->SerializeAsString())) << Hex(bytes);
      EXPECT_TRUE(SameMessage(*m, *again)) << Hex(bytes);
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace sluice::golden
