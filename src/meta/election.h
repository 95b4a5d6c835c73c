// Election: leader election on a key prefix, like etcd's
// concurrency.Election (TiCDC's owner / coordinator election). Each
// candidate puts `<prefix><lease id hex>` on its own lease; the leader is the
// candidate whose key has the smallest create revision. A leader loses
// leadership when it resigns or its lease expires (its key vanishes), and the
// next candidate in create order takes over.
//
// Thread-safe and stateless; the store is not owned and must outlive it.
// Campaign() and WaitForChange() block the calling thread.
#pragma once

#include <optional>
#include <string>

#include "common/cancel.h"
#include "meta/metastore.h"

namespace sluice::meta {

// The current leader as stored.
struct LeaderInfo {
  std::string key;
  std::string value;  // The candidate's value, e.g. its node id.
  LeaseId lease;
  Revision create_revision = 0;  // Orders leaderships: a later leader has a larger one.

  friend bool operator==(const LeaderInfo&, const LeaderInfo&) = default;
};

class Election {
 public:
  // `prefix` is normally KeyLayout::OwnerPrefix() and ends with "/".
  Election(MetaStore* store, std::string prefix) : store_(store), prefix_(std::move(prefix)) {}

  // Enters the election with `value` on `lease` and blocks until this
  // candidate leads; returns its leadership. Campaigning again with the
  // same lease keeps the original place in line (and updates nothing).
  // kCancelled if `token` is cancelled (the candidacy stays until Resign or
  // the lease ends), kAborted if the candidate's key vanished (lease expired).
  Result<LeaderInfo> Campaign(const std::string& value, LeaseId lease, const CancelToken& token);

  // Leaves the election (and leadership) of the candidate on `lease`.
  Status Resign(LeaseId lease);

  // The current leader, or nullopt when nobody leads.
  Result<std::optional<LeaderInfo>> Leader();

  // Blocks until the leader differs from `known` (another leader, or none),
  // and returns the new one. kCancelled if `token` is cancelled.
  Result<std::optional<LeaderInfo>> WaitForChange(const std::optional<LeaderInfo>& known,
                                                  const CancelToken& token);

 private:
  struct Snapshot {
    std::optional<LeaderInfo> leader;
    bool has_key = false;  // Whether the key of the lease asked about exists.
    Revision revision = 0;
  };
  Result<Snapshot> Read(LeaseId lease);
  // Waits for any change under the prefix after `revision`.
  Status WaitAfter(Revision revision, const CancelToken& token);

  MetaStore* const store_;
  const std::string prefix_;
};

}  // namespace sluice::meta
