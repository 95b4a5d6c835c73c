// Local file operations of the storage sink: directories, atomic publish
// of whole files, reads and listings. Every OS failure is an IoError naming
// the path. Publishing writes "<name>.tmp.<random>" in the target's
// directory, fsyncs it, renames it over the target and fsyncs the
// directory, so a reader sees either no file or the whole file (the same
// temp-then-rename scheme as TiDB's local external storage). Free
// functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sink/sink.h"

namespace sluice::sink::storage {

// mkdir -p (0755).
Status MakeDirs(const std::string& dir);

// IoError unless a file can be created in `dir` (tries one and removes it).
Status CheckWritable(const std::string& dir);

// Writes `data` to `path` atomically (see above), creating the parent
// directories first.
Status PublishFile(const std::string& path, std::string_view data);
// PublishFile() after the sink's write permit allows it (sink.h).
Status PublishFile(const WritePermit& permit, const std::string& path, std::string_view data);

// True for the temporary names PublishFile uses ("*.tmp.*").
bool IsTempFileName(std::string_view name);

// nullopt when the file does not exist; IoError for any other failure.
Result<std::optional<std::string>> ReadFileIfExists(const std::string& path);

Result<bool> FileExists(const std::string& path);

struct DirEntry {
  std::string name;
  bool is_dir = false;
};
// The entries of `dir`, sorted by name; empty when `dir` does not exist.
Result<std::vector<DirEntry>> ListDir(const std::string& dir);

}  // namespace sluice::sink::storage
