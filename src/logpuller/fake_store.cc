#include "logpuller/fake_store.h"

#include <string_view>

#include "common/logging.h"
#include "kvrpcpb.pb.h"

namespace sluice::logpuller::testing {

using Row = cdcpb::Event_Row;

// One stream. The handler thread reads; writes (its own answers, pushes and
// ticks from other threads) hold write_mu and stop once the handler is done.
struct FakeStore::Conn {
  uint64_t id = 0;
  Stream* stream = nullptr;
  Mutex write_mu;
  bool closed GUARDED_BY(write_mu) = false;

  void Write(const cdcpb::ChangeDataEvent& event) REQUIRES(write_mu) {
    if (closed) return;
    if (!stream->Write(event)) LOG_DEBUG("fake store: write to stream {} failed", id);
  }
};

namespace {

Row MakeRow(cdcpb::Event::LogType type, std::string key, std::string value, Ts start, Ts commit) {
  Row row;
  row.set_type(type);
  row.set_op_type(Row::PUT);
  row.set_key(std::move(key));
  row.set_value(std::move(value));
  row.set_start_ts(start.value());
  row.set_commit_ts(commit.value());
  return row;
}

// The message a step sends in answer to (region, request).
cdcpb::ChangeDataEvent Materialize(const FakeStep& step, uint64_t region, uint64_t request) {
  uint64_t region_id = step.region_id.value_or(region);
  uint64_t request_id = step.request_id.value_or(request);
  cdcpb::ChangeDataEvent out;
  switch (step.kind) {
    case FakeStep::Kind::kEvent: {
      cdcpb::Event* event = out.add_events();
      *event = step.event;
      event->set_region_id(region_id);
      event->set_request_id(request_id);
      break;
    }
    case FakeStep::Kind::kResolved: {
      cdcpb::ResolvedTs* resolved = out.mutable_resolved_ts();
      resolved->add_regions(region_id);
      resolved->set_ts(step.ts.value());
      resolved->set_request_id(request_id);
      break;
    }
    case FakeStep::Kind::kRaw:
      out = step.raw;
      break;
    case FakeStep::Kind::kBreak:
      break;
  }
  return out;
}

FakeRegister ToRegister(uint64_t stream_id, const cdcpb::ChangeDataRequest& request) {
  FakeRegister reg;
  reg.stream_id = stream_id;
  reg.request_id = request.request_id();
  reg.region = RegionId(request.region_id());
  reg.checkpoint = Ts(request.checkpoint_ts());
  reg.start_key = request.start_key();
  reg.end_key = request.end_key();
  reg.old_value = request.extra_op() == kvrpcpb::ReadOldValue;
  return reg;
}

}  // namespace

Row CommittedRow(std::string key, std::string value, Ts start, Ts commit) {
  return MakeRow(cdcpb::Event::COMMITTED, std::move(key), std::move(value), start, commit);
}

Row PrewriteRow(std::string key, std::string value, Ts start) {
  return MakeRow(cdcpb::Event::PREWRITE, std::move(key), std::move(value), start, Ts());
}

Row CommitRow(std::string key, Ts start, Ts commit) {
  return MakeRow(cdcpb::Event::COMMIT, std::move(key), "", start, commit);
}

Row RollbackRow(std::string key, Ts start) {
  Row row = MakeRow(cdcpb::Event::ROLLBACK, std::move(key), "", start, Ts());
  row.set_op_type(Row::UNKNOWN);
  return row;
}

Row InitializedRow() {
  Row row;
  row.set_type(cdcpb::Event::INITIALIZED);
  return row;
}

FakeStep FakeStep::Rows(std::vector<Row> rows) {
  FakeStep step;
  cdcpb::Event::Entries* entries = step.event.mutable_entries();
  for (Row& row : rows) *entries->add_entries() = std::move(row);
  return step;
}

FakeStep FakeStep::Initialized() { return Rows({InitializedRow()}); }

FakeStep FakeStep::Error(cdcpb::Error error) {
  FakeStep step;
  *step.event.mutable_error() = std::move(error);
  return step;
}

FakeStep FakeStep::Empty() { return FakeStep(); }

FakeStep FakeStep::LegacyResolved(Ts ts) {
  FakeStep step;
  step.event.set_resolved_ts(ts.value());
  return step;
}

FakeStep FakeStep::Resolved(Ts ts) {
  FakeStep step;
  step.kind = Kind::kResolved;
  step.ts = ts;
  return step;
}

FakeStep FakeStep::Raw(cdcpb::ChangeDataEvent event) {
  FakeStep step;
  step.kind = Kind::kRaw;
  step.raw = std::move(event);
  return step;
}

FakeStep FakeStep::Break(grpc::Status status) {
  FakeStep step;
  step.kind = Kind::kBreak;
  step.status = std::move(status);
  return step;
}

FakeStep FakeStep::ForRegion(uint64_t region) const {
  FakeStep step = *this;
  step.region_id = region;
  return step;
}

FakeStep FakeStep::ForRequest(uint64_t request) const {
  FakeStep step = *this;
  step.request_id = request;
  return step;
}

Result<std::unique_ptr<FakeStore>> FakeStore::Start() {
  std::unique_ptr<FakeStore> store(new FakeStore());
  {
    MutexLock lock(&store->mu_);
    store->default_script_ = {FakeStep::Initialized()};
  }
  ASSIGN_OR_RETURN(store->server_, simkv::StartLoopbackServer({store.get()}));
  LOG_INFO("fake store serving on {}", store->address());
  return store;
}

FakeStore::~FakeStore() { Stop(); }

void FakeStore::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  calls_.Close();
  calls_.CancelAll();
  calls_.WaitIdle();
  if (server_.server != nullptr) simkv::ShutdownServer(server_.server.get());
}

