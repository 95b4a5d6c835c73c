#include "sink/storage/storage_worker.h"

#include <fmt/format.h>

#include "common/logging.h"
#include "sink/storage/local_fs.h"
#include "sink/storage/schema_file.h"

namespace sluice::sink::storage {

void SinkShared::Fail(Status st) {
  MutexLock lock(&mu);
  if (status_.ok()) status_ = std::move(st);
}

Status SinkShared::status() const {
  MutexLock lock(&mu);
  return status_;
}

void FlushMarker::Done(Status st) {
  MutexLock lock(&mu_);
  if (status_.ok() && !st.ok()) status_ = std::move(st);
  if (--pending_ <= 0) cv_.SignalAll();
}

Status FlushMarker::Wait() {
  MutexLock lock(&mu_);
  while (pending_ > 0) cv_.Wait(&mu_);
  return status_;
}

StorageWorker::StorageWorker(int id, SinkShared* shared) : id_(id), shared_(shared) {}

StorageWorker::~StorageWorker() { Close(); }

void StorageWorker::Start() {
  thread_.Start(fmt::format("storage-w{}", id_), [this](StopToken) { Run(); });
}

bool StorageWorker::Push(event::DmlEventPtr event) {
  MutexLock lock(&mu_);
  while (!closing_ && queue_.size() >= shared_->options.queue_capacity) not_full_.Wait(&mu_);
  if (closing_) return false;
  queue_.push_back(Task{std::move(event), nullptr});
  cv_.SignalAll();
  return true;
}

void StorageWorker::PushMarker(std::shared_ptr<FlushMarker> marker) {
  MutexLock lock(&mu_);
  if (closing_) {
    marker->Done(Cancelled("storage sink is closing"));
    return;
  }
  queue_.push_back(Task{nullptr, std::move(marker)});
  cv_.SignalAll();
}

void StorageWorker::Close() {
  {
    MutexLock lock(&mu_);
    closing_ = true;
    cv_.SignalAll();
    not_full_.SignalAll();
  }
  thread_.Join();
}

void StorageWorker::Run() {
  Clock* clock = shared_->clock;
  Clock::TimePoint next_flush = clock->Now() + shared_->options.flush_interval;
  while (true) {
    std::deque<Task> batch;
    bool closing = false;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !closing_ && clock->Now() < next_flush) {
        clock->WaitUntil(&cv_, &mu_, next_flush);
      }
      batch.swap(queue_);
      closing = closing_;
      not_full_.SignalAll();
    }
    for (Task& task : batch) Process(task);
    if (clock->Now() >= next_flush) {
      if (shared_->status().ok()) {
        Status st = FlushTables({});
        if (!st.ok()) shared_->Fail(st);
      }
      next_flush = clock->Now() + shared_->options.flush_interval;
    }
    if (closing && batch.empty()) break;
  }
  if (shared_->status().ok()) {
    Status st = FlushTables({});
    if (!st.ok()) shared_->Fail(st);
  }
}

void StorageWorker::Process(Task& task) {
  if (task.marker != nullptr) {
    Status st = shared_->status();
    if (st.ok()) st = FlushTables(task.marker->tables());
    if (!st.ok()) shared_->Fail(st);
    task.marker->Done(st);
    return;
  }
  if (!shared_->status().ok()) return;  // Failed: nothing more is written.
  AddEvent(task.event);
}

void StorageWorker::AddEvent(const event::DmlEventPtr& event) {
  if (event->rows.empty()) {  // Nothing to write: durable as it is.
    event->PostFlush();
    return;
  }
  TableKey key{event->physical_table_id, event->schema->version().value(),
               event->schema->schema_name(), event->schema->table_name()};
  Buffer& buffer = buffers_[key];
  if (buffer.schema == nullptr) {
    buffer.schema = event->schema;
    buffer.is_partition = event->schema->info().partition.has_value();
  }
  if (buffer.data.empty()) buffer.data = shared_->encoder->FileHeader(*event->schema);
  Status st = shared_->encoder->Append(*event, &buffer.data);
  if (!st.ok()) {
    shared_->Fail(st);
    return;
  }
  buffer.events.push_back(event);
  shared_->events_encoded.fetch_add(1);
  if (static_cast<int64_t>(buffer.data.size()) < shared_->options.file_size) return;
  st = FlushTable(key, buffer);
  if (!st.ok()) shared_->Fail(st);
  buffers_.erase(key);
}

Status StorageWorker::FlushTables(const std::set<int64_t>& tables) {
  for (auto it = buffers_.begin(); it != buffers_.end();) {
    if (!tables.empty() && !tables.contains(it->first.physical_table_id)) {
      ++it;
      continue;
    }
    RETURN_IF_ERROR(FlushTable(it->first, it->second));
    it = buffers_.erase(it);
  }
  return Status::Ok();
}

