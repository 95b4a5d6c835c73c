// Crash safety: a child process commits a known sequence of transactions
// and reports each commit through a pipe; the parent kills it with SIGKILL
// at a random point and checks that the reopened store holds exactly a
// prefix of the sequence that includes every reported commit.
//
// The child is this test binary re-executed (fork + exec), so that it starts
// with no threads inherited from earlier tests.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include "meta/embedded_store.h"

namespace sluice::meta {
namespace {

constexpr const char* kDirEnv = "SLUICE_META_CRASH_DIR";
constexpr const char* kFdEnv = "SLUICE_META_CRASH_FD";
constexpr int kMaxWrites = 100000;

std::string Key(uint64_t i) { return fmt::format("k/{}", i % 13); }
std::string Value(uint64_t i) { return fmt::format("v{}", i); }

// Write i: if counter == i, set counter = i + 1 and Key(i) = Value(i); every
// seventh write also deletes another key. One revision per write.
TxnRequest Write(uint64_t i) {
  TxnRequest txn;
  txn.compares = {i == 0 ? Compare::Absent("counter")
                         : Compare::ValueIs("counter", std::to_string(i))};
  txn.success = {TxnOp::Put("counter", std::to_string(i + 1)), TxnOp::Put(Key(i), Value(i))};
  if (i % 7 == 6 && Key(i + 5) != Key(i)) txn.success.push_back(TxnOp::Delete(Key(i + 5)));
  return txn;
}

// The state after the first `n` writes, like the store would hold it.
std::map<std::string, std::string> Model(uint64_t n) {
  std::map<std::string, std::string> kv;
  for (uint64_t i = 0; i < n; ++i) {
    kv["counter"] = std::to_string(i + 1);
    kv[Key(i)] = Value(i);
    if (i % 7 == 6 && Key(i + 5) != Key(i)) kv.erase(Key(i + 5));
  }
  return kv;
}

bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Runs only in the re-executed child.
TEST(MetaCrashTest, DISABLED_ChildWriter) {
  const char* dir = std::getenv(kDirEnv);
  const char* fd_text = std::getenv(kFdEnv);
  if (dir == nullptr || fd_text == nullptr) GTEST_SKIP() << "child of MetaCrashTest only";
  const int fd = std::atoi(fd_text);
  EmbeddedStoreOptions options;
  options.dir = dir;
  Result<std::unique_ptr<EmbeddedMetaStore>> store = EmbeddedMetaStore::Open(options);
  if (!store.ok()) _exit(2);
  // Resume after what an earlier child committed.
  uint64_t i = 0;
  if (Result<std::optional<KeyValue>> c = (*store)->Get("counter"); c.ok() && c->has_value()) {
    i = std::stoull((*c)->value);
  }
  for (; i < kMaxWrites; ++i) {
    Result<TxnResponse> resp = (*store)->Txn(Write(i));
    if (!resp.ok() || !resp->succeeded) _exit(3);
    if (!WriteAll(fd, &i, sizeof(i))) _exit(4);  // Reported only after the commit.
  }
  _exit(0);
}

// Starts the child writer on `dir`; returns its pid and the read end.
pid_t StartChild(const std::string& dir, int* read_fd) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  const std::string dir_env = std::string(kDirEnv) + "=" + dir;
  const std::string fd_env = std::string(kFdEnv) + "=" + std::to_string(fds[1]);
  std::vector<const char*> argv = {self.c_str(), "--gtest_also_run_disabled_tests",
                                   "--gtest_filter=MetaCrashTest.DISABLED_ChildWriter", nullptr};
  std::vector<const char*> envp = {dir_env.c_str(), fd_env.c_str(), nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::execve(self.c_str(), const_cast<char* const*>(argv.data()),
             const_cast<char* const*>(envp.data()));
    _exit(5);
  }
  ::close(fds[1]);
  *read_fd = fds[0];
  return pid;
}

// Reads reports until `stop_after` arrived (or EOF); returns the number read
// and the last write index reported.
size_t ReadReports(int fd, size_t stop_after, int64_t* last) {
  size_t got = 0;
  uint64_t i = 0;
  while (got < stop_after) {
    size_t have = 0;
    while (have < sizeof(i)) {
      ssize_t r = ::read(fd, reinterpret_cast<char*>(&i) + have, sizeof(i) - have);
      if (r <= 0) return got;
      have += static_cast<size_t>(r);
    }
    *last = static_cast<int64_t>(i);
    ++got;
  }
  return got;
}

TEST(MetaCrashTest, KillAtRandomPointsKeepsACommittedPrefix) {
  const std::string dir = ::testing::TempDir() + "/meta_crash";
  std::filesystem::remove_all(dir);
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  int64_t last_reported = -1;
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    int fd = -1;
    const pid_t pid = StartChild(dir, &fd);
    ASSERT_GT(pid, 0);
    const size_t kill_after = 1 + rng() % 80;
    const size_t got = ReadReports(fd, kill_after, &last_reported);
    ::kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
    ReadReports(fd, SIZE_MAX, &last_reported);  // Reports written before the kill.
    ::close(fd);
    ASSERT_EQ(got, kill_after) << "child ended early, status " << wstatus;
    ASSERT_TRUE(WIFSIGNALED(wstatus));

    EmbeddedStoreOptions options;
    options.dir = dir;
    Result<std::unique_ptr<EmbeddedMetaStore>> store = EmbeddedMetaStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const Revision revision = *(*store)->CurrentRevision();
    // Every reported write is there; at most the one in flight beyond it.
    const int64_t committed = revision;  // One revision per write.
    EXPECT_GE(committed, last_reported + 1);
    EXPECT_LE(committed, last_reported + 2);
    std::map<std::string, std::string> actual;
    Result<RangeResult> all = (*store)->GetPrefix("");
    ASSERT_TRUE(all.ok());
    for (const KeyValue& kv : all->kvs) {
      actual[kv.key] = kv.value;
      EXPECT_LE(kv.mod_revision, revision);
    }
    EXPECT_EQ(actual, Model(static_cast<uint64_t>(committed)));
    // The watch history is complete up to the last commit.
    Result<std::unique_ptr<WatchCursor>> cursor = (*store)->Watch("counter", 1);
    ASSERT_TRUE(cursor.ok());
    EXPECT_EQ((*cursor)->Poll()->size(), static_cast<size_t>(committed));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice::meta
