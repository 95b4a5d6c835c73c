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

void FlushOrderer::Done(DispatcherId dispatcher, uint64_t seq) { Done({Written{dispatcher, seq}}); }

void FlushOrderer::Done(const std::vector<Written>& written) {
  // The lanes this call delivers: those no other thread is delivering.
  std::vector<DispatcherId> mine;
  {
    MutexLock lock(&mu_);
    for (const Written& w : written) {
      auto it = lanes_.find(w.dispatcher);
      if (it == lanes_.end() || w.seq < it->second.first_seq ||
          w.seq - it->second.first_seq >= it->second.entries.size()) {
        continue;  // Abandoned.
      }
      it->second.entries[w.seq - it->second.first_seq].done = true;
      if (it->second.delivering) continue;  // That thread will deliver it.
      it->second.delivering = true;
      mine.push_back(w.dispatcher);
    }
  }
  for (DispatcherId dispatcher : mine) Deliver(dispatcher);
}

void FlushOrderer::Deliver(DispatcherId dispatcher) {
  std::vector<event::DmlEventPtr> ready;
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
