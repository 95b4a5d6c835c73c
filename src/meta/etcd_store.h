// EtcdMetaStore: the metastore on an etcd v3 cluster, through etcd's KV,
// Watch and Lease gRPC services (the project's own etcdserverpb protos). It
// is what several Sluice nodes share; the embedded store (embedded_store.h)
// is the single-node default. Both fill the same MetaStore contract, and the
// contract tests run against both.
//
// Mapping: Txn is one etcd Txn (compares, then puts and single-key deletes);
// Get / GetPrefix / CurrentRevision are Range calls; leases are etcd leases
// (TTLs are whole seconds, rounded up, and etcd may raise them to its
// minimum). Every key is stored under `key_prefix`, which is invisible to
// callers, so clusters (and tests) can share one etcd.
//
// Differences from the embedded store, all allowed by the contract: the
// first revision of a fresh etcd is 1, not 0; Poll() returns the events the
// watch stream has delivered so far (Next() waits for more); a lease's
// remaining time is in whole seconds.
//
// Failures: a call that cannot reach etcd returns kUnavailable (retryable)
// and the next call tries the next endpoint. Reads are retried once per
// endpoint; a Txn is never retried here (it may have been applied), the
// caller re-reads and decides again. Watch cursors reconnect by themselves
// with backoff and resume from the revision after the last event they
// received, so a restarted etcd or a lost connection loses no event; if
// etcd compacted that revision meanwhile, the cursor fails with kNotFound
// ("compacted ...").
//
// Threads: one reader thread per watch cursor (owned by the cursor, joined
// when it is destroyed). Every method is thread-safe. Stop() wakes every
// cursor's Next() with kCancelled; cursors must be destroyed before the
// store.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "etcd/rpc.grpc.pb.h"
#include "meta/etcd_wire.h"
#include "meta/metastore.h"

namespace sluice::meta {

struct EtcdStoreOptions {
  // etcd client endpoints: "host:port" or "http://host:port". Required.
  std::vector<std::string> endpoints;
  // Prepended to every key; "" for none.
  std::string key_prefix;
  // Deadlines of watch Next(). Not owned; must outlive the store.
  Clock* clock = Clock::Real();
  // The deadline of each unary call (Open() probes each endpoint with it).
  Clock::Duration request_timeout = std::chrono::seconds(5);
  // Delays between a watch stream's reconnect attempts.
  BackoffOptions reconnect_backoff{std::chrono::milliseconds(50), std::chrono::seconds(2), 2.0,
                                   0.2};
};

class EtcdMetaStore final : public MetaStore {
 public:
  // Checks the options and reaches one endpoint: kInvalidArgument for bad
  // options, kUnavailable if no endpoint answers within request_timeout,
  // kNotSupported if an endpoint answers but is not etcd.
  static Result<std::unique_ptr<EtcdMetaStore>> Open(EtcdStoreOptions options);
  ~EtcdMetaStore() override;
  EtcdMetaStore(const EtcdMetaStore&) = delete;
  EtcdMetaStore& operator=(const EtcdMetaStore&) = delete;

  // Idempotent. Later calls return kCancelled.
  void Stop() EXCLUDES(mu_);

  Result<std::optional<KeyValue>> Get(const std::string& key) override;
  Result<RangeResult> GetPrefix(const std::string& prefix) override;
  Result<TxnResponse> Txn(const TxnRequest& txn) override;
  Result<Revision> CurrentRevision() override;
  Result<std::unique_ptr<WatchCursor>> Watch(const std::string& prefix,
                                             Revision from_revision) override EXCLUDES(mu_);
  Result<LeaseGrant> GrantLease(Clock::Duration ttl) override;
  Status KeepAlive(LeaseId lease) override;
  Status RevokeLease(LeaseId lease) override;
  Result<Clock::Duration> LeaseTimeToLive(LeaseId lease) override;

  // The endpoint calls go to now.
  std::string current_endpoint() const EXCLUDES(mu_);

 private:
  class Cursor;
  // One endpoint's channel and stubs; shared so a call in flight keeps it.
  struct Conn {
    size_t index = 0;
    std::string address;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch;
    std::unique_ptr<etcdserverpb::Lease::Stub> lease;
  };

  explicit EtcdMetaStore(EtcdStoreOptions options);

  // The current connection; kCancelled after Stop().
  Result<std::shared_ptr<Conn>> Current() EXCLUDES(mu_);
  // Drops `conn` if it is still the current one; the next call dials the
  // next endpoint.
  void MarkBroken(const std::shared_ptr<Conn>& conn) EXCLUDES(mu_);
  // Maps a failed call; on a connection error, moves on to the next endpoint.
  Status OnCallFailed(const std::shared_ptr<Conn>& conn, const grpc::Status& status,
                      std::string_view what) EXCLUDES(mu_);
  void PrepareContext(grpc::ClientContext* context, Clock::Duration timeout) const;
  // One unary call on the current connection: `call(conn, context,
  // response)` returns the gRPC status; failures are mapped (OnCallFailed).
  template <typename Response, typename Call>
  Result<Response> Unary(std::string_view what, Call call);
  // A Range call, retried on the next endpoint when one cannot be reached.
  Result<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& request,
                                            std::string_view what);
  void Forget(Cursor* cursor) EXCLUDES(mu_);
  // Wakes a cursor's Next() with kCancelled and ends its stream (Stop()).
  static void CancelCursor(Cursor* cursor);

  const EtcdStoreOptions options_;
  const etcd::Namespace ns_;
  std::vector<std::string> addresses_;  // Constant after Open().

  mutable Mutex mu_;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::shared_ptr<Conn> conn_ GUARDED_BY(mu_);
  size_t next_index_ GUARDED_BY(mu_) = 0;  // The endpoint the next connection uses.
  std::set<Cursor*> cursors_ GUARDED_BY(mu_);
};

}  // namespace sluice::meta
