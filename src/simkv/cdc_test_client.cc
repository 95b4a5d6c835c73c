#include "simkv/cdc_test_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <utility>

#include "kvrpcpb.pb.h"
#include "simkv/proto_convert.h"

namespace sluice::simkv::testing {

namespace {

std::string KeyName(StreamLog::Key key) {
  return "(request " + std::to_string(key.first) + ", region " + std::to_string(key.second) + ")";
}

}  // namespace

size_t RegionLog::CountType(cdcpb::Event::LogType type) const {
  return static_cast<size_t>(
      std::count_if(rows.begin(), rows.end(), [&](const Row& row) { return row.type() == type; }));
}

std::vector<Row> RegionLog::RowsOfType(cdcpb::Event::LogType type) const {
  std::vector<Row> out;
  for (const Row& row : rows) {
    if (row.type() == type) out.push_back(row);
  }
  return out;
}

const RegionLog* StreamLog::Find(uint64_t request_id, uint64_t region_id) const {
  auto it = regions.find({request_id, region_id});
  return it == regions.end() ? nullptr : &it->second;
}

CdcTestClient::CdcTestClient(const std::string& address, CdcTestClientOptions options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  // A fresh connection per client, not a subchannel shared with earlier
  // clients that may still be backing off from a store that was down.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // TiCDC's dial settings: a fixed 64 KiB stream window (no BDP growth).
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 65535);
  channel_ = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  stub_ = cdcpb::ChangeData::NewStub(channel_);
  if (options.v2 && options.features) context_.AddMetadata("features", *options.features);
  stream_ = options.v2 ? stub_->EventFeedV2(&context_) : stub_->EventFeed(&context_);
  if (options.start_reading) StartReading();
}

CdcTestClient::~CdcTestClient() {
  context_.TryCancel();
  StartReading();  // Finish() must run once the call is over.
  reader_.Join();
}

void CdcTestClient::StartReading() {
  if (reader_.joinable() || reader_.stop_requested()) return;
  reader_.Start("cdc-test-read", [this](StopToken) { ReadLoop(); });
}

bool CdcTestClient::Send(const cdcpb::ChangeDataRequest& request) {
  if (request.request_case() != cdcpb::ChangeDataRequest::kDeregister) {
    MutexLock lock(&mu_);
    StreamLog::Key key{request.request_id(), request.region_id()};
    if (closed_.erase(key) > 0) {
      log_.archived.push_back(std::move(log_.regions[key]));
      log_.regions.erase(key);
    }
  }
  return stream_->Write(request);
}

void CdcTestClient::CloseSend() { stream_->WritesDone(); }

void CdcTestClient::ReadLoop() {
  cdcpb::ChangeDataEvent message;
  while (stream_->Read(&message)) {
    MutexLock lock(&mu_);
    OnMessage(message);
    changed_.SignalAll();
  }
  grpc::Status status = stream_->Finish();
  MutexLock lock(&mu_);
  finished_ = status;
  changed_.SignalAll();
}

void CdcTestClient::Violation(std::string what) { log_.violations.push_back(std::move(what)); }

void CdcTestClient::OnMessage(const cdcpb::ChangeDataEvent& message) {
  ++log_.messages;
  if (message.events_size() > 0 && message.has_resolved_ts()) {
    Violation("events and resolved ts in one message");
  }
  for (const cdcpb::Event& event : message.events()) OnEvent(event);
  if (message.has_resolved_ts()) OnResolved(message.resolved_ts());
}

void CdcTestClient::OnEvent(const cdcpb::Event& event) {
  StreamLog::Key key{event.request_id(), event.region_id()};
  if (closed_.contains(key)) Violation("event after error for " + KeyName(key));
  RegionLog& region = log_.regions[key];
  if (event.has_error()) {
    region.errors.push_back(event.error());
    // A duplicate register is refused; the first subscription lives on.
    if (!event.error().has_duplicate_request()) closed_.insert(key);
    return;
  }
  if (!event.has_entries()) return;  // Admin and long-txn events are ignored.
  for (const Row& row : event.entries().entries()) OnRow(key, region, row, event.index());
}

void CdcTestClient::OnRow(StreamLog::Key key, RegionLog& region, const Row& row, uint64_t index) {
  region.rows.push_back(row);
  region.indexes.push_back(index);
  uint64_t resolved = region.resolved.empty() ? 0 : region.resolved.back();
  switch (row.type()) {
    case cdcpb::Event::PREWRITE:
      region.prewrites[{row.start_ts(), row.key()}] = row;
      break;
    case cdcpb::Event::COMMIT:
      if (row.commit_ts() <= resolved) Violation("commit at or below resolved ts " + KeyName(key));
      if (region.initialized) {
        MatchCommit(key, region, row);
      } else {
        region.parked.push_back(row);
      }
      break;
    case cdcpb::Event::COMMITTED:
      if (row.commit_ts() <= resolved) Violation("committed at or below resolved " + KeyName(key));
      break;
    case cdcpb::Event::ROLLBACK:
      region.prewrites.erase({row.start_ts(), row.key()});
      break;
    case cdcpb::Event::INITIALIZED:
      if (region.initialized) Violation("initialized twice for " + KeyName(key));
      region.initialized = true;
      for (const Row& parked : region.parked) MatchCommit(key, region, parked);
      region.parked.clear();
      break;
    default:
      Violation("row of unknown type for " + KeyName(key));
  }
}

