#include "meta/keys.h"

#include <cstdio>
#include <utility>

namespace sluice::meta {
namespace {

constexpr std::string_view kMetaNamespace = "__cdc_meta__";
constexpr std::string_view kInfoPart = "/changefeed/info/";
constexpr std::string_view kStatusPart = "/changefeed/status/";

}  // namespace

KeyLayout::KeyLayout(std::string cluster) : root_("/tidb/cdc/" + std::move(cluster)) {}

std::string KeyLayout::ChangefeedInfoKey(const ChangefeedId& id) const {
  return root_ + "/" + id.ns + std::string(kInfoPart) + id.name;
}

std::string KeyLayout::ChangefeedStatusKey(const ChangefeedId& id) const {
  return root_ + "/" + id.ns + std::string(kStatusPart) + id.name;
}

std::string KeyLayout::CaptureKey(const NodeId& id) const { return CapturePrefix() + id.value(); }

std::string KeyLayout::CapturePrefix() const {
  return root_ + "/" + std::string(kMetaNamespace) + "/capture/";
}

std::string KeyLayout::OwnerPrefix() const {
  return root_ + "/" + std::string(kMetaNamespace) + "/owner/";
}

std::string KeyLayout::OwnerKey(const std::string& owner_prefix, LeaseId lease) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(lease.value()));
  return owner_prefix + buf;
}

Result<ChangefeedId> KeyLayout::ParseChangefeedInfoKey(std::string_view key) const {
  if (!key.starts_with(root_) || key.size() <= root_.size() || key[root_.size()] != '/') {
    return NotFound("not a changefeed info key");
  }
  std::string_view rest = key.substr(root_.size() + 1);  // <ns>/changefeed/info/<name>
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos || !rest.substr(slash).starts_with(kInfoPart)) {
    return NotFound("not a changefeed info key");
  }
  ChangefeedId id{std::string(rest.substr(0, slash)),
                  std::string(rest.substr(slash + kInfoPart.size()))};
  if (id.ns == kMetaNamespace) return NotFound("not a changefeed info key");
  if (!IsValidChangefeedName(id.ns) || !IsValidChangefeedName(id.name)) {
    return Corruption("changefeed info key with an invalid id");
  }
  return id;
}

}  // namespace sluice::meta