void FakeStore::Script(RegionId region, int attempt, std::vector<FakeStep> steps) {
  MutexLock lock(&mu_);
  scripts_[{region, attempt}] = std::move(steps);
}

void FakeStore::SetDefaultScript(std::vector<FakeStep> steps) {
  MutexLock lock(&mu_);
  default_script_ = std::move(steps);
}

grpc::Status FakeStore::EventFeed(grpc::ServerContext* context, Stream* stream) {
  return Serve(context, stream);
}

grpc::Status FakeStore::EventFeedV2(grpc::ServerContext* context, Stream* stream) {
  return Serve(context, stream);
}

grpc::Status FakeStore::Serve(grpc::ServerContext* context, Stream* stream) {
  std::optional<simkv::ActiveCalls::Guard> guard = calls_.Enter(context);
  if (!guard) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "fake store is stopping");
  bool multiplexing = false;
  for (const auto& [key, value] : context->client_metadata()) {
    if (std::string_view(key.data(), key.size()) == "features" &&
        std::string_view(value.data(), value.size()) == "stream-multiplexing") {
      multiplexing = true;
    }
  }
  auto conn = std::make_shared<Conn>();
  conn->stream = stream;
  {
    MutexLock lock(&mu_);
    conn->id = next_stream_id_++;
    ++num_streams_;
    if (multiplexing) ++num_multiplexed_;
  }
  std::optional<grpc::Status> end;
  cdcpb::ChangeDataRequest request;
  while (!end && stream->Read(&request)) {
    switch (request.request_case()) {
      case cdcpb::ChangeDataRequest::REQUEST_NOT_SET:
      case cdcpb::ChangeDataRequest::kRegister:
        end = HandleRegister(conn, request);
        break;
      case cdcpb::ChangeDataRequest::kDeregister:
        HandleDeregister(*conn, request);
        break;
      default:
        break;
    }
  }
  {
    MutexLock lock(&conn->write_mu);
    conn->closed = true;
  }
  ForgetStream(conn->id);
  return end.value_or(grpc::Status::OK);
}

std::optional<grpc::Status> FakeStore::HandleRegister(const std::shared_ptr<Conn>& conn,
                                                      const cdcpb::ChangeDataRequest& request) {
  FakeRegister reg = ToRegister(conn->id, request);
  // Held across the answer so that pushes and ticks for this register (which
  // take it too) come after the scripted steps.
  MutexLock write_lock(&conn->write_mu);
  std::vector<FakeStep> steps;
  {
    MutexLock lock(&mu_);
    reg.attempt = ++attempts_[reg.region];
    auto it = scripts_.find({reg.region, reg.attempt});
    steps = it != scripts_.end() ? it->second : default_script_;
    live_[{conn->id, reg.request_id, reg.region.value()}] = LiveEntry{reg, conn};
  }
  LOG_DEBUG("fake store: stream {} register request {} region {} attempt {}", conn->id,
            reg.request_id, reg.region.value(), reg.attempt);
  std::optional<grpc::Status> end;
  for (const FakeStep& step : steps) {
    if (step.kind == FakeStep::Kind::kBreak) {
      end = step.status;
      break;
    }
    conn->Write(Materialize(step, reg.region.value(), reg.request_id));
  }
  MutexLock lock(&mu_);
  answered_.push_back(reg);
  return end;
}

