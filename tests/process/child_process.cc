#include "process/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

namespace sluice::testing {

ChildProcess::ChildProcess(pid_t pid, int fd, std::string log_path)
    : pid_(pid), fd_(fd), log_path_(std::move(log_path)) {}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(std::vector<std::string> argv,
                                                          std::string log_path) {
  int fds[2];
  if (::pipe(fds) != 0) return IoError("pipe failed");
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return IoError("fork failed");
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::unique_ptr<ChildProcess> child(new ChildProcess(pid, fds[0], std::move(log_path)));
  child->reader_.Start("child-reader", [c = child.get()](const StopToken&) { c->ReadLoop(); });
  return child;
}

ChildProcess::~ChildProcess() {
  if (!status_.has_value()) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  reader_.Join();
  ::close(fd_);
}

void ChildProcess::ReadLoop() {
  std::ofstream log;
  if (!log_path_.empty()) log.open(log_path_, std::ios::app);
  std::string partial;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n <= 0) break;
    partial.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = partial.find('\n')) != std::string::npos) {
      std::string line = partial.substr(0, nl);
      partial.erase(0, nl + 1);
      if (log.is_open()) log << line << "\n" << std::flush;
      MutexLock lock(&mu_);
      lines_.push_back(std::move(line));
      cv_.SignalAll();
    }
  }
  MutexLock lock(&mu_);
  if (!partial.empty()) lines_.push_back(partial);
  eof_ = true;
  cv_.SignalAll();
}

Result<std::string> ChildProcess::WaitForLine(const std::regex& pattern,
                                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  size_t seen = 0;
  while (true) {
    for (; seen < lines_.size(); ++seen) {
      std::smatch m;
      if (std::regex_search(lines_[seen], m, pattern))
        return m.size() > 1 ? m[1].str() : m[0].str();
    }
    if (eof_) return Unavailable("the child exited without printing the line");
    if (cv_.WaitUntil(&mu_, deadline) && seen == lines_.size()) {
      return Timeout("the child did not print the line in time");
    }
  }
}

void ChildProcess::Signal(int signal) { ::kill(pid_, signal); }

Result<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (status_.has_value()) return *status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      status_ = status;
      reader_.Join();
      return status;
    }
    if (std::chrono::steady_clock::now() > deadline) return Timeout("the child is still running");
    // A child process cannot be waited on with a deadline otherwise.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string ChildProcess::Output() const {
  MutexLock lock(&mu_);
  std::string out;
  for (const std::string& l : lines_) out += l + "\n";
  return out;
}

Result<std::pair<int, std::string>> RunProcess(std::vector<std::string> argv,
                                               std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> child, ChildProcess::Start(std::move(argv)));
  ASSIGN_OR_RETURN(int status, child->Wait(timeout));
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return std::make_pair(code, child->Output());
}

}  // namespace sluice::testing
