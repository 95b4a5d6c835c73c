#include "simkv/cdc_stream_sink.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "simkv/cdc_wire_encoder.h"

namespace sluice::simkv {

namespace {

// Recycled row batches kept per sink, and the largest buffer worth keeping.
constexpr size_t kMaxSpareBatches = 256;
constexpr size_t kMaxSpareBytes = 64 << 10;

}  // namespace

StreamSink::PushResult StreamSink::Admit(size_t bytes, bool force, bool except_scan) const {
  if (closed_) return PushResult::kClosed;
  const size_t queued = except_scan ? bytes_ - scan_bytes_ : bytes_;
  if (!force && queued + bytes > options_.max_bytes) return PushResult::kFull;
  return PushResult::kOk;
}

void StreamSink::Enqueue(Item item) {
  const bool was_empty = Empty();
  item.seq = next_seq_++;
  bytes_ += item.bytes;
  if (item.scan) {
    scan_bytes_ += item.bytes;
    ++scan_queued_[item.request_id];
    scan_.push_back(std::move(item));
  } else {
    live_.push_back(std::move(item));
  }
  // The one writer waits only for empty queues.
  if (was_empty) not_empty_.Signal();
}

std::deque<StreamSink::Item>& StreamSink::NextQueue() {
  if (live_.empty()) return scan_;
  if (scan_.empty()) return live_;
  const Item& live = live_.front();
  if (live.kind == Item::Kind::kResolved && live.request_id != 0 &&
      !scan_queued_.contains(live.request_id)) {
    return live_;
  }
  return live.seq < scan_.front().seq ? live_ : scan_;
}

StreamSink::Item StreamSink::Pop(std::deque<Item>* queue) {
  Item item = std::move(queue->front());
  queue->pop_front();
  bytes_ -= item.bytes;
  if (item.scan) {
    scan_bytes_ -= item.bytes;
    auto it = scan_queued_.find(item.request_id);
    if (--it->second == 0) scan_queued_.erase(it);
  }
  return item;
}

StreamSink::PushResult StreamSink::PushEvent(cdcpb::Event event, bool force) {
  return PushEventItem(std::move(event), force, /*scan=*/false);
}

StreamSink::PushResult StreamSink::PushScanEvent(cdcpb::Event event) {
  return PushEventItem(std::move(event), /*force=*/true, /*scan=*/true);
}

StreamSink::PushResult StreamSink::PushEventItem(cdcpb::Event event, bool force, bool scan) {
  Item item;
  item.kind = Item::Kind::kEvent;
  item.scan = scan;
  item.request_id = event.request_id();
  item.bytes = EventBytes(event);
  item.event = std::move(event);
  MutexLock lock(&mu_);
  PushResult result = Admit(item.bytes, force);
  if (result == PushResult::kOk) Enqueue(std::move(item));
  return result;
}

StreamSink::PushResult StreamSink::PushScanRows(RowBatch batch) {
  Item item;
  item.kind = Item::Kind::kRows;
  item.scan = true;
  item.request_id = batch.request_id;
  item.bytes = batch.row_bytes + 32;
  item.batch = std::move(batch);
  MutexLock lock(&mu_);
  PushResult result = Admit(item.bytes, /*force=*/true);
  if (result == PushResult::kOk) Enqueue(std::move(item));
  return result;
}

StreamSink::PushResult StreamSink::PushRow(uint64_t region_id, uint64_t request_id, uint64_t index,
                                           const RowView& row, bool force) {
  MutexLock lock(&mu_);
  return PushRowLocked(region_id, request_id, index, row, force);
}

StreamSink::PushResult StreamSink::PushRows(uint64_t region_id, uint64_t request_id, uint64_t index,
                                            std::span<const RowView> rows, bool force) {
  MutexLock lock(&mu_);
  for (const RowView& row : rows) {
    PushResult result = PushRowLocked(region_id, request_id, index, row, force);
    if (result != PushResult::kOk) return result;
  }
  return PushResult::kOk;
}

StreamSink::PushResult StreamSink::PushRowLocked(uint64_t region_id, uint64_t request_id,
                                                 uint64_t index, const RowView& row, bool force) {
  const size_t bytes = RowBytes(row);
  PushResult result = Admit(bytes, force);
  if (result != PushResult::kOk) return result;
  // Joins the last queued item only (both queues): rows stay in push order.
  if (!live_.empty() && live_.back().seq + 1 == next_seq_) {
    Item& last = live_.back();
    if (last.kind == Item::Kind::kRows && last.batch.region_id == region_id &&
        last.batch.request_id == request_id && last.batch.index == index &&
        last.bytes + bytes < kEventMaxBytes) {
      last.batch.Append(row);
      last.bytes += bytes;
      bytes_ += bytes;
      return PushResult::kOk;
    }
  }
  Item item;
  item.kind = Item::Kind::kRows;
  if (!spare_.empty()) {
    item.batch = std::move(spare_.back());
    spare_.pop_back();
  }
  item.batch.region_id = region_id;
  item.batch.request_id = request_id;
  item.batch.index = index;
  item.batch.Append(row);
  item.bytes = bytes + 32;
  Enqueue(std::move(item));
  return PushResult::kOk;
}

StreamSink::PushResult StreamSink::PushResolvedTs(cdcpb::ResolvedTs resolved) {
  Item item;
  item.kind = Item::Kind::kResolved;
  item.bytes = 32 + 8 * static_cast<size_t>(resolved.regions_size());
  item.request_id = resolved.request_id();
  item.resolved = std::move(resolved);
  MutexLock lock(&mu_);
  PushResult result = Admit(item.bytes, /*force=*/false, /*except_scan=*/true);
  if (result == PushResult::kOk) Enqueue(std::move(item));
  return result;
}

bool StreamSink::WaitForSpace(const CancelToken& token) {
  CancelCallback on_cancel(token, [this] {
    MutexLock lock(&mu_);
    has_space_.SignalAll();
  });
  MutexLock lock(&mu_);
  while (!closed_ && !token.cancelled() && bytes_ >= options_.max_bytes) has_space_.Wait(&mu_);
  return !closed_ && !token.cancelled();
}

void StreamSink::TakeMessageItems() {
  taken_.clear();
  size_t bytes = 0;
  while (!Empty()) {
    std::deque<Item>& queue = NextQueue();
    const Item& next = queue.front();
    if (next.kind == Item::Kind::kResolved) {
      // A resolved-ts batch travels alone.
      if (taken_.empty()) taken_.push_back(Pop(&queue));
      return;
    }
    if (taken_.size() >= options_.max_events_per_message ||
        (bytes != 0 && bytes + next.bytes > options_.max_message_bytes)) {
      return;
    }
    bytes += next.bytes;
    taken_.push_back(Pop(&queue));
  }
}

void StreamSink::EncodeRows(const RowBatch& batch, std::string* bytes) {
  batch.Views(&views_);
  wire::AppendRowsEvent(batch.region_id, batch.index, batch.request_id, views_, bytes);
}

void StreamSink::EncodeMessage(std::string* bytes) {
  for (const Item& item : taken_) {
    switch (item.kind) {
      case Item::Kind::kResolved:
        wire::AppendResolvedTs(item.resolved, bytes);
        break;
      case Item::Kind::kEvent:
        wire::AppendEvent(*item.event, bytes);
        break;
      case Item::Kind::kRows:
        EncodeRows(item.batch, bytes);
        break;
    }
  }
}

bool StreamSink::NextMessage(const CancelToken& token, std::string* bytes, bool* more) {
  bytes->clear();
  CancelCallback on_cancel(token, [this] {
    MutexLock lock(&mu_);
    not_empty_.SignalAll();
  });
  {
    MutexLock lock(&mu_);
    while (Empty() && !closed_ && !token.cancelled()) not_empty_.Wait(&mu_);
    if (Empty() || token.cancelled()) return false;
    TakeMessageItems();
    if (more != nullptr) *more = !Empty();
    has_space_.SignalAll();
  }
  EncodeMessage(bytes);
  MutexLock lock(&mu_);
  for (Item& item : taken_) {
    if (item.kind != Item::Kind::kRows || spare_.size() >= kMaxSpareBatches ||
        item.batch.bytes.capacity() > kMaxSpareBytes) {
      continue;
    }
    item.batch.Clear();
    spare_.push_back(std::move(item.batch));
  }
  taken_.clear();
  return true;
}

std::optional<cdcpb::ChangeDataEvent> StreamSink::NextMessage(const CancelToken& token) {
  std::string bytes;
  if (!NextMessage(token, &bytes)) return std::nullopt;
  cdcpb::ChangeDataEvent message;
  if (!message.ParseFromString(bytes)) {
    // Our own encoding: a failure is a bug here, not bad input.
    std::fprintf(stderr, "StreamSink: a message it encoded does not parse\n");
    std::abort();
  }
  return message;
}

void StreamSink::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  not_empty_.SignalAll();
  has_space_.SignalAll();
}

bool StreamSink::closed() const {
  MutexLock lock(&mu_);
  return closed_;
}

size_t StreamSink::queued_bytes() const {
  MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace sluice::simkv
