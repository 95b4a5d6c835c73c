#include "dispatcher/block_event_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace sluice::dispatcher {

BlockEventExecutor::BlockEventExecutor(size_t num_threads, std::string name) {
  num_threads = std::max<size_t>(num_threads, 1);
  for (size_t i = 0; i < num_threads; ++i) {
    threads_.Start(fmt::format("{}-{}", name, i), [this](StopToken token) {
      for (;;) {
        std::optional<std::function<void()>> task = queue_.Pop(token);
        if (!task.has_value() || token.cancelled()) return;
        (*task)();
      }
    });
  }
}

BlockEventExecutor::~BlockEventExecutor() { Stop(); }

bool BlockEventExecutor::Submit(std::function<void()> task) { return queue_.Push(std::move(task)); }

void BlockEventExecutor::Stop() {
  threads_.RequestStop();
  queue_.Close();
  threads_.Join();
  // Tasks that never started are dropped here, on the caller's thread.
  while (queue_.TryPop().has_value()) {
  }
}

}  // namespace sluice::dispatcher
