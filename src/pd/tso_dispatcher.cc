#include "pd/tso_dispatcher.h"

#include <algorithm>
#include <utility>

#include "common/logging.h"
#include "common/tso.h"
#include "pd/pd_wire.h"

namespace sluice::pd {

TsoDispatcher::TsoDispatcher(PdConnection* conn)
    : conn_(conn), max_batch_(conn->options().tso_max_batch) {}

TsoDispatcher::~TsoDispatcher() { Stop(); }

void TsoDispatcher::Start() {
  thread_.Start("pd-tso", [this](StopToken) { Run(); });
}

void TsoDispatcher::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    if (live_context_ != nullptr) live_context_->TryCancel();
    for (const std::shared_ptr<Waiter>& waiter : queue_) {
      waiter->result = Result<Ts>(Cancelled("pd client stopped"));
    }
    queue_.clear();
    work_.SignalAll();
    done_.SignalAll();
  }
  thread_.Stop();
}

Result<Ts> TsoDispatcher::GetTs() {
  auto waiter = std::make_shared<Waiter>();
  Clock* clock = conn_->options().clock;
  const Clock::TimePoint deadline = clock->Now() + conn_->options().rpc_timeout;
  MutexLock lock(&mu_);
  if (stopping_) return Cancelled("pd client stopped");
  queue_.push_back(waiter);
  work_.Signal();
  while (!waiter->result) {
    if (!clock->WaitUntil(&done_, &mu_, deadline) || waiter->result) continue;
    if (waiter->in_flight) {
      // The stream does not answer: break it so the dispatcher moves on.
      if (live_context_ != nullptr) live_context_->TryCancel();
    } else {
      auto it = std::find(queue_.begin(), queue_.end(), waiter);
      if (it != queue_.end()) queue_.erase(it);
    }
    return Unavailable("pd: no TSO within " + std::to_string(conn_->options().rpc_timeout.count()) +
                       " ms");
  }
  return *waiter->result;
}

void TsoDispatcher::Run() {
  while (true) {
    Batch batch = TakeBatch();
    if (batch.empty()) break;
    Complete(batch, RoundTrip(static_cast<uint32_t>(batch.size())));
  }
  CloseStream(Cancelled("pd client stopped"), /*cancel=*/true).IgnoreError();
}

TsoDispatcher::Batch TsoDispatcher::TakeBatch() {
  MutexLock lock(&mu_);
  while (queue_.empty() && !stopping_) work_.Wait(&mu_);
  Batch batch;
  if (stopping_) return batch;
  const size_t n = std::min(queue_.size(), max_batch_);
  batch.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    queue_.front()->in_flight = true;
    batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return batch;
}

Status TsoDispatcher::OpenStream() {
  ASSIGN_OR_RETURN(std::shared_ptr<PdStub> stub, conn_->Get());
  auto context = std::make_unique<grpc::ClientContext>();
  {
    MutexLock lock(&mu_);
    if (stopping_) return Cancelled("pd client stopped");
    live_context_ = context.get();  // From now on a stalled caller can cancel it.
  }
  stream_ = stub->stub->Tso(context.get());
  context_ = std::move(context);
  stream_stub_ = std::move(stub);
  streams_opened_.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Status TsoDispatcher::CloseStream(Status why, bool cancel) {
  if (stream_ == nullptr) return why;
  if (cancel) context_->TryCancel();
  grpc::Status status = stream_->Finish();
  {
    MutexLock lock(&mu_);
    live_context_ = nullptr;
  }
  stream_.reset();
  context_.reset();
  Status mapped = status.ok() ? why : FromGrpc(status, "Tso stream");
  if (status.ok() || ShouldReconnect(status.error_code())) {
    conn_->MarkBroken(stream_stub_, mapped);
  }
  stream_stub_.reset();
  return mapped;
}

Result<TsoDispatcher::Answer> TsoDispatcher::RoundTrip(uint32_t count) {
  if (stream_ == nullptr) RETURN_IF_ERROR(OpenStream());
  pdpb::TsoRequest request;
  *request.mutable_header() = conn_->Header();
  request.set_count(count);
  requests_sent_.fetch_add(1, std::memory_order_relaxed);
  pdpb::TsoResponse response;
  if (!stream_->Write(request)) {
    while (stream_->Read(&response)) {
    }  // Drain what the server sent before it ended the call.
    return CloseStream(Unavailable("pd: Tso stream write failed"), /*cancel=*/false);
  }
  if (!stream_->Read(&response)) {
    return CloseStream(Unavailable("pd: Tso stream closed"), /*cancel=*/false);
  }
  Result<Answer> answer = CheckResponse(response, count);
  if (!answer.ok()) CloseStream(answer.status(), /*cancel=*/true).IgnoreError();
  return answer;
}

Result<TsoDispatcher::Answer> TsoDispatcher::CheckResponse(const pdpb::TsoResponse& response,
                                                           uint32_t count) {
  RETURN_IF_ERROR(FromHeader(response.header(), conn_->cluster_id(), "Tso"));
  if (!response.has_timestamp()) return ProtocolViolation("pd Tso: answer without a timestamp");
  if (response.count() != count) {
    return ProtocolViolation("pd Tso: asked " + std::to_string(count) + " timestamps, got " +
                             std::to_string(response.count()));
  }
  const pdpb::Timestamp& ts = response.timestamp();
  const uint32_t suffix = ts.suffix_bits();
  constexpr int64_t kMaxPhysical = int64_t{1} << (64 - tso::kLogicalBits);
  if (ts.physical() <= 0 || ts.physical() >= kMaxPhysical || ts.logical() < 0 ||
      static_cast<uint64_t>(ts.logical()) > tso::kLogicalMask || suffix >= tso::kLogicalBits ||
      static_cast<uint64_t>(ts.logical()) < (static_cast<uint64_t>(count - 1) << suffix)) {
    return ProtocolViolation("pd Tso: malformed timestamp " + std::to_string(ts.physical()) + "/" +
                             std::to_string(ts.logical()) + " for a batch of " +
                             std::to_string(count));
  }
  Answer answer{tso::Compose(ts.physical(), ts.logical()), count, suffix};
  const Ts first = tso::BatchElement(answer.last, count, 0, suffix);
  if (first <= last_handed_out_) {
    return ProtocolViolation("pd Tso: timestamp went back from " +
                             std::to_string(last_handed_out_.value()) + " to " +
                             std::to_string(first.value()));
  }
  last_handed_out_ = answer.last;
  return answer;
}

void TsoDispatcher::Complete(const Batch& batch, const Result<Answer>& answer) {
  MutexLock lock(&mu_);
  for (uint32_t i = 0; i < batch.size(); ++i) {
    if (answer.ok()) {
      batch[i]->result =
          Result<Ts>(tso::BatchElement(answer->last, answer->count, i, answer->suffix_bits));
    } else if (stopping_) {
      batch[i]->result = Result<Ts>(Cancelled("pd client stopped"));
    } else {
      batch[i]->result = Result<Ts>(answer.status());
    }
  }
  done_.SignalAll();
}

}  // namespace sluice::pd
