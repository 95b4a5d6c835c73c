#include "common/lifecycle.h"

#include <pthread.h>

#include <cassert>
#include <utility>

namespace sluice {
namespace {

// Linux limits thread names to 15 bytes plus the terminator.
constexpr size_t kMaxThreadNameLength = 15;

std::thread Spawn(std::string name, ThreadBody body, StopToken token) {
  return std::thread([name = std::move(name), body = std::move(body), token = std::move(token)] {
    std::string short_name = name.substr(0, kMaxThreadNameLength);
    pthread_setname_np(pthread_self(), short_name.c_str());
    body(token);
  });
}

void JoinThread(std::thread* thread) {
  if (!thread->joinable()) return;
  assert(thread->get_id() != std::this_thread::get_id() && "a thread cannot join itself");
  thread->join();
}

}  // namespace

std::string CurrentThreadName() {
  char buf[kMaxThreadNameLength + 1] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof(buf)) != 0) return "";
  return buf;
}

OwnedThread::~OwnedThread() { Stop(); }

void OwnedThread::Start(std::string name, ThreadBody body) {
  MutexLock lock(&mu_);
  assert(!started_ && "OwnedThread started twice");
  if (started_) return;
  started_ = true;
  thread_ = Spawn(std::move(name), std::move(body), source_.token());
}

void OwnedThread::Join() {
  MutexLock join_lock(&join_mu_);
  std::thread thread;
  {
    MutexLock lock(&mu_);
    if (!started_ || joined_) return;
    thread = std::move(thread_);
  }
  JoinThread(&thread);
  MutexLock lock(&mu_);
  joined_ = true;
}

bool OwnedThread::joinable() const {
  MutexLock lock(&mu_);
  return started_ && !joined_;
}

ThreadGroup::~ThreadGroup() { Stop(); }

void ThreadGroup::Start(std::string name, ThreadBody body) {
  MutexLock lock(&mu_);
  assert(!joined_ && "ThreadGroup::Start after Join");
  if (joined_) return;
  threads_.push_back(Spawn(std::move(name), std::move(body), source_.token()));
  ++started_;
}

void ThreadGroup::Join() {
  MutexLock join_lock(&join_mu_);
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    joined_ = true;
    threads.swap(threads_);
  }
  for (std::thread& t : threads) JoinThread(&t);
}

size_t ThreadGroup::size() const {
  MutexLock lock(&mu_);
  return started_;
}

}  // namespace sluice
