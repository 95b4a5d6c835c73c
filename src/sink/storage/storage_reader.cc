#include "sink/storage/storage_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <tuple>

#include "codec/model/go_json.h"
#include "sink/codec/canal_json_decoder.h"
#include "sink/codec/csv_decoder.h"
#include "sink/storage/local_fs.h"
#include "sink/storage/path_layout.h"

namespace sluice::sink::storage {

namespace {

struct DataFile {
  uint64_t version = 0;
  int64_t partition = 0;
  std::string date;
  uint64_t index = 0;
  std::string rel;  // Relative to the root.
  auto key() const { return std::tie(version, partition, date, index); }
};

std::optional<uint64_t> ParseUint(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

class Reader {
 public:
  Reader(std::string root, const ReaderOptions& options)
      : root_(std::move(root)), options_(options) {}

  Result<StorageContents> Read() {
    StorageContents out;
    ASSIGN_OR_RETURN(auto metadata, ReadFileIfExists(root_ + "/metadata"));
    if (metadata.has_value()) {
      auto doc = model::ParseJsonDocument(*metadata);
      if (doc.ok() && doc->contains("checkpoint-ts") &&
          (*doc)["checkpoint-ts"].is_number_unsigned()) {
        out.checkpoint_ts = (*doc)["checkpoint-ts"].get<uint64_t>();
      }
    }
    ASSIGN_OR_RETURN(std::vector<DirEntry> schemas, ListDir(root_));
    for (const DirEntry& s : schemas) {
      if (!s.is_dir || IsTempFileName(s.name)) continue;
      RETURN_IF_ERROR(ReadSchemaFiles(s.name + "/meta", &out.schema_files, nullptr));
      ASSIGN_OR_RETURN(std::vector<DirEntry> tables, ListDir(root_ + "/" + s.name));
      for (const DirEntry& t : tables) {
        if (!t.is_dir || t.name == "meta" || IsTempFileName(t.name)) continue;
        TableData table;
        table.schema = s.name;
        table.table = t.name;
        RETURN_IF_ERROR(ReadTable(&table, &out.schema_files));
        out.tables.push_back(std::move(table));
      }
    }
    std::stable_sort(
        out.schema_files.begin(), out.schema_files.end(),
        [](const SchemaFile& a, const SchemaFile& b) { return a.table_version < b.table_version; });
    return out;
  }

 private:
  Status ReadSchemaFiles(const std::string& rel_dir, std::vector<SchemaFile>* all,
                         std::map<uint64_t, SchemaFile>* by_version) {
    ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDir(root_ + "/" + rel_dir));
    for (const DirEntry& e : entries) {
      if (e.is_dir || !ParseSchemaFileName(e.name).has_value()) continue;
      const std::string rel = rel_dir + "/" + e.name;
      ASSIGN_OR_RETURN(auto text, ReadFileIfExists(root_ + "/" + rel));
      if (!text.has_value()) continue;
      Result<SchemaFile> file = SchemaFile::Parse(*text);
      if (!file.ok()) return file.status().WithContext(rel);
      if (by_version != nullptr) (*by_version)[file->table_version] = *file;
      all->push_back(std::move(file).value());
    }
    return Status::Ok();
  }

  // Collects the data files under `rel` (a version directory or below);
  // `levels` are the directory names between the version and `rel`.
  Status CollectDataFiles(const std::string& rel, uint64_t version, std::vector<std::string> levels,
                          std::vector<DataFile>* out) {
    ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDir(root_ + "/" + rel));
    for (const DirEntry& e : entries) {
      if (IsTempFileName(e.name) || e.name == "meta") continue;
      if (e.is_dir) {
        if (levels.size() >= 2) continue;
        std::vector<std::string> next = levels;
        next.push_back(e.name);
        RETURN_IF_ERROR(CollectDataFiles(rel + "/" + e.name, version, std::move(next), out));
        continue;
      }
      std::optional<uint64_t> index = ParseDataFileName(e.name, Extension());
      if (!index.has_value()) continue;
      DataFile f;
      f.version = version;
      f.index = *index;
      f.rel = rel + "/" + e.name;
      if (levels.size() == 2) {
        f.partition = static_cast<int64_t>(ParseUint(levels[0]).value_or(0));
        f.date = levels[1];
      } else if (levels.size() == 1) {
        if (IsDateDir(levels[0], options_.date_separator)) {
          f.date = levels[0];
        } else {
          f.partition = static_cast<int64_t>(ParseUint(levels[0]).value_or(0));
        }
      }
      out->push_back(std::move(f));
    }
    return Status::Ok();
  }

