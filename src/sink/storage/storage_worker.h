// One writer of the storage sink: a thread that owns the tables hashed to
// it, encodes their DML events into per-table buffers and publishes a data
// file per table when the flush interval passes, when a buffer reaches the
// file size, or when a DDL barrier asks. Internal to StorageSink.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/thread_annotations.h"
#include "sink/codec/txn_encoder.h"
#include "sink/storage/path_layout.h"
#include "sink/storage/storage_options.h"

namespace sluice::sink::storage {

// What the sink shares with its workers. Outlives them.
struct SinkShared {
  StorageSinkOptions options;
  Clock* clock = nullptr;
  std::unique_ptr<codec::TxnEncoder> encoder;

  // The first error (sticky).
  void Fail(Status st) EXCLUDES(mu);
  Status status() const EXCLUDES(mu);

  std::atomic<uint64_t> events_encoded{0};
  std::atomic<uint64_t> files_written{0};
  std::atomic<uint64_t> rows_written{0};
  std::atomic<uint64_t> bytes_written{0};

 private:
  mutable Mutex mu;
  Status status_ GUARDED_BY(mu);
};

// A DDL barrier: done once every worker it was sent to has flushed.
class FlushMarker {
 public:
  FlushMarker(int workers, std::set<int64_t> tables)
      : pending_(workers), tables_(std::move(tables)) {}
  // Physical tables to flush; empty for all.
  const std::set<int64_t>& tables() const { return tables_; }
  void Done(Status st) EXCLUDES(mu_);
  Status Wait() EXCLUDES(mu_);

 private:
  Mutex mu_;
  CondVar cv_;
  int pending_ GUARDED_BY(mu_);
  Status status_ GUARDED_BY(mu_);
  const std::set<int64_t> tables_;
};

class StorageWorker {
 public:
  StorageWorker(int id, SinkShared* shared);
  ~StorageWorker();

  void Start();
  // Queues a DML event; blocks while the queue is full. Returns false (and
  // keeps nothing) once the worker is closing.
  bool Push(event::DmlEventPtr event) EXCLUDES(mu_);
  void PushMarker(std::shared_ptr<FlushMarker> marker) EXCLUDES(mu_);
  // Writes what is queued and buffered (unless the sink failed) and joins.
  void Close() EXCLUDES(mu_);

 private:
  struct Task {
    event::DmlEventPtr event;
    std::shared_ptr<FlushMarker> marker;
  };
  // One output stream: a table (partition) at one schema version.
  struct TableKey {
    int64_t physical_table_id = 0;
    uint64_t version = 0;
    std::string schema;
    std::string table;
    auto operator<=>(const TableKey&) const = default;
  };
  struct Buffer {
    event::TableSchemaPtr schema;
    bool is_partition = false;
    std::string data;
    std::vector<event::DmlEventPtr> events;
  };
  struct IndexState {
    uint64_t index = 0;
    std::string date;
  };

  void Run() EXCLUDES(mu_);
  void Process(Task& task);
  void AddEvent(const event::DmlEventPtr& event);
  Status FlushTables(const std::set<int64_t>& tables);
  Status FlushTable(const TableKey& key, Buffer& buffer);
  // TiCDC's CheckOrWriteSchema: the directory version to write `key` under,
  // writing its schema file if none fits; nullopt when a newer schema file
  // with the same checksum exists (the data is then discarded).
  Result<std::optional<uint64_t>> ResolveVersion(const TableKey& key, const Buffer& buffer);
  Result<uint64_t> NextIndex(const TableKey& key, const std::string& dir, const std::string& date);
  std::string Abs(const std::string& rel) const { return shared_->options.root + "/" + rel; }

  const int id_;
  SinkShared* const shared_;
  OwnedThread thread_;

  Mutex mu_;
  CondVar cv_;        // Work queued or closing.
  CondVar not_full_;  // Room in the queue.
  std::deque<Task> queue_ GUARDED_BY(mu_);
  bool closing_ GUARDED_BY(mu_) = false;

  // Worker thread only.
  std::map<TableKey, Buffer> buffers_;
  std::map<TableKey, uint64_t> versions_;
  std::map<TableKey, IndexState> indices_;
};

}  // namespace sluice::sink::storage
