// CapturingSubscriber: a SpanSubscriber for tests and benchmarks that drive
// a consumer side (the event store) by hand. It opens no subscription; it
// keeps the consumer of the latest Subscribe() so the caller can hand it
// batches and resolved ts itself. Thread-safe.
#pragma once

#include <memory>

#include "common/thread_annotations.h"
#include "logpuller/consumer.h"

namespace sluice::logpuller::testing {

class CapturingSubscriber final : public SpanSubscriber {
 public:
  Result<SubscriptionId> Subscribe(const Span&, Ts, std::shared_ptr<KvConsumer> consumer,
                                   const SubscribeOptions&) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    consumer_ = std::move(consumer);
    return SubscriptionId(++subscriptions_);
  }
  void Unsubscribe(SubscriptionId) override {}

  // The consumer of the latest subscription; null before any.
  std::shared_ptr<KvConsumer> consumer() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return consumer_;
  }

 private:
  Mutex mu_;
  std::shared_ptr<KvConsumer> consumer_ GUARDED_BY(mu_);
  uint64_t subscriptions_ GUARDED_BY(mu_) = 0;
};

}  // namespace sluice::logpuller::testing