  std::string_view Extension() const {
    return options_.protocol == Protocol::kCsv ? ".csv" : ".json";
  }

  Status ReadTable(TableData* table, std::vector<SchemaFile>* all) {
    const std::string base = table->schema + "/" + table->table;
    RETURN_IF_ERROR(ReadSchemaFiles(base + "/meta", all, &table->versions));
    ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDir(root_ + "/" + base));
    std::vector<DataFile> files;
    for (const DirEntry& e : entries) {
      std::optional<uint64_t> version = ParseUint(e.name);
      if (!e.is_dir || !version.has_value()) continue;
      RETURN_IF_ERROR(CollectDataFiles(base + "/" + e.name, *version, {}, &files));
    }
    std::sort(files.begin(), files.end(),
              [](const DataFile& a, const DataFile& b) { return a.key() < b.key(); });
    bool all_have_ts = true;
    for (const DataFile& f : files) {
      auto schema = table->versions.find(f.version);
      if (schema == table->versions.end()) {
        return Corruption(fmt::format("{}: no schema file for table version {}", f.rel, f.version));
      }
      Result<std::vector<codec::DecodedRow>> rows = Decode(f, schema->second);
      if (!rows.ok()) return rows.status().WithContext(f.rel);
      for (codec::DecodedRow& row : *rows) {
        Normalize(schema->second, &row);
        all_have_ts = all_have_ts && row.commit_ts != 0;
        table->rows.push_back({f.version, f.partition, f.rel, std::move(row)});
      }
    }
    if (all_have_ts) {
      std::stable_sort(
          table->rows.begin(), table->rows.end(),
          [](const ReadRow& a, const ReadRow& b) { return a.row.commit_ts < b.row.commit_ts; });
    }
    return Status::Ok();
  }

  Result<std::vector<codec::DecodedRow>> Decode(const DataFile& f, const SchemaFile& schema) {
    ASSIGN_OR_RETURN(auto data, ReadFileIfExists(root_ + "/" + f.rel));
    if (!data.has_value()) return std::vector<codec::DecodedRow>();
    if (options_.protocol == Protocol::kCanalJson) {
      return codec::DecodeCanalJsonRows(*data, options_.terminator);
    }
    std::vector<codec::CsvColumn> columns;
    for (const SchemaColumn& c : schema.columns) columns.push_back({c.name, c.IsBinary()});
    return codec::DecodeCsv(*data, options_.csv, columns);
  }

  // canal-json writes ENUM as its index and SET as its bit mask; both
  // protocols read back member names.
  void Normalize(const SchemaFile& schema, codec::DecodedRow* row) const {
    if (options_.protocol != Protocol::kCanalJson) return;
    for (auto* image : {&row->columns, &row->old_columns}) {
      for (codec::DecodedColumn& col : *image) {
        if (!col.value.has_value()) continue;
        auto def = std::find_if(schema.columns.begin(), schema.columns.end(),
                                [&](const SchemaColumn& c) { return c.name == col.name; });
        if (def == schema.columns.end() || (def->type != "ENUM" && def->type != "SET")) continue;
        std::optional<uint64_t> n = ParseUint(*col.value);
        if (!n.has_value()) continue;
        std::string names;
        if (def->type == "ENUM") {
          if (*n >= 1 && *n <= def->elems.size()) names = def->elems[*n - 1];
        } else {
          for (size_t i = 0; i < def->elems.size() && i < 64; ++i) {
            if (((*n >> i) & 1) == 0) continue;
            if (!names.empty()) names += ',';
            names += def->elems[i];
          }
        }
        col.value = std::move(names);
      }
    }
  }

  const std::string root_;
  const ReaderOptions& options_;
};

}  // namespace

ReaderOptions ReaderOptions::FromSinkOptions(const StorageSinkOptions& o) {
  ReaderOptions r;
  r.protocol = o.protocol;
  r.date_separator = o.date_separator;
  r.csv = o.csv;
  r.terminator = o.canal.terminator;
  return r;
}

Result<StorageContents> ReadStorage(const std::string& root, const ReaderOptions& options) {
  return Reader(root, options).Read();
}

}  // namespace sluice::sink::storage
