#include "sink/blackhole/blackhole_sink.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "sink/codec/test_tables.h"

namespace sluice::sink {
namespace {

using namespace sluice::sink::testing;  // NOLINT

TEST(BlackholeSinkTest, CountsAndFlushesAtOnce) {
  BlackholeSink sink;
  EXPECT_EQ(sink.scheme(), "blackhole");
  auto schema = KvSchema("db", "kv", 5);
  auto e = Dml(schema, Ts(10), {Insert(KvRow(1, "abc")), Delete(KvRow(2, "de"))});
  int flushed = 0;
  e->AddPostFlush([&] { ++flushed; });
  const size_t bytes = e->ApproximateBytes();
  EXPECT_EQ(bytes, 8u + 3u + 8u + 2u);
  sink.AddDmlEvent(e);
  EXPECT_EQ(flushed, 1);
  EXPECT_EQ(sink.events(), 1u);
  EXPECT_EQ(sink.rows(), 2u);
  EXPECT_EQ(sink.bytes(), bytes);

  event::DdlEvent ddl;
  EXPECT_TRUE(sink.WriteBlockEvent(ddl).ok());
  EXPECT_EQ(sink.ddls(), 1u);
  sink.AddCheckpointTs(Ts(30));
  sink.AddCheckpointTs(Ts(20));  // Never goes back.
  EXPECT_EQ(sink.checkpoint_ts(), Ts(30));
  EXPECT_TRUE(sink.status().ok());

  sink.Close();
  auto late = Dml(schema, Ts(11), {Insert(KvRow(3, "x"))});
  bool late_flushed = false;
  late->AddPostFlush([&] { late_flushed = true; });
  sink.AddDmlEvent(late);
  EXPECT_FALSE(late_flushed);
  EXPECT_EQ(sink.events(), 1u);
  EXPECT_EQ(sink.WriteBlockEvent(ddl).code(), Code::kCancelled);
}

TEST(BlackholeSinkTest, CountsFromManyThreads) {
  BlackholeSink sink;
  auto schema = KvSchema("db", "kv", 5);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 250; ++i) {
        sink.AddDmlEvent(Dml(schema, Ts(100 + i), {Insert(KvRow(t * 1000 + i, "v"))}));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(sink.events(), 1000u);
  EXPECT_EQ(sink.rows(), 1000u);
  EXPECT_EQ(sink.bytes(), 1000u * 9u);
}

}  // namespace
}  // namespace sluice::sink
