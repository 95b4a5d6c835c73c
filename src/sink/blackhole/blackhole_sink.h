// BlackholeSink (blackhole://): TiCDC's testing sink. It writes nothing,
// counts what it is given and calls PostFlush at once, on the caller's
// thread. Thread-safe: any thread may call any method.
#pragma once

#include <atomic>
#include <cstdint>

#include "sink/sink.h"

namespace sluice::sink {

class BlackholeSink final : public Sink {
 public:
  std::string_view scheme() const override { return "blackhole"; }

  // Counts the event (rows, ApproximateBytes) and calls its PostFlush.
  // Ignored after Close().
  void AddDmlEvent(event::DmlEventPtr event) override;
  Status WriteBlockEvent(const event::DdlEvent& ddl) override;
  void AddCheckpointTs(Ts ts) override;
  Status status() const override { return Status::Ok(); }
  void Close() override { closed_.store(true); }

  uint64_t events() const { return events_.load(); }
  uint64_t rows() const { return rows_.load(); }
  uint64_t bytes() const { return bytes_.load(); }
  uint64_t ddls() const { return ddls_.load(); }
  // The largest checkpoint ts seen (0 before any).
  Ts checkpoint_ts() const { return Ts(checkpoint_.load()); }

 private:
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> events_{0};
  std::atomic<uint64_t> rows_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> ddls_{0};
  std::atomic<uint64_t> checkpoint_{0};
};

}  // namespace sluice::sink
