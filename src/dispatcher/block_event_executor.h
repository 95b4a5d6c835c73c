// BlockEventExecutor: a small pool of owned threads that runs the slow part
// of block events (writing a DDL downstream, then going on with the events
// held behind it), so that neither the event service's workers nor the
// sink's flush threads ever wait for a DDL (TiCDC's block event executor).
// Shared by the dispatchers of one node. Thread-safe; Stop() joins.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "common/lifecycle.h"
#include "common/queue.h"

namespace sluice::dispatcher {

class BlockEventExecutor {
 public:
  explicit BlockEventExecutor(size_t num_threads = 2, std::string name = "blockexec");
  ~BlockEventExecutor();  // Stop()s.
  BlockEventExecutor(const BlockEventExecutor&) = delete;
  BlockEventExecutor& operator=(const BlockEventExecutor&) = delete;

  // Runs `task` on a pool thread (FIFO order of start). Returns false, and
  // drops the task, after Stop().
  bool Submit(std::function<void()> task);
  // Tasks not started yet are dropped; running ones finish; threads join.
  // Idempotent.
  void Stop();

 private:
  UnboundedMpscQueue<std::function<void()>> queue_;
  ThreadGroup threads_;
};

}  // namespace sluice::dispatcher
