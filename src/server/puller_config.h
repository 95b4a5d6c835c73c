// The log puller's settings on one node: the `[puller]` section of the
// server's TOML file and the matching `--puller-*` flags of `sluice server`.
// One table of keys serves both, the help text and the README; every value
// is validated, and the defaults are the puller's own.
//
// Thread-compatible: values, filled once before the server starts.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "logpuller/subscription_client.h"

namespace sluice::server {

struct PullerConfig {
  logpuller::SubscriptionClientOptions client;
  // How often a table's span resolved ts is recomputed (the event store's
  // subscriptions; the schema store's DDL span always publishes at once).
  std::chrono::milliseconds advance_interval{100};
};

// One setting: its name (the TOML key in [puller]; the flag is
// --puller-<name>), what it sets, and its default as text.
struct PullerKey {
  std::string name;
  std::string help;
  std::string default_value;
};

// Every key, in the order --help and the README list them.
std::vector<PullerKey> PullerKeys();

// Sets `key` from its text form (integers in decimal, durations as "100ms",
// "2s"). kInvalidArgument naming the key for an unknown key, a malformed
// value or one out of range.
Status SetPullerKey(std::string_view key, std::string_view value, PullerConfig* config);

}  // namespace sluice::server
