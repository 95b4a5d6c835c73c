#include "simkv/cdc_stream_sink.h"

#include <utility>

namespace sluice::simkv {

StreamSink::PushResult StreamSink::Admit(size_t bytes, bool force) const {
  if (closed_) return PushResult::kClosed;
  if (!force && bytes_ + bytes > options_.max_bytes) return PushResult::kFull;
  return PushResult::kOk;
}

void StreamSink::Enqueue(Item item) {
  bytes_ += item.bytes;
  items_.push_back(std::move(item));
  not_empty_.Signal();
}

StreamSink::PushResult StreamSink::PushEvent(cdcpb::Event event, bool force) {
  Item item;
  item.bytes = EventBytes(event);
  item.event = std::move(event);
  MutexLock lock(&mu_);
  PushResult result = Admit(item.bytes, force);
  if (result == PushResult::kOk) Enqueue(std::move(item));
  return result;
}

StreamSink::PushResult StreamSink::PushRow(uint64_t region_id, uint64_t request_id, uint64_t index,
                                           Row row, bool force) {
  const size_t bytes = RowBytes(row);
  MutexLock lock(&mu_);
  PushResult result = Admit(bytes, force);
  if (result != PushResult::kOk) return result;
  if (!items_.empty()) {
    Item& last = items_.back();
    if (last.event && last.event->has_entries() && last.event->region_id() == region_id &&
        last.event->request_id() == request_id && last.event->index() == index &&
        last.bytes + bytes < kEventMaxBytes) {
      *last.event->mutable_entries()->add_entries() = std::move(row);
      last.bytes += bytes;
      bytes_ += bytes;
      return PushResult::kOk;
    }
  }
  Item item;
  item.event.emplace();
  item.event->set_region_id(region_id);
  item.event->set_request_id(request_id);
  item.event->set_index(index);
  *item.event->mutable_entries()->add_entries() = std::move(row);
  item.bytes = bytes + 32;
  Enqueue(std::move(item));
  return PushResult::kOk;
}

StreamSink::PushResult StreamSink::PushResolvedTs(cdcpb::ResolvedTs resolved) {
  Item item;
  item.bytes = 32 + 8 * static_cast<size_t>(resolved.regions_size());
  item.resolved = std::move(resolved);
  MutexLock lock(&mu_);
  PushResult result = Admit(item.bytes, /*force=*/false);
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

StreamSink::Item StreamSink::PopFront() {
  Item item = std::move(items_.front());
  items_.pop_front();
  bytes_ -= item.bytes;
  return item;
}

cdcpb::ChangeDataEvent StreamSink::BuildMessage() {
  cdcpb::ChangeDataEvent message;
  if (!items_.front().event) {
    *message.mutable_resolved_ts() = std::move(PopFront().resolved);
    return message;
  }
  size_t bytes = 0;
  while (!items_.empty() && items_.front().event &&
         static_cast<size_t>(message.events_size()) < options_.max_events_per_message &&
         (bytes == 0 || bytes + items_.front().bytes <= options_.max_message_bytes)) {
    Item item = PopFront();
    bytes += item.bytes;
    *message.add_events() = std::move(*item.event);
  }
  return message;
}

std::optional<cdcpb::ChangeDataEvent> StreamSink::NextMessage(const CancelToken& token) {
  CancelCallback on_cancel(token, [this] {
    MutexLock lock(&mu_);
    not_empty_.SignalAll();
  });
  MutexLock lock(&mu_);
  while (items_.empty() && !closed_ && !token.cancelled()) not_empty_.Wait(&mu_);
  if (items_.empty() || token.cancelled()) return std::nullopt;
  cdcpb::ChangeDataEvent message = BuildMessage();
  has_space_.SignalAll();
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
