#include "sink/storage/local_fs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

namespace sluice::sink::storage {

namespace {

Status Errno(std::string_view what, const std::string& path, int err) {
  return IoError(fmt::format("{} {}: {}", what, path, std::strerror(err)));
}

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string RandomSuffix() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return fmt::format("{:016x}", rng());
}

Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Errno("fsync directory", dir, err);
  return Status::Ok();
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path, errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  if (::fsync(fd) != 0) return Errno("fsync", path, errno);
  return Status::Ok();
}

}  // namespace

Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("create directory {}: {}", dir, ec.message()));
  return Status::Ok();
}

Status CheckWritable(const std::string& dir) {
  const std::string probe = dir + "/.write-check.tmp." + RandomSuffix();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create", probe, errno);
  ::close(fd);
  if (::unlink(probe.c_str()) != 0) return Errno("remove", probe, errno);
  return Status::Ok();
}

bool IsTempFileName(std::string_view name) { return name.find(".tmp.") != std::string_view::npos; }

Status PublishFile(const std::string& path, std::string_view data) {
  const std::string dir = ParentOf(path);
  RETURN_IF_ERROR(MakeDirs(dir));
  const std::string tmp = path + ".tmp." + RandomSuffix();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create", tmp, errno);
  Status st = WriteAll(fd, data, tmp);
  if (::close(fd) != 0 && st.ok()) st = Errno("close", tmp, errno);
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) st = Errno("rename", tmp, errno);
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  return SyncDir(dir);
}

Result<std::optional<std::string>> ReadFileIfExists(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Errno("open", path, errno);
  }
  std::string out;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return Errno("read", path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return std::optional<std::string>(std::move(out));
}

Result<bool> FileExists(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return Errno("stat", path, errno);
}

Result<std::vector<DirEntry>> ListDir(const std::string& dir) {
  std::vector<DirEntry> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return out;
    return IoError(fmt::format("list {}: {}", dir, ec.message()));
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return IoError(fmt::format("list {}: {}", dir, ec.message()));
    std::error_code type_ec;
    bool is_dir = it->is_directory(type_ec);
    out.push_back({it->path().filename().string(), is_dir});
  }
  if (ec) return IoError(fmt::format("list {}: {}", dir, ec.message()));
  std::sort(out.begin(), out.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return out;
}

Status PublishFile(const WritePermit& permit, const std::string& path, std::string_view data) {
  RETURN_IF_ERROR(CheckWritePermit(permit));
  return PublishFile(path, data);
}

}  // namespace sluice::sink::storage