void FakeStore::HandleDeregister(const Conn& conn, const cdcpb::ChangeDataRequest& request) {
  MutexLock lock(&mu_);
  ++num_deregisters_;
  uint64_t request_id = request.request_id();
  if (request.region_id() != 0) {
    live_.erase({conn.id, request_id, request.region_id()});
    return;
  }
  auto begin = live_.lower_bound({conn.id, request_id, 0});
  auto end = live_.lower_bound({conn.id, request_id + 1, 0});
  live_.erase(begin, end);
}

void FakeStore::ForgetStream(uint64_t stream_id) {
  MutexLock lock(&mu_);
  auto begin = live_.lower_bound({stream_id, 0, 0});
  auto end = live_.lower_bound({stream_id + 1, 0, 0});
  live_.erase(begin, end);
}

Status FakeStore::Push(RegionId region, const std::vector<FakeStep>& steps) {
  for (const FakeStep& step : steps) {
    if (step.kind == FakeStep::Kind::kBreak) {
      return InvalidArgument("fake store: a break step is for register scripts only");
    }
  }
  std::optional<LiveEntry> target;
  {
    MutexLock lock(&mu_);
    for (const auto& [key, entry] : live_) {
      if (entry.reg.region != region) continue;
      if (!target || entry.reg.attempt > target->reg.attempt) target = entry;
    }
  }
  if (!target)
    return NotFound("fake store: region " + std::to_string(region.value()) + " is not registered");
  MutexLock write_lock(&target->conn->write_mu);
  for (const FakeStep& step : steps) {
    target->conn->Write(Materialize(step, region.value(), target->reg.request_id));
  }
  return Status::Ok();
}

size_t FakeStore::Tick(Ts ts) {
  // Per stream: request id -> regions.
  std::map<uint64_t, std::pair<std::shared_ptr<Conn>, std::map<uint64_t, std::vector<uint64_t>>>>
      batches;
  size_t reached = 0;
  {
    MutexLock lock(&mu_);
    for (const auto& [key, entry] : live_) {
      auto& [conn, requests] = batches[entry.conn->id];
      conn = entry.conn;
      requests[entry.reg.request_id].push_back(entry.reg.region.value());
      ++reached;
    }
  }
  for (auto& [stream_id, batch] : batches) {
    auto& [conn, requests] = batch;
    MutexLock write_lock(&conn->write_mu);
    for (const auto& [request_id, regions] : requests) {
      cdcpb::ChangeDataEvent event;
      cdcpb::ResolvedTs* resolved = event.mutable_resolved_ts();
      for (uint64_t region : regions) resolved->add_regions(region);
      resolved->set_ts(ts.value());
      resolved->set_request_id(request_id);
      conn->Write(event);
    }
  }
  return reached;
}

std::vector<FakeRegister> FakeStore::Registers(RegionId region) const {
  MutexLock lock(&mu_);
  std::vector<FakeRegister> out;
  for (const FakeRegister& reg : answered_) {
    if (reg.region == region) out.push_back(reg);
  }
  return out;
}

int FakeStore::NumRegisters(RegionId region) const {
  MutexLock lock(&mu_);
  int n = 0;
  for (const FakeRegister& reg : answered_) n += reg.region == region ? 1 : 0;
  return n;
}

std::optional<FakeRegister> FakeStore::Live(RegionId region) const {
  MutexLock lock(&mu_);
  std::optional<FakeRegister> out;
  for (const auto& [key, entry] : live_) {
    if (entry.reg.region != region) continue;
    if (!out || entry.reg.attempt > out->attempt) out = entry.reg;
  }
  return out;
}

uint64_t FakeStore::NumDeregisters() const {
  MutexLock lock(&mu_);
  return num_deregisters_;
}

uint64_t FakeStore::NumStreams() const {
  MutexLock lock(&mu_);
  return num_streams_;
}

uint64_t FakeStore::NumMultiplexedStreams() const {
  MutexLock lock(&mu_);
  return num_multiplexed_;
}

}  // namespace sluice::logpuller::testing
