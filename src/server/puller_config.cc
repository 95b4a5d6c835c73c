#include "server/puller_config.h"

#include <fmt/format.h>

#include <charconv>
#include <functional>
#include <limits>

#include "config/replica_config.h"

namespace sluice::server {

namespace {

using Ms = std::chrono::milliseconds;

// Bounds that keep a typo from starving or exhausting the node.
constexpr int64_t kMaxWorkers = 256;
constexpr int64_t kMaxQueue = 1 << 20;
constexpr int64_t kMinQuota = 1 << 20;           // 1 MiB
constexpr int64_t kMaxQuota = int64_t{1} << 40;  // 1 TiB
constexpr Ms kMaxInterval = std::chrono::minutes(10);
constexpr Ms kMaxReconnect = std::chrono::hours(24);

Result<int64_t> ParseInt(std::string_view key, std::string_view text, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument(fmt::format("puller {}: '{}' is not an integer", key, text));
  }
  if (v < min || v > max) {
    return InvalidArgument(fmt::format("puller {}: {} is outside [{}, {}]", key, v, min, max));
  }
  return v;
}

Result<Ms> ParseMs(std::string_view key, std::string_view text, Ms max) {
  Result<std::chrono::nanoseconds> d = config::ParseGoDuration(text);
  if (!d.ok()) {
    return InvalidArgument(
        fmt::format("puller {}: '{}' is not a duration like 100ms or 2s", key, text));
  }
  Ms ms = std::chrono::duration_cast<Ms>(*d);
  if (d->count() < 0 || ms > max) {
    return InvalidArgument(
        fmt::format("puller {}: {} is outside [0s, {}s]", key, text,
                    std::chrono::duration_cast<std::chrono::seconds>(max).count()));
  }
  return ms;
}

struct KeyDef {
  PullerKey key;
  std::function<Status(std::string_view, PullerConfig*)> set;
};

// Integer keys bounded by [min, max] and stored by `store`.
KeyDef IntKey(std::string name, std::string help, int64_t def, int64_t min, int64_t max,
              std::function<void(PullerConfig*, int64_t)> store) {
  std::string key = name;
  return {{std::move(name), std::move(help), std::to_string(def)},
          [key, min, max, store](std::string_view text, PullerConfig* c) -> Status {
            ASSIGN_OR_RETURN(int64_t v, ParseInt(key, text, min, max));
            store(c, v);
            return Status::Ok();
          }};
}

KeyDef MsKey(std::string name, std::string help, Ms def,
             std::function<void(PullerConfig*, Ms)> store, Ms max = kMaxInterval) {
  std::string key = name;
  return {{std::move(name), std::move(help), std::to_string(def.count()) + "ms"},
          [key, store, max](std::string_view text, PullerConfig* c) -> Status {
            ASSIGN_OR_RETURN(Ms v, ParseMs(key, text, max));
            store(c, v);
            return Status::Ok();
          }};
}

const std::vector<KeyDef>& Keys() {
  static const std::vector<KeyDef> keys = [] {
    const PullerConfig d;
    const logpuller::SubscriptionClientOptions& o = d.client;
    std::vector<KeyDef> k;
    k.push_back(IntKey(
        "region-workers", "region worker threads (matcher, region resolved ts); 0: one per core",
        static_cast<int64_t>(o.region_workers), 0, kMaxWorkers,
        [](PullerConfig* c, int64_t v) { c->client.region_workers = static_cast<size_t>(v); }));
    k.push_back(IntKey("region-queue-size", "messages queued per region worker",
                       static_cast<int64_t>(o.region_queue_capacity), 1, kMaxQueue,
                       [](PullerConfig* c, int64_t v) {
                         c->client.region_queue_capacity = static_cast<size_t>(v);
                       }));
    k.push_back(IntKey("streams-per-store", "multiplexed CDC streams per TiKV store",
                       static_cast<int64_t>(o.scheduler.streams_per_store), 1, 64,
                       [](PullerConfig* c, int64_t v) {
                         c->client.scheduler.streams_per_store = static_cast<size_t>(v);
                       }));
    k.push_back(IntKey("scan-window-per-store",
                       "regions requested and not yet initialized, per store",
                       static_cast<int64_t>(o.scheduler.scan_window_per_store), 1, 100000,
                       [](PullerConfig* c, int64_t v) {
                         c->client.scheduler.scan_window_per_store = static_cast<size_t>(v);
                       }));
    k.push_back(IntKey("pipeline-workers", "span pipeline worker threads; 0: one per core",
                       static_cast<int64_t>(o.pipeline.num_workers), 0, kMaxWorkers,
                       [](PullerConfig* c, int64_t v) {
                         c->client.pipeline.num_workers = static_cast<size_t>(v);
                       }));
    k.push_back(IntKey("pipeline-queue-size",
                       "data and resolved messages queued per span pipeline worker",
                       static_cast<int64_t>(o.pipeline.queue_capacity), 1, kMaxQueue,
                       [](PullerConfig* c, int64_t v) {
                         c->client.pipeline.queue_capacity = static_cast<size_t>(v);
                       }));
    k.push_back(IntKey("memory-quota",
                       "bytes of pulled data not yet persisted, over all subscriptions",
                       static_cast<int64_t>(o.pipeline.quota_bytes), kMinQuota, kMaxQuota,
                       [](PullerConfig* c, int64_t v) {
                         c->client.pipeline.quota_bytes = static_cast<uint64_t>(v);
                       }));
    k.push_back(MsKey("advance-interval", "how often a table's resolved ts is recomputed",
                      d.advance_interval, [](PullerConfig* c, Ms v) { c->advance_interval = v; }));
    k.push_back(MsKey(
        "scan-yield-max",
        "longest a new table's initial scan waits for another table's first publish; 0s: never",
        o.scan_yield_max, [](PullerConfig* c, Ms v) { c->client.scan_yield_max = v; }));
    k.push_back(IntKey("max-persist-restarts",
                       "restarts after failed event store writes before a subscription fails",
                       o.max_persist_restarts, 0, 1000, [](PullerConfig* c, int64_t v) {
                         c->client.max_persist_restarts = static_cast<int>(v);
                       }));
    k.push_back(MsKey("resolve-lock-check-interval",
                      "how often spans are checked for a resolved ts stuck behind a lock; 0s: "
                      "never resolve locks",
                      o.resolve_lock_check_interval,
                      [](PullerConfig* c, Ms v) { c->client.resolve_lock_check_interval = v; }));
    k.push_back(MsKey("resolve-lock-after",
                      "how long a span's resolved ts must stand still, and lag PD's clock, "
                      "before its regions' locks are resolved",
                      o.stuck.resolve_lock_after,
                      [](PullerConfig* c, Ms v) { c->client.stuck.resolve_lock_after = v; }));
    k.push_back(MsKey("resolve-lock-interval", "least time between lock resolutions of a region",
                      o.stuck.resolve_lock_interval,
                      [](PullerConfig* c, Ms v) { c->client.stuck.resolve_lock_interval = v; }));
    k.push_back(MsKey(
        "stuck-region-reconnect-after",
        "how long a region's resolved ts may stand still before its subscription reconnects; "
        "0s: never",
        o.stuck.reconnect_after, [](PullerConfig* c, Ms v) { c->client.stuck.reconnect_after = v; },
        kMaxReconnect));
    return k;
  }();
  return keys;
}

}  // namespace

std::vector<PullerKey> PullerKeys() {
  std::vector<PullerKey> out;
  for (const KeyDef& k : Keys()) out.push_back(k.key);
  return out;
}

Status SetPullerKey(std::string_view key, std::string_view value, PullerConfig* config) {
  for (const KeyDef& k : Keys()) {
    if (k.key.name == key) return k.set(value, config);
  }
  return InvalidArgument(fmt::format("unknown puller setting '{}'", key));
}

}  // namespace sluice::server
