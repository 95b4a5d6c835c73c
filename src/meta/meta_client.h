// MetaClient: the typed control-plane view of a MetaStore: changefeed info
// and status, maintainer epochs, node (capture) registration. Every write
// that depends on what was read is a compare-and-swap on the key's mod
// revision, so two coordinators cannot both win (docs/architecture.md,
// "Invariants": one owner per changefeed).
//
// Thread-safe and stateless apart from the layout; the store is not owned
// and must outlive the client. Error codes: kNotFound (no such changefeed),
// kAlreadyExists (create collided), kAborted (the revision moved: re-read
// and retry), kCorruption (a stored value does not decode), kInvalidArgument
// (bad ids), plus the store's own codes.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "meta/keys.h"
#include "meta/metastore.h"
#include "meta/model.h"

namespace sluice::meta {

// A decoded value with the mod revision it was read at (the CAS token).
template <typename T>
struct Versioned {
  T value;
  Revision mod_revision = 0;
};

// A stored key whose value did not decode; listings report it and go on.
struct BadEntry {
  std::string key;
  Status error;
};

struct ChangefeedList {
  std::vector<Versioned<ChangefeedInfo>> feeds;  // In key order.
  std::vector<BadEntry> bad;
  Revision revision = 0;  // Store revision of the read (to watch from + 1).
};

struct CaptureList {
  std::vector<Versioned<CaptureInfo>> captures;
  std::vector<BadEntry> bad;
  Revision revision = 0;
};

struct EpochBump {
  MaintainerEpoch epoch;  // The persisted new epoch.
  Revision revision = 0;  // The info key's new mod revision.
};

class MetaClient {
 public:
  MetaClient(MetaStore* store, KeyLayout layout) : store_(store), layout_(std::move(layout)) {}

  const KeyLayout& layout() const { return layout_; }

  // Creates the info and status keys together; kAlreadyExists if either
  // exists. Returns the commit revision.
  Result<Revision> CreateChangefeed(const ChangefeedInfo& info, const ChangefeedStatus& status);
  Result<Versioned<ChangefeedInfo>> GetChangefeedInfo(const ChangefeedId& id);
  Result<Versioned<ChangefeedStatus>> GetChangefeedStatus(const ChangefeedId& id);
  // Every changefeed of every namespace of the cluster.
  Result<ChangefeedList> ListChangefeeds();

  // Replaces the info if its mod revision is still `expected_revision`;
  // returns the new mod revision.
  Result<Revision> UpdateChangefeedInfo(const ChangefeedInfo& info, Revision expected_revision);
  // Replaces the status; with `expected_revision`, only if it still holds
  // (0 = the status must not exist).
  Result<Revision> UpdateChangefeedStatus(const ChangefeedId& id, const ChangefeedStatus& status,
                                          std::optional<Revision> expected_revision);

  // Persists a new maintainer epoch max(candidate, current + 1) in the info
  // key if its mod revision is still `expected_revision`. The result is
  // strictly greater than every epoch persisted before for this changefeed.
  // kAborted if the revision moved, kInternal if the epoch would overflow.
  Result<EpochBump> BumpMaintainerEpoch(const ChangefeedId& id, Revision expected_revision,
                                        MaintainerEpoch candidate = MaintainerEpoch());

  // Deletes info and status; with `expected_info_revision`, only if the info
  // did not move. kNotFound if the changefeed does not exist.
  Result<Revision> RemoveChangefeed(const ChangefeedId& id,
                                    std::optional<Revision> expected_info_revision);

  // Registers a node on its lease (the key vanishes when the lease does).
  Result<Revision> RegisterCapture(const CaptureInfo& info, LeaseId lease);
  Result<Revision> DeregisterCapture(const NodeId& id);
  Result<CaptureList> ListCaptures();

 private:
  // kAborted naming `what` when a compare failed, else the revision.
  static Result<Revision> Committed(const TxnResponse& resp, std::string_view what);
  Status CheckId(const ChangefeedId& id) const;

  MetaStore* const store_;
  const KeyLayout layout_;
};

}  // namespace sluice::meta
