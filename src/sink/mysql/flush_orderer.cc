#include "sink/mysql/flush_orderer.h"

#include <vector>

namespace sluice::sink {

uint64_t FlushOrderer::Register(const event::DmlEventPtr& event) {
  MutexLock lock(&mu_);
  Lane& lane = lanes_[event->dispatcher_id];
  lane.entries.push_back(Entry{event, false});
  ++pending_;
  return lane.first_seq + lane.entries.size() - 1;
}

void FlushOrderer::Done(DispatcherId dispatcher, uint64_t seq) {
  std::vector<event::DmlEventPtr> ready;
  {
    MutexLock lock(&mu_);
    auto it = lanes_.find(dispatcher);
    if (it == lanes_.end() || seq < it->second.first_seq ||
        seq - it->second.first_seq >= it->second.entries.size()) {
      return;  // Abandoned.
    }
    it->second.entries[seq - it->second.first_seq].done = true;
    if (it->second.delivering) return;  // That thread will deliver it.
    it->second.delivering = true;
  }
  while (true) {
    ready.clear();
    {
      MutexLock lock(&mu_);
      auto it = lanes_.find(dispatcher);
      if (it == lanes_.end()) return;
      Lane& lane = it->second;
      while (!lane.entries.empty() && lane.entries.front().done) {
        ready.push_back(std::move(lane.entries.front().event));
        lane.entries.pop_front();
        ++lane.first_seq;
        --pending_;
      }
      if (ready.empty()) {
        lane.delivering = false;
        if (lane.entries.empty()) lanes_.erase(it);
        return;
      }
    }
    for (const event::DmlEventPtr& e : ready) e->PostFlush();
  }
}

void FlushOrderer::Abandon() {
  MutexLock lock(&mu_);
  lanes_.clear();
  pending_ = 0;
}

size_t FlushOrderer::pending() const {
  MutexLock lock(&mu_);
  return pending_;
}

}  // namespace sluice::sink
