// FaultFileSystem: a RocksDB file system for tests that passes everything to
// the default one and, while armed, fails the writes and syncs of table
// files (*.sst) opened for writing, as a failing data disk would. A memtable
// flush or a compaction then fails and RocksDB refuses writes. A full disk
// (Fault::kNoSpace) is a hard error: DB::Resume() clears it once the file
// system is disarmed. Any other I/O error (Fault::kIoError) is fatal to the
// RocksDB instance: it refuses writes until reopened. The approach of
// RocksDB's own fault injection file system, reduced to what the event
// store's tests need.
//
// Thread-safe: Arm()/Disarm() from any thread while RocksDB's threads write.
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace sluice::eventstore::testing {

class FaultFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  FaultFileSystem();
  const char* Name() const override { return "SluiceFaultFileSystem"; }

  enum class Fault { kNoSpace, kIoError };

  void Arm(Fault fault = Fault::kNoSpace) {
    fault_.store(fault);
    armed_.store(true);
  }
  void Disarm() { armed_.store(false); }
  bool armed() const { return armed_.load(); }
  // Operations failed so far.
  uint64_t failures() const { return failures_.load(); }

  // An Env over this file system, for rocksdb::Options::env. It shares
  // ownership of the file system.
  static std::shared_ptr<rocksdb::Env> NewEnv(std::shared_ptr<FaultFileSystem> fs);

  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override;

  // Called by the files: the error to return, or OK while disarmed.
  rocksdb::IOStatus Check(const char* op);

 private:
  std::atomic<bool> armed_{false};
  std::atomic<Fault> fault_{Fault::kNoSpace};
  std::atomic<uint64_t> failures_{0};
};

}  // namespace sluice::eventstore::testing
