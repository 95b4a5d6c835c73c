// Sink: where a changefeed's ordered events end up (MySQL/TiDB, files,
// blackhole; Kafka later). One sink per (changefeed, node), shared by all of
// that node's dispatchers of the changefeed.
//
// Contract (TiCDC's sink interface):
// - AddDmlEvent queues a transaction (or a piece of one); it may block while
//   the sink's buffers are full (back-pressure), never drops. The sink calls
//   event->PostFlush() exactly once, from one of its own threads, after every
//   row is durably written downstream. Events of one dispatcher are written
//   in the order they were added; events of different dispatchers may
//   interleave, but two transactions touching the same row keep their order.
// - WriteBlockEvent writes a DDL synchronously. The caller guarantees that
//   every earlier DML event of the tables it blocks has been flushed.
// - AddCheckpointTs tells the sink the changefeed checkpoint (resolved marks
//   for formats that carry them; safe-mode exit for MySQL).
// - status() is the first error the sink met (sticky); once it is not OK the
//   sink accepts nothing more and the changefeed restarts it from its
//   checkpoint (retryable codes) or fails (fatal codes).
// Thread-safe: any thread may call any method; Close() is called once, last.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/strong_id.h"
#include "event/events.h"

namespace sluice::sink {

class Sink {
 public:
  virtual ~Sink() = default;

  // "mysql", "file", "blackhole", ...
  virtual std::string_view scheme() const = 0;

  virtual void AddDmlEvent(event::DmlEventPtr event) = 0;
  virtual Status WriteBlockEvent(const event::DdlEvent& ddl) = 0;
  virtual void AddCheckpointTs(Ts ts) = 0;
  virtual Status status() const = 0;

  // Stops the sink's threads after writing what is queued (or abandoning it
  // when the sink is failed). PostFlush is never called after Close returns.
  virtual void Close() = 0;
};

}  // namespace sluice::sink
