// StorageSink (file://): TiCDC's cloud storage sink on a local directory.
// DML goes to data files in TiCDC's layout (path_layout.h) in the csv or
// canal-json protocol, one file per table per flush; every table version
// has its schema file (schema_file.h); DDLs write schema files; the
// checkpoint goes to "<root>/metadata" as {"checkpoint-ts":N} (at most
// every 2 s, and once more on Close).
//
// Threads: `worker_count` writers (tables are hashed to them by physical
// table id, so one table's events keep their order) and one checkpoint
// writer, all owned and joined by Close(). A writer publishes a table's
// buffered events when the flush interval (read from the Clock) passes,
// when the buffer reaches file-size, or when a DDL asks; an event's
// PostFlush runs on that writer after its data file and the CDC.index are
// published. Files are published atomically (local_fs.h). The first error
// (IoError for the disk) is sticky: nothing more is written or flushed.
// Thread-safe per the Sink contract.
#pragma once

#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "sink/sink.h"
#include "sink/storage/storage_options.h"
#include "sink/storage/storage_worker.h"

namespace sluice::sink::storage {

class StorageSink final : public Sink {
 public:
  // Creates the root directory, checks it is writable and starts the
  // threads. InvalidArgument for bad options, IoError for a root that
  // cannot be created or written. `clock` must outlive the sink.
  static Result<std::unique_ptr<StorageSink>> Create(StorageSinkOptions options, Clock* clock);
  ~StorageSink() override;

  std::string_view scheme() const override { return "file"; }
  void AddDmlEvent(event::DmlEventPtr event) override;
  // Flushes the buffered DML of the tables the DDL blocks (all tables for
  // database- and cluster-wide DDLs), then writes its schema file.
  Status WriteBlockEvent(const event::DdlEvent& ddl) override;
  void AddCheckpointTs(Ts ts) override;
  Status status() const override { return shared_.status(); }
  void Close() override;

  struct Stats {
    uint64_t events_encoded = 0;  // DML events in a buffer or written.
    uint64_t files_written = 0;   // Data files published.
    uint64_t rows_written = 0;
    uint64_t bytes_written = 0;
  };
  Stats stats() const;
  const StorageSinkOptions& options() const { return shared_.options; }

 private:
  explicit StorageSink(StorageSinkOptions options, Clock* clock);
  void RunCheckpointWriter() EXCLUDES(ckpt_mu_);
  StorageWorker& WorkerFor(int64_t physical_table_id);

  SinkShared shared_;
  std::vector<std::unique_ptr<StorageWorker>> workers_;
  std::atomic<bool> closed_{false};

  Mutex ckpt_mu_;
  CondVar ckpt_cv_;
  uint64_t ckpt_pending_ GUARDED_BY(ckpt_mu_) = 0;
  bool ckpt_closing_ GUARDED_BY(ckpt_mu_) = false;
  OwnedThread ckpt_thread_;
};

}  // namespace sluice::sink::storage
