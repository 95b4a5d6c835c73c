// The subcommands of the `sluice` binary besides `cli` (src/cli). Each
// takes the words after its name and returns the process exit code; bad
// flags print an error naming the flag and return 2, never abort.
#pragma once

#include <string>
#include <vector>

#include "server/server.h"

namespace sluice::app {

inline constexpr const char* kVersion = server::kSluiceVersion;

// `sluice server`: runs one node until SIGTERM or SIGINT, then shuts down
// gracefully (the checkpoint is persisted).
int RunServer(const std::vector<std::string>& args);

// `sluice playground`: simkv in-process, a sluice node, a demo workload with
// DDL and faults, a changefeed created through the CLI to files (or to a
// given MySQL URI), live progress, then the checker's verdict.
int RunPlayground(const std::vector<std::string>& args);

}  // namespace sluice::app