Status StorageWorker::FlushTable(const TableKey& key, Buffer& buffer) {
  if (buffer.events.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(std::optional<uint64_t> version, ResolveVersion(key, buffer));
  if (!version.has_value()) {
    LOG_WARN("storage sink: ignoring {} events of {}.{} at version {}: a newer schema exists",
             buffer.events.size(), key.schema, key.table, key.version);
    for (const auto& e : buffer.events) e->PostFlush();
    return Status::Ok();
  }
  const StorageSinkOptions& o = shared_->options;
  DataDirKey dir_key{key.schema, key.table, *version, 0,
                     DateString(shared_->clock->WallNow(), o.date_separator)};
  if (o.enable_partition_separator && buffer.is_partition) {
    dir_key.partition = key.physical_table_id;
  }
  const std::string dir = DataDir(dir_key);
  ASSIGN_OR_RETURN(uint64_t index, NextIndex(key, dir, dir_key.date));
  const std::string name = DataFileName(index, o.extension(), o.file_index_width);
  RETURN_IF_ERROR(PublishFile(shared_->options.write_permit, Abs(dir + "/" + name), buffer.data));
  RETURN_IF_ERROR(PublishFile(shared_->options.write_permit, Abs(IndexFilePath(dir)), name + "\n"));
  size_t rows = 0;
  for (const auto& e : buffer.events) rows += e->rows.size();
  shared_->files_written.fetch_add(1);
  shared_->rows_written.fetch_add(rows);
  shared_->bytes_written.fetch_add(buffer.data.size());
  for (const auto& e : buffer.events) e->PostFlush();
  return Status::Ok();
}

Result<std::optional<uint64_t>> StorageWorker::ResolveVersion(const TableKey& key,
                                                              const Buffer& buffer) {
  auto cached = versions_.find(key);
  if (cached != versions_.end()) return std::optional<uint64_t>(cached->second);
  SchemaFile file =
      SchemaFile::ForTable(*buffer.schema, key.version, shared_->options.output_column_id);
  const std::string path = Abs(file.Path());
  ASSIGN_OR_RETURN(bool exists, FileExists(path));
  if (exists) {
    versions_[key] = key.version;
    return std::optional<uint64_t>(key.version);
  }
  const uint32_t checksum = file.Checksum();
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries,
                   ListDir(Abs(fmt::format("{}/{}/meta", key.schema, key.table))));
  int schema_files = 0;
  uint64_t last_version = 0;
  bool newer = false;
  for (const DirEntry& e : entries) {
    if (!e.name.starts_with("schema_")) continue;
    ++schema_files;
    auto parsed = ParseSchemaFileName(e.name);
    if (!parsed.has_value() || parsed->second != checksum) continue;
    if (parsed->first > key.version) newer = true;
    last_version = std::max(last_version, parsed->first);
  }
  if (newer) return std::optional<uint64_t>();
  if (schema_files != 0 && last_version != 0) {
    versions_[key] = last_version;
    return std::optional<uint64_t>(last_version);
  }
  RETURN_IF_ERROR(PublishFile(shared_->options.write_permit, path, file.Marshal()));
  versions_[key] = key.version;
  return std::optional<uint64_t>(key.version);
}

Result<uint64_t> StorageWorker::NextIndex(const TableKey& key, const std::string& dir,
                                          const std::string& date) {
  auto it = indices_.find(key);
  if (it == indices_.end()) {
    IndexState state{0, date};
    ASSIGN_OR_RETURN(std::optional<std::string> index_file,
                     ReadFileIfExists(Abs(IndexFilePath(dir))));
    if (index_file.has_value()) {
      std::string name = *index_file;
      if (name.ends_with("\n")) name.pop_back();
      auto parsed = ParseDataFileName(name, shared_->options.extension());
      if (!parsed.has_value()) {
        return Corruption(fmt::format("storage sink: index file of {} names '{}'", dir, name));
      }
      state.index = *parsed;
    }
    it = indices_.emplace(key, state).first;
  } else if (it->second.date != date) {
    it->second = IndexState{0, date};  // A new date directory starts again.
  }
  while (true) {
    uint64_t index = ++it->second.index;
    std::string name =
        DataFileName(index, shared_->options.extension(), shared_->options.file_index_width);
    ASSIGN_OR_RETURN(bool exists, FileExists(Abs(dir + "/" + name)));
    if (!exists) return index;
  }
}

}  // namespace sluice::sink::storage
