// Translation between pdpb wire messages and the PD client's values: gRPC
// statuses and PD response headers become typed Statuses; metapb regions and
// stores become Region / Store after validation. Bad answers from PD give a
// typed error, never an assert. Pure functions; any thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>
#include <string_view>

#include "common/status.h"
#include "metapb.pb.h"
#include "pd/pd_types.h"
#include "pdpb.pb.h"

namespace sluice::pd {

// gRPC status of a PD call → Status. UNAVAILABLE, DEADLINE_EXCEEDED,
// CANCELLED, UNKNOWN and INTERNAL are kUnavailable; FAILED_PRECONDITION
// "mismatch cluster id" (PD's answer to a wrong header) is kIncompatible.
Status FromGrpc(const grpc::Status& status, std::string_view what);

// Whether the connection should be dropped and PD re-discovered after a call
// failed with `code` (the peer is gone or does not answer).
bool ShouldReconnect(grpc::StatusCode code);

// A PD ResponseHeader → Status: a header error by its type (NOT_BOOTSTRAPPED
// and other transient ones kUnavailable, not-found kinds kNotFound,
// INCOMPATIBLE_VERSION kIncompatible), or kIncompatible when the header names
// a cluster other than `cluster_id` (0: not checked).
Status FromHeader(const pdpb::ResponseHeader& header, uint64_t cluster_id, std::string_view what);

// "http://host:port/" → "host:port".
std::string StripUrl(std::string_view url);

// Validates and converts a region (kProtocolViolation on a zero id or an
// inverted range). `leader` may be null or an empty peer (no leader).
Result<Region> RegionFromProto(const metapb::Region& region, const metapb::Peer* leader);

// kProtocolViolation on a zero id.
Result<Store> StoreFromProto(const metapb::Store& store);

}  // namespace sluice::pd
