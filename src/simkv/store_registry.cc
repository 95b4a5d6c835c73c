#include "simkv/store_registry.h"

#include <utility>

namespace sluice::simkv {

namespace {

Status UnknownStore(StoreId id) { return NotFound("store " + std::to_string(id.value())); }

}  // namespace

void StoreRegistry::Put(StoreInfo info) {
  MutexLock lock(&mu_);
  StoreId id = info.id;
  stores_[id] = std::move(info);
}

Status StoreRegistry::SetAddress(StoreId id, std::string address) {
  MutexLock lock(&mu_);
  auto it = stores_.find(id);
  if (it == stores_.end()) return UnknownStore(id);
  it->second.address = std::move(address);
  return Status::Ok();
}

Status StoreRegistry::SetState(StoreId id, StoreState state) {
  MutexLock lock(&mu_);
  auto it = stores_.find(id);
  if (it == stores_.end()) return UnknownStore(id);
  it->second.state = state;
  return Status::Ok();
}

std::optional<StoreInfo> StoreRegistry::Get(StoreId id) const {
  MutexLock lock(&mu_);
  auto it = stores_.find(id);
  if (it == stores_.end()) return std::nullopt;
  return it->second;
}

std::vector<StoreInfo> StoreRegistry::All() const {
  MutexLock lock(&mu_);
  std::vector<StoreInfo> out;
  out.reserve(stores_.size());
  for (const auto& [id, info] : stores_) out.push_back(info);
  return out;
}

}  // namespace sluice::simkv
