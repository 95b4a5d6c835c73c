// The changefeed routes of TiCDC's HTTP API v2 over the Coordinator, as
// plain functions from (id, body) to a reply, so that they run and test
// without a socket. Request checks follow TiCDC's api/v2/changefeed.go in
// order and error codes; the coordinator makes the lifecycle decisions.
//
// Threads: every method may be called from any thread, concurrently (the
// Coordinator serializes changes). Ownership: the coordinator and the
// node_address callback are borrowed and must outlive this object.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/api_error.h"
#include "config/replica_config.h"
#include "coordinator/coordinator.h"
#include "meta/model.h"

namespace sluice::api {

// One HTTP reply.
struct Reply {
  int http_status = 200;
  std::string body;
  std::string content_type = "application/json";
};

Reply ErrorReply(const ApiError& error);

struct ChangefeedApiOptions {
  coordinator::Coordinator* coordinator = nullptr;
  // Sink URI schemes this cluster can write to; others are ErrSinkURIInvalid.
  std::vector<std::string> sink_schemes;
  uint64_t upstream_id = 0;     // Recorded in new changefeeds.
  std::string creator_version;  // Recorded in new changefeeds.
  // The advertised address of a node ("" if unknown), for maintainer_addr.
  std::function<std::string(const NodeId&)> node_address;
};

class ChangefeedApi {
 public:
  explicit ChangefeedApi(ChangefeedApiOptions options);

  // GET /api/v2/changefeeds?state=: {"total":n,"items":[ChangefeedCommonInfo]}.
  Reply List(const std::string& ns, const std::string& state) const;
  // POST /api/v2/changefeeds. `query_ns` is the ?namespace= value, "" if
  // absent (then the body's, then "default").
  Reply Create(const std::string& query_ns, std::string_view body) const;
  // GET /api/v2/changefeeds/{id}: ChangeFeedInfo.
  Reply Get(const meta::ChangefeedId& id) const;
  // PUT /api/v2/changefeeds/{id}: only while stopped or failed.
  Reply Update(const meta::ChangefeedId& id, std::string_view body) const;
  // DELETE /api/v2/changefeeds/{id}: {} (or null if it did not exist).
  Reply Remove(const meta::ChangefeedId& id) const;
  // POST /api/v2/changefeeds/{id}/pause: {}.
  Reply Pause(const meta::ChangefeedId& id) const;
  // POST /api/v2/changefeeds/{id}/resume: {}.
  Reply Resume(const meta::ChangefeedId& id, std::string_view body) const;
  // GET /api/v2/changefeeds/{id}/status: ChangefeedStatus.
  Reply GetStatus(const meta::ChangefeedId& id) const;
  // POST /api/v2/changefeeds/{id}/move_table?tableID=N&targetNodeID=X: {}
  // once the move started (TiCDC's query parameters).
  Reply MoveTable(const meta::ChangefeedId& id, const std::string& table_id,
                  const std::string& target) const;

 private:
  // The replica config adjusted to the sink URI, or ErrSinkURIInvalid /
  // ErrInvalidReplicaConfig.
  ApiOr<config::ReplicaConfig> CheckSink(const std::string& sink_uri,
                                         config::ReplicaConfig config) const;
  Reply InfoReply(const meta::ChangefeedId& id) const;
  std::string MaintainerAddr(const coordinator::ChangefeedView& view) const;

  const ChangefeedApiOptions options_;
};

// Whether `name` is a valid changefeed name or namespace (TiCDC's rule).
std::optional<ApiError> CheckChangefeedId(const meta::ChangefeedId& id);

}  // namespace sluice::api