void CdcTestClient::MatchCommit(StreamLog::Key key, RegionLog& region, const Row& commit) {
  auto it = region.prewrites.find({commit.start_ts(), commit.key()});
  if (it == region.prewrites.end()) {
    Violation("unmatched commit after init for " + KeyName(key));
    return;
  }
  region.prewrites.erase(it);
}

void CdcTestClient::OnResolved(const cdcpb::ResolvedTs& resolved) {
  if (resolved.ts() == 0) Violation("resolved ts 0");
  for (uint64_t region_id : resolved.regions()) {
    StreamLog::Key key{resolved.request_id(), region_id};
    auto it = log_.regions.find(key);
    if (it == log_.regions.end() && resolved.request_id() == 0) {
      // Without multiplexing the batch has no request id: find the region.
      it = std::find_if(log_.regions.begin(), log_.regions.end(),
                        [&](const auto& entry) { return entry.first.second == region_id; });
    }
    if (it == log_.regions.end() || !it->second.initialized) {
      Violation("resolved ts before initialized for " + KeyName(key));
      continue;
    }
    if (closed_.contains(it->first)) Violation("resolved ts after error for " + KeyName(key));
    std::vector<uint64_t>& values = it->second.resolved;
    if (!values.empty() && resolved.ts() < values.back()) {
      Violation("resolved ts went back for " + KeyName(key));
    }
    values.push_back(resolved.ts());
  }
}

bool CdcTestClient::WaitFor(const std::function<bool(const StreamLog&)>& pred,
                            std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (!pred(log_)) {
    if (changed_.WaitUntil(&mu_, deadline)) return pred(log_);
  }
  return true;
}

bool CdcTestClient::WaitInitialized(uint64_t request_id, uint64_t region_id) {
  return WaitFor([&](const StreamLog& log) {
    const RegionLog* region = log.Find(request_id, region_id);
    return region != nullptr && region->initialized;
  });
}

std::optional<cdcpb::Error> CdcTestClient::WaitError(uint64_t request_id, uint64_t region_id) {
  std::optional<cdcpb::Error> error;
  WaitFor([&](const StreamLog& log) {
    const RegionLog* region = log.Find(request_id, region_id);
    if (region == nullptr || region->errors.empty()) return false;
    error = region->errors.back();
    return true;
  });
  return error;
}

std::optional<uint64_t> CdcTestClient::WaitResolvedAbove(uint64_t request_id, uint64_t region_id,
                                                         uint64_t above) {
  std::optional<uint64_t> ts;
  WaitFor([&](const StreamLog& log) {
    const RegionLog* region = log.Find(request_id, region_id);
    if (region == nullptr || region->resolved.empty() || region->resolved.back() <= above) {
      return false;
    }
    ts = region->resolved.back();
    return true;
  });
  return ts;
}

std::optional<grpc::Status> CdcTestClient::WaitFinished(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (!finished_) {
    if (changed_.WaitUntil(&mu_, deadline)) break;
  }
  return finished_;
}

StreamLog CdcTestClient::Snapshot() const {
  MutexLock lock(&mu_);
  return log_;
}

cdcpb::ChangeDataRequest RegisterRequest(uint64_t cluster_id, const RegionInfo& region,
                                         uint64_t request_id, Ts checkpoint_ts, bool old_value) {
  cdcpb::ChangeDataRequest request;
  request.mutable_header()->set_cluster_id(cluster_id);
  request.mutable_header()->set_ticdc_version(kClientVersion);
  request.set_region_id(region.id.value());
  *request.mutable_region_epoch() = ToProto(region.epoch);
  request.set_checkpoint_ts(checkpoint_ts.value());
  request.set_start_key(region.start_key);
  request.set_end_key(region.end_key);
  request.set_request_id(request_id);
  request.set_extra_op(old_value ? kvrpcpb::ReadOldValue : kvrpcpb::Noop);
  return request;
}

cdcpb::ChangeDataRequest DeregisterRequest(uint64_t cluster_id, uint64_t request_id,
                                           uint64_t region_id) {
  cdcpb::ChangeDataRequest request;
  request.mutable_header()->set_cluster_id(cluster_id);
  request.mutable_header()->set_ticdc_version(kClientVersion);
  request.set_request_id(request_id);
  request.set_region_id(region_id);
  request.mutable_deregister();
  return request;
}

}  // namespace sluice::simkv::testing
