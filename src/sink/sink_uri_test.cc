#include "sink/sink_uri.h"

#include <gtest/gtest.h>

namespace sluice::sink {
namespace {

TEST(SinkUriTest, ParsesMysqlUri) {
  auto u = SinkUri::Parse("mysql://root:p%40ss@127.0.0.1:3306/?worker-count=8&safe-mode=true");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->scheme, "mysql");
  EXPECT_EQ(u->user, "root");
  EXPECT_EQ(u->password, "p@ss");
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 3306);
  EXPECT_EQ(u->path, "/");
  EXPECT_EQ(*u->IntParam("worker-count", 1, 1024).value(), 8);
  EXPECT_EQ(*u->BoolParam("safe-mode").value(), true);
  EXPECT_FALSE(u->BoolParam("absent").value().has_value());
  EXPECT_EQ(u->Redacted(), "mysql://root:xxxxx@127.0.0.1:3306/?safe-mode=true&worker-count=8");
}

TEST(SinkUriTest, ParsesFileAndBlackhole) {
  auto f = SinkUri::Parse("FILE:///tmp/out%20dir?protocol=csv&flush-interval=1m30s&file-size=64MB");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->scheme, "file");
  EXPECT_EQ(f->host, "");
  EXPECT_EQ(f->path, "/tmp/out dir");
  EXPECT_EQ(f->params.at("protocol"), "csv");
  EXPECT_EQ(f->DurationParam("flush-interval").value()->count(), 90'000);
  EXPECT_EQ(*f->SizeParam("file-size").value(), 64 << 20);
  auto b = SinkUri::Parse("blackhole://");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->scheme, "blackhole");
  EXPECT_TRUE(b->params.empty());
}

TEST(SinkUriTest, RejectsMalformed) {
  for (const char* bad :
       {"", "mysql", "://x", "my sql://h", "mysql://h:0/", "mysql://h:99999/", "mysql://h:12ab/",
        "file:///a%zz", "file:///a%2", "mysql://h/?a=1&a=2", "mysql://h/?=1"}) {
    auto u = SinkUri::Parse(bad);
    EXPECT_FALSE(u.ok()) << bad;
    if (!u.ok()) {
      EXPECT_EQ(u.status().code(), Code::kInvalidArgument) << bad;
    }
  }
  auto u = SinkUri::Parse("mysql://h/?worker-count=0&safe-mode=maybe&flush-interval=5x&size=3TB");
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->IntParam("worker-count", 1, 1024).ok());
  EXPECT_FALSE(u->BoolParam("safe-mode").ok());
  EXPECT_FALSE(u->DurationParam("flush-interval").ok());
  EXPECT_FALSE(u->SizeParam("size").ok());
}

}  // namespace
}  // namespace sluice::sink
