#include "eventstore/fault_file_system.h"

#include <utility>

namespace sluice::eventstore::testing {

namespace {

bool IsTableFile(const std::string& name) {
  constexpr std::string_view kSuffix = ".sst";
  return name.size() >= kSuffix.size() &&
         name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

// A table file whose writes fail while the file system is armed.
class FaultWritableFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultWritableFile(std::unique_ptr<rocksdb::FSWritableFile> file, FaultFileSystem* fs)
      : FSWritableFileOwnerWrapper(std::move(file)), fs_(fs) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus st = fs_->Check("append");
    return st.ok() ? FSWritableFileOwnerWrapper::Append(data, options, dbg) : st;
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus st = fs_->Check("append");
    return st.ok() ? FSWritableFileOwnerWrapper::Append(data, options, info, dbg) : st;
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus st = fs_->Check("sync");
    return st.ok() ? FSWritableFileOwnerWrapper::Sync(options, dbg) : st;
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus st = fs_->Check("fsync");
    return st.ok() ? FSWritableFileOwnerWrapper::Fsync(options, dbg) : st;
  }

 private:
  FaultFileSystem* const fs_;
};

}  // namespace

FaultFileSystem::FaultFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}

std::shared_ptr<rocksdb::Env> FaultFileSystem::NewEnv(std::shared_ptr<FaultFileSystem> fs) {
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  return std::shared_ptr<rocksdb::Env>(env.release());
}

rocksdb::IOStatus FaultFileSystem::NewWritableFile(const std::string& fname,
                                                   const rocksdb::FileOptions& options,
                                                   std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                   rocksdb::IODebugContext* dbg) {
  rocksdb::IOStatus st = target()->NewWritableFile(fname, options, result, dbg);
  if (st.ok() && IsTableFile(fname)) {
    *result = std::make_unique<FaultWritableFile>(std::move(*result), this);
  }
  return st;
}

rocksdb::IOStatus FaultFileSystem::Check(const char* op) {
  if (!armed_.load()) return rocksdb::IOStatus::OK();
  failures_.fetch_add(1);
  const std::string what = std::string("injected fault: table file ") + op + " failed";
  return fault_.load() == Fault::kNoSpace ? rocksdb::IOStatus::NoSpace(what)
                                          : rocksdb::IOStatus::IOError(what);
}

}  // namespace sluice::eventstore::testing
