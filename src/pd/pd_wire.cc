#include "pd/pd_wire.h"

#include <iterator>
#include <utility>

namespace sluice::pd {

namespace {

std::string Describe(std::string_view what, std::string_view detail) {
  return "pd " + std::string(what) + ": " + std::string(detail);
}

std::string CodeText(grpc::StatusCode code) {
  static constexpr const char* kNames[] = {"OK",
                                           "CANCELLED",
                                           "UNKNOWN",
                                           "INVALID_ARGUMENT",
                                           "DEADLINE_EXCEEDED",
                                           "NOT_FOUND",
                                           "ALREADY_EXISTS",
                                           "PERMISSION_DENIED",
                                           "RESOURCE_EXHAUSTED",
                                           "FAILED_PRECONDITION",
                                           "ABORTED",
                                           "OUT_OF_RANGE",
                                           "UNIMPLEMENTED",
                                           "INTERNAL",
                                           "UNAVAILABLE",
                                           "DATA_LOSS",
                                           "UNAUTHENTICATED"};
  const auto index = static_cast<size_t>(code);
  if (index < std::size(kNames)) return kNames[index];
  return "grpc code " + std::to_string(index);
}

bool Mentions(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

}  // namespace

Status FromGrpc(const grpc::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  const std::string& message = status.error_message();
  std::string text = Describe(what, CodeText(status.error_code()) + ": " + message);
  switch (status.error_code()) {
    case grpc::StatusCode::FAILED_PRECONDITION:
      if (Mentions(message, "cluster id")) return Incompatible(std::move(text));
      return Unavailable(std::move(text));
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      return InvalidArgument(std::move(text));
    case grpc::StatusCode::NOT_FOUND:
      return NotFound(std::move(text));
    case grpc::StatusCode::UNIMPLEMENTED:
      return NotSupported(std::move(text));
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return ResourceExhausted(std::move(text));
    default:
      return Unavailable(std::move(text));
  }
}

bool ShouldReconnect(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == grpc::StatusCode::CANCELLED;
}

Status FromHeader(const pdpb::ResponseHeader& header, uint64_t cluster_id, std::string_view what) {
  if (header.has_error() && header.error().type() != pdpb::OK) {
    const std::string& message = header.error().message();
    std::string text = Describe(what, pdpb::ErrorType_Name(header.error().type()) + ": " + message);
    switch (header.error().type()) {
      case pdpb::INCOMPATIBLE_VERSION:
        return Incompatible(std::move(text));
      case pdpb::REGION_NOT_FOUND:
      case pdpb::STORE_TOMBSTONE:
      case pdpb::ENTRY_NOT_FOUND:
      case pdpb::GLOBAL_CONFIG_NOT_FOUND:
        return NotFound(std::move(text));
      case pdpb::INVALID_VALUE:
        return InvalidArgument(std::move(text));
      case pdpb::DUPLICATED_ENTRY:
        return AlreadyExists(std::move(text));
      case pdpb::UNKNOWN:
        if (Mentions(message, "mismatch cluster id")) return Incompatible(std::move(text));
        if (Mentions(message, "not found")) return NotFound(std::move(text));
        return Unavailable(std::move(text));
      default:  // NOT_BOOTSTRAPPED, DATA_COMPACTED, ... and types we do not know.
        return Unavailable(std::move(text));
    }
  }
  if (cluster_id != 0 && header.cluster_id() != 0 && header.cluster_id() != cluster_id) {
    return Incompatible(Describe(what, "answer from cluster " +
                                           std::to_string(header.cluster_id()) + ", expected " +
                                           std::to_string(cluster_id)));
  }
  return Status::Ok();
}

std::string StripUrl(std::string_view url) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (url.substr(0, scheme.size()) == scheme) {
      url.remove_prefix(scheme.size());
      break;
    }
  }
  while (!url.empty() && url.back() == '/') url.remove_suffix(1);
  return std::string(url);
}

Result<Region> RegionFromProto(const metapb::Region& region, const metapb::Peer* leader) {
  if (region.id() == 0) return ProtocolViolation("pd: region with id 0");
  if (!region.end_key().empty() && region.start_key() >= region.end_key()) {
    return ProtocolViolation("pd: region " + std::to_string(region.id()) + " has an empty range");
  }
  Region out;
  out.id = RegionId(region.id());
  out.start_key = region.start_key();
  out.end_key = region.end_key();
  out.conf_ver = region.region_epoch().conf_ver();
  out.version = region.region_epoch().version();
  out.peers.reserve(region.peers_size());
  for (const metapb::Peer& peer : region.peers()) {
    out.peers.emplace_back(peer.id(), StoreId(peer.store_id()));
  }
  if (leader != nullptr && leader->store_id() != 0) {
    out.leader_store = StoreId(leader->store_id());
    out.leader_peer_id = leader->id();
  }
  return out;
}

Result<Store> StoreFromProto(const metapb::Store& store) {
  if (store.id() == 0) return ProtocolViolation("pd: store with id 0");
  Store out;
  out.id = StoreId(store.id());
  out.address = store.address();
  out.up = store.state() == metapb::Up;
  out.tombstone = store.state() == metapb::Tombstone;
  out.version = store.version();
  return out;
}

}  // namespace sluice::pd
