#include "sink/storage/storage_sink.h"

#include <fmt/format.h>

#include "sink/codec/canal_json_encoder.h"
#include "sink/codec/csv_encoder.h"
#include "sink/storage/local_fs.h"
#include "sink/storage/schema_file.h"

namespace sluice::sink::storage {

namespace {

// TiCDC writes the checkpoint file at most once per 2 seconds.
constexpr std::chrono::seconds kCheckpointInterval(2);

}  // namespace

StorageSink::StorageSink(StorageSinkOptions options, Clock* clock) {
  shared_.options = std::move(options);
  shared_.clock = clock;
  if (shared_.options.protocol == Protocol::kCsv) {
    shared_.encoder = std::make_unique<codec::CsvEncoder>(shared_.options.csv);
  } else {
    shared_.encoder = std::make_unique<codec::CanalJsonEncoder>(shared_.options.canal, clock);
  }
}

Result<std::unique_ptr<StorageSink>> StorageSink::Create(StorageSinkOptions options, Clock* clock) {
  RETURN_IF_ERROR(options.Normalize());
  while (options.root.size() > 1 && options.root.back() == '/') options.root.pop_back();
  RETURN_IF_ERROR(MakeDirs(options.root));
  RETURN_IF_ERROR(CheckWritable(options.root));
  std::unique_ptr<StorageSink> sink(new StorageSink(std::move(options), clock));
  for (int i = 0; i < sink->shared_.options.worker_count; ++i) {
    sink->workers_.push_back(std::make_unique<StorageWorker>(i, &sink->shared_));
    sink->workers_.back()->Start();
  }
  StorageSink* raw = sink.get();
  sink->ckpt_thread_.Start("storage-ckpt", [raw](StopToken) { raw->RunCheckpointWriter(); });
  return sink;
}

StorageSink::~StorageSink() { Close(); }

StorageWorker& StorageSink::WorkerFor(int64_t physical_table_id) {
  return *workers_[static_cast<uint64_t>(physical_table_id) % workers_.size()];
}

void StorageSink::AddDmlEvent(event::DmlEventPtr event) {
  if (event == nullptr || closed_.load() || !shared_.status().ok()) return;
  if (event->schema == nullptr) {
    shared_.Fail(Internal("storage sink: DML event without a schema"));
    return;
  }
  WorkerFor(event->physical_table_id).Push(std::move(event));
}

Status StorageSink::WriteBlockEvent(const event::DdlEvent& ddl) {
  RETURN_IF_ERROR(shared_.status());
  if (closed_.load()) return Cancelled("storage sink is closed");
  std::set<int64_t> tables;
  if (ddl.blocked.influence == event::InfluenceType::kNormal) {
    tables.insert(ddl.blocked.table_ids.begin(), ddl.blocked.table_ids.end());
  }
  auto marker = std::make_shared<FlushMarker>(static_cast<int>(workers_.size()), tables);
  for (auto& w : workers_) w->PushMarker(marker);
  RETURN_IF_ERROR(marker->Wait());
  SchemaFile file = SchemaFile::ForDdl(ddl, shared_.options.output_column_id);
  if (file.schema.empty()) return Status::Ok();  // Nothing to name (e.g. a placement policy).
  Status st = PublishFile(shared_.options.write_permit, shared_.options.root + "/" + file.Path(),
                          file.Marshal());
  if (!st.ok()) shared_.Fail(st);
  return st;
}

void StorageSink::AddCheckpointTs(Ts ts) {
  MutexLock lock(&ckpt_mu_);
  if (ts.value() > ckpt_pending_) {
    ckpt_pending_ = ts.value();
    ckpt_cv_.SignalAll();
  }
}

void StorageSink::RunCheckpointWriter() {
  Clock* clock = shared_.clock;
  Clock::TimePoint last_write = clock->Now();
  uint64_t written = 0;
  while (true) {
    uint64_t ts = 0;
    {
      MutexLock lock(&ckpt_mu_);
      while (!ckpt_closing_) {
        if (ckpt_pending_ <= written) {
          ckpt_cv_.Wait(&ckpt_mu_);
        } else if (clock->Now() < last_write + kCheckpointInterval) {
          clock->WaitUntil(&ckpt_cv_, &ckpt_mu_, last_write + kCheckpointInterval);
        } else {
          break;
        }
      }
      // Closing: the newest checkpoint is written once more, unthrottled.
      if (ckpt_closing_ && ckpt_pending_ <= written) return;
      ts = ckpt_pending_;
    }
    if (!shared_.status().ok()) return;
    Status st = PublishFile(shared_.options.write_permit, shared_.options.root + "/metadata",
                            fmt::format("{{\"checkpoint-ts\":{}}}", ts));
    if (!st.ok()) {
      shared_.Fail(st);
      return;
    }
    written = ts;
    last_write = clock->Now();
  }
}

void StorageSink::Close() {
  if (closed_.exchange(true)) return;
  for (auto& w : workers_) w->Close();
  {
    MutexLock lock(&ckpt_mu_);
    ckpt_closing_ = true;
    ckpt_cv_.SignalAll();
  }
  ckpt_thread_.Join();
}

StorageSink::Stats StorageSink::stats() const {
  Stats s;
  s.events_encoded = shared_.events_encoded.load();
  s.files_written = shared_.files_written.load();
  s.rows_written = shared_.rows_written.load();
  s.bytes_written = shared_.bytes_written.load();
  return s;
}

}  // namespace sluice::sink::storage
