#include "simkv/cdc_stream_sink.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "simkv/cdc_wire_encoder.h"

namespace sluice::simkv {

namespace {

// Recycled row batches kept per sink, and the largest buffer worth keeping.
constexpr size_t kMaxSpareBatches = 256;
constexpr size_t kMaxSpareBytes = 64 << 10;

}  // namespace

StreamSink::PushResult StreamSink::Admit(size_t bytes, bool force) const {
  if (closed_) return PushResult::kClosed;
  if (!force && bytes_ + bytes > options_.max_bytes) return PushResult::kFull;
  return PushResult::kOk;
}

void StreamSink::Enqueue(Item item) {
  bytes_ += item.bytes;
  items_.push_back(std::move(item));
  // The one writer waits only for an empty queue.
  if (items_.size() == 1) not_empty_.Signal();
}

void StreamSink::EnqueueResolved(Item item) {
  // Back over the tail's scan events of other requests (a batch without a
  // request id, from a V1 stream, overtakes nothing).
  const uint64_t request = item.resolved.request_id();
  auto overtakes = [request](const Item& queued) {
    return request != 0 && queued.scan && queued.event->request_id() != request;
  };
  auto at = items_.end();
  while (at != items_.begin() && overtakes(*std::prev(at))) --at;
  bytes_ += item.bytes;
  items_.insert(at, std::move(item));
  if (items_.size() == 1) not_empty_.Signal();
}

StreamSink::PushResult StreamSink::PushEvent(cdcpb::Event event, bool force, bool scan) {
  Item item;
  item.kind = Item::Kind::kEvent;
  item.scan = scan;
  item.bytes = EventBytes(event);
  item.event = std::move(event);
  MutexLock lock(&mu_);
  PushResult result = Admit(item.bytes, force);
  if (result == PushResult::kOk) Enqueue(std::move(item));
  return result;
}

// static
void StreamSink::AppendRow(const RowView& row, RowBatch* batch) {
  PackedRow packed;
  packed.start_ts = row.start_ts;
  packed.commit_ts = row.commit_ts;
  packed.key_size = static_cast<uint32_t>(row.key.size());
  packed.value_size = static_cast<uint32_t>(row.value.size());
  packed.old_value_size = static_cast<uint32_t>(row.old_value.size());
  packed.type = row.type;
  packed.op_type = row.op_type;
  batch->rows.push_back(packed);
  batch->bytes.append(row.key).append(row.value).append(row.old_value);
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
  if (!items_.empty()) {
    Item& last = items_.back();
    if (last.kind == Item::Kind::kRows && last.batch.region_id == region_id &&
        last.batch.request_id == request_id && last.batch.index == index &&
        last.bytes + bytes < kEventMaxBytes) {
      AppendRow(row, &last.batch);
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
  AppendRow(row, &item.batch);
  item.bytes = bytes + 32;
  Enqueue(std::move(item));
  return PushResult::kOk;
}

StreamSink::PushResult StreamSink::PushResolvedTs(cdcpb::ResolvedTs resolved) {
  Item item;
  item.kind = Item::Kind::kResolved;
  item.bytes = 32 + 8 * static_cast<size_t>(resolved.regions_size());
  item.resolved = std::move(resolved);
  MutexLock lock(&mu_);
  PushResult result = Admit(item.bytes, /*force=*/false);
  if (result == PushResult::kOk) EnqueueResolved(std::move(item));
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

StreamSink::Item StreamSink::PopFront() {
  Item item = std::move(items_.front());
  items_.pop_front();
  bytes_ -= item.bytes;
  return item;
}

void StreamSink::TakeMessageItems() {
  taken_.clear();
  if (items_.front().kind == Item::Kind::kResolved) {
    taken_.push_back(PopFront());
    return;
  }
  size_t bytes = 0;
  while (!items_.empty() && items_.front().kind != Item::Kind::kResolved &&
         taken_.size() < options_.max_events_per_message &&
         (bytes == 0 || bytes + items_.front().bytes <= options_.max_message_bytes)) {
    taken_.push_back(PopFront());
    bytes += taken_.back().bytes;
  }
}

void StreamSink::EncodeRows(const RowBatch& batch, std::string* bytes) {
  views_.clear();
  const char* data = batch.bytes.data();
  for (const PackedRow& packed : batch.rows) {
    RowView& view = views_.emplace_back();
    view.type = packed.type;
    view.op_type = packed.op_type;
    view.start_ts = packed.start_ts;
    view.commit_ts = packed.commit_ts;
    view.key = std::string_view(data, packed.key_size);
    data += packed.key_size;
    view.value = std::string_view(data, packed.value_size);
    data += packed.value_size;
    view.old_value = std::string_view(data, packed.old_value_size);
    data += packed.old_value_size;
  }
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
    while (items_.empty() && !closed_ && !token.cancelled()) not_empty_.Wait(&mu_);
    if (items_.empty() || token.cancelled()) return false;
    TakeMessageItems();
    if (more != nullptr) *more = !items_.empty();
    has_space_.SignalAll();
  }
  EncodeMessage(bytes);
  MutexLock lock(&mu_);
  for (Item& item : taken_) {
    if (item.kind != Item::Kind::kRows || spare_.size() >= kMaxSpareBatches ||
        item.batch.bytes.capacity() > kMaxSpareBytes) {
      continue;
    }
    item.batch.rows.clear();
    item.batch.bytes.clear();
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
