// ValidateAndAdjust: TiCDC's checks of a replica config against the sink URI.
#include <cctype>
#include <string>

#include "config/schema.h"

namespace sluice::config {
namespace {

bool IsMySqlScheme(std::string_view s) {
  return s == "mysql" || s == "mysql+ssl" || s == "tidb" || s == "tidb+ssl";
}

bool IsMqScheme(std::string_view s) {
  return s == "kafka" || s == "kafka+ssl" || s == "pulsar" || s == "pulsar+ssl" ||
         s == "pulsar+http" || s == "pulsar+https";
}

bool IsStorageScheme(std::string_view s) {
  return s == "file" || s == "s3" || s == "gcs" || s == "gs" || s == "azblob" || s == "azure" ||
         s == "cos" || s == "noop";
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The URI's protocol, transaction-atomicity and safe-mode override the file.
Status ApplyUriParams(SinkConfig& sink, const sink::SinkUri& uri) {
  if (auto it = uri.params.find("protocol"); it != uri.params.end() && !it->second.empty()) {
    sink.protocol = it->second;
  }
  if (auto it = uri.params.find("transaction-atomicity");
      it != uri.params.end() && !it->second.empty()) {
    sink.transaction_atomicity = it->second;
  }
  if (IsMySqlScheme(uri.scheme)) {
    ASSIGN_OR_RETURN(std::optional<bool> safe_mode, uri.BoolParam("safe-mode"));
    if (safe_mode.has_value()) sink.safe_mode = safe_mode;
  }
  return Status::Ok();
}

Status CheckProtocol(const SinkConfig& sink, std::string_view scheme) {
  std::string protocol = Lower(sink.protocol.value_or(""));
  if (IsMySqlScheme(scheme) && sink.protocol.has_value()) {
    return InvalidArgument("protocol \"" + *sink.protocol + "\" is incompatible with the " +
                           std::string(scheme) + " scheme");
  }
  if ((IsMqScheme(scheme) || IsStorageScheme(scheme)) && protocol.empty()) {
    return InvalidArgument("sink.protocol (or the sink URI's protocol param) is required for the " +
                           std::string(scheme) + " scheme");
  }
  if (IsStorageScheme(scheme) && protocol != "csv" && protocol != "canal-json") {
    return InvalidArgument("protocol \"" + protocol + "\" is not supported by the " +
                           std::string(scheme) + " scheme; use csv or canal-json");
  }
  if (IsMqScheme(scheme) && sink.transaction_atomicity == "table") {
    return InvalidArgument("table level atomicity is not supported by the " + std::string(scheme) +
                           " scheme");
  }
  if (!IsMySqlScheme(scheme) && protocol == "csv" && sink.delete_only_output_handle_key_columns) {
    return InvalidArgument(
        "the csv protocol always outputs all columns of a delete; do not set "
        "sink.delete-only-output-handle-key-columns");
  }
  return Status::Ok();
}

Status CheckAndAdjust(ReplicaConfig& c, std::string_view scheme) {
  RETURN_IF_ERROR(CheckProtocol(c.sink, scheme));
  if (c.enable_sync_point && !IsMySqlScheme(scheme)) {
    return InvalidArgument("enable-sync-point needs a mysql or tidb downstream");
  }
  if (IsStorageScheme(scheme) && (c.sink.file_index_width < 6 || c.sink.file_index_width > 20)) {
    c.sink.file_index_width = 20;
  }
  if (scheme != "kafka" && scheme != "kafka+ssl") c.integrity.integrity_check_level = "none";
  if (c.integrity.integrity_check_level == "correctness" && !c.sink.column_selectors.empty()) {
    return InvalidArgument("integrity check and sink.column-selectors cannot be used together");
  }
  return filter::Filter::Validate(ToFilterConfig(c));
}

}  // namespace

Result<ReplicaConfig> ValidateAndAdjust(ReplicaConfig config, const sink::SinkUri& uri) {
  RETURN_IF_ERROR(ApplyUriParams(config.sink, uri));
  RETURN_IF_ERROR(ValidateValues(config));
  RETURN_IF_ERROR(CheckAndAdjust(config, uri.scheme));
  RETURN_IF_ERROR(RefuseUnsupported(config));
  return config;
}

Status Validate(const ReplicaConfig& config, const sink::SinkUri& uri) {
  return ValidateAndAdjust(config, uri).status();
}

}  // namespace sluice::config
