// ChildProcess: a program run by a test (fork + exec), its stdout and
// stderr captured line by line by a reader thread, so a test can wait
// (bounded) for a line, send a signal and collect the exit status.
//
// Threads: the owning test thread calls every method; the reader thread is
// owned and joined by Wait() / the destructor (which SIGKILLs a child that
// is still running).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "common/lifecycle.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace sluice::testing {

class ChildProcess {
 public:
  // Starts `argv[0]` with `argv`; every output line is also appended to
  // `log_path` if it is not empty.
  static Result<std::unique_ptr<ChildProcess>> Start(std::vector<std::string> argv,
                                                     std::string log_path = "");
  ~ChildProcess();

  // The first submatch of the first output line (from the start) that
  // matches `pattern`; Timeout after `timeout`; Unavailable if the child
  // exits first without printing it.
  Result<std::string> WaitForLine(const std::regex& pattern, std::chrono::milliseconds timeout)
      EXCLUDES(mu_);
  void Signal(int signal);
  // Waits (bounded) for the child to exit and returns its wait status;
  // Timeout (the child is left running) after `timeout`.
  Result<int> Wait(std::chrono::milliseconds timeout);
  std::string Output() const EXCLUDES(mu_);
  pid_t pid() const { return pid_; }

 private:
  ChildProcess(pid_t pid, int fd, std::string log_path);
  void ReadLoop();

  const pid_t pid_;
  const int fd_;
  const std::string log_path_;
  std::optional<int> status_;
  mutable Mutex mu_;
  CondVar cv_;
  std::vector<std::string> lines_ GUARDED_BY(mu_);
  bool eof_ GUARDED_BY(mu_) = false;
  OwnedThread reader_;
};

// Runs `argv` to completion (bounded by `timeout`) and returns (exit code,
// output).
Result<std::pair<int, std::string>> RunProcess(std::vector<std::string> argv,
                                               std::chrono::milliseconds timeout);

}  // namespace sluice::testing
