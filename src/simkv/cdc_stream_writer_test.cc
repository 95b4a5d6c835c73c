// The stream writer over real gRPC: queued messages reach an open stream
// without waiting for the client to send anything.
#include "simkv/cdc_stream_writer.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>

#include "simkv/cdc_errors.h"
#include "simkv/cdc_rows.h"
#include "simkv/cdc_test_client.h"
#include "simkv/grpc_util.h"

namespace sluice::simkv::testing {
namespace {

// EventFeed served from one sink that was filled before the call: the
// writer's first message finds more queued behind it.
class PrefilledFeed final : public ChangeDataService {
 public:
  PrefilledFeed(StreamSinkOptions options, int events)
      : sink_(std::make_shared<StreamSink>(options)) {
    for (int i = 1; i <= events; ++i) {
      sink_->PushEvent(ErrorEvent(i, 1, RegionNotFoundError(i)), /*force=*/true);
    }
  }

  grpc::Status EventFeed(grpc::ServerContext* context, CdcServerStream* stream) override {
    WriteStream(context, stream, sink_.get(), CancelToken());
    return grpc::Status::OK;
  }

  StreamSink& sink() { return *sink_; }

 private:
  std::shared_ptr<StreamSink> sink_;
};

class CdcStreamWriterTest : public ::testing::Test {
 protected:
  void Serve(StreamSinkOptions options, int events) {
    feed_ = std::make_unique<PrefilledFeed>(options, events);
    Result<LoopbackServer> server = StartLoopbackServer({feed_.get()});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    CdcTestClientOptions client_options;
    client_options.v2 = false;
    client_ = std::make_unique<CdcTestClient>(server_.address(), client_options);
  }

  void TearDown() override {
    client_.reset();  // Cancels the call if it is still open.
    if (feed_) feed_->sink().Close();
    if (server_.server) ShutdownServer(server_.server.get());
  }

  std::unique_ptr<PrefilledFeed> feed_;
  LoopbackServer server_;
  std::unique_ptr<CdcTestClient> client_;
};

TEST_F(CdcStreamWriterTest, QueuedMessagesReachAnOpenStream) {
  StreamSinkOptions options;
  options.max_events_per_message = 2;
  Serve(options, 5);  // Three messages; the first two go with the buffer hint.
  ASSERT_TRUE(client_->WaitFor([](const StreamLog& log) { return log.messages == 3; }));
  StreamLog log = client_->Snapshot();
  EXPECT_EQ(log.regions.size(), 5u);
  EXPECT_TRUE(log.violations.empty());

  feed_->sink().Close();  // The writer drains the sink and the stream ends.
  std::optional<grpc::Status> status = client_->WaitFinished();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->ok()) << status->error_message();
}

TEST_F(CdcStreamWriterTest, AClosedSinkIsDrainedAndTheStreamFinishes) {
  Serve(StreamSinkOptions{}, 200);  // 64 events per message: four messages.
  feed_->sink().Close();
  std::optional<grpc::Status> status = client_->WaitFinished();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->ok()) << status->error_message();
  StreamLog log = client_->Snapshot();
  EXPECT_EQ(log.messages, 4u);
  EXPECT_EQ(log.regions.size(), 200u);
}

}  // namespace
}  // namespace sluice::simkv::testing
