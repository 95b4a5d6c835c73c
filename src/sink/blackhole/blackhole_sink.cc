#include "sink/blackhole/blackhole_sink.h"

namespace sluice::sink {

void BlackholeSink::AddDmlEvent(event::DmlEventPtr event) {
  if (event == nullptr || closed_.load()) return;
  events_.fetch_add(1);
  rows_.fetch_add(event->rows.size());
  bytes_.fetch_add(event->ApproximateBytes());
  event->PostFlush();
}

Status BlackholeSink::WriteBlockEvent(const event::DdlEvent& ddl) {
  if (closed_.load()) return Cancelled("blackhole sink is closed");
  ddls_.fetch_add(1);
  return Status::Ok();
}

void BlackholeSink::AddCheckpointTs(Ts ts) {
  uint64_t prev = checkpoint_.load();
  while (ts.value() > prev && !checkpoint_.compare_exchange_weak(prev, ts.value())) {
  }
}

}  // namespace sluice::sink
