// RunCli: TiCDC's `cdc cli` for Sluice (`sluice cli ...`).
//
// Commands (flags as TiCDC's):
//   changefeed create --sink-uri URI [-c ID] [--start-ts] [--target-ts]
//                     [--config FILE] [--no-confirm]
//   changefeed list [-a/--all]
//   changefeed query -c ID [-s/--simple]
//   changefeed pause -c ID
//   changefeed resume -c ID [--overwrite-checkpoint-ts now|TS] [--no-confirm]
//   changefeed remove -c ID
//   changefeed update -c ID [--sink-uri] [--target-ts] [--config] [--no-confirm]
//   capture list
//   tso query [--pd ADDRS]
// with, anywhere on the line, --server (default http://127.0.0.1:8300),
// --pd (default http://127.0.0.1:2379), --log-level, and for the changefeed
// commands -n/--namespace (default "default").
//
// Promises: never throws (parse errors, HTTP and JSON failures are caught);
// returns 0 on success and 1 on any error, after printing "Error: <message>"
// to `err`; `--help` prints help to `out` and returns 0. The sink URI and the
// config file are checked before any request is sent. Server errors are
// printed as "Error: [CDC:ErrXxx]message". Command output goes to `out`.
//
// Thread-safe: each call is independent; it blocks on its own requests.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sluice::cli {

// `args` are the words after `cli` (e.g. {"changefeed", "list"}).
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
