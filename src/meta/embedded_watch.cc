// Watch cursors of the embedded store: they read the persisted history of
// each revision ("e" records), so a watch can resume from any revision that
// is not yet compacted, also after a restart.
#include <rocksdb/db.h>

#include "meta/embedded_store.h"
#include "meta/record_format.h"
#include "meta/rocks_util.h"

namespace sluice::meta {

// Owned by one consumer thread; reads the store under its locks.
class EmbeddedMetaStore::Cursor final : public WatchCursor {
 public:
  Cursor(EmbeddedMetaStore* store, std::string prefix, Revision next)
      : store_(store), prefix_(std::move(prefix)), next_(next) {}

  Result<std::vector<WatchEvent>> Poll() override;
  Result<std::vector<WatchEvent>> Next(const CancelToken& token,
                                       Clock::TimePoint deadline) override;
  Revision next_revision() const override { return next_; }

 private:
  // Reads revisions [next_, upto] from disk.
  Result<std::vector<WatchEvent>> ReadHistory(Revision upto);
  // Waits until the store revision reaches next_ (or stop, cancel, deadline).
  Status WaitForRevision(const CancelToken& token, Clock::TimePoint deadline);

  EmbeddedMetaStore* const store_;
  const std::string prefix_;
  Revision next_;
};

Result<std::unique_ptr<WatchCursor>> EmbeddedMetaStore::Watch(const std::string& prefix,
                                                              Revision from_revision) {
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("metastore stopped");
  if (from_revision < 0) return InvalidArgument("metastore: negative watch revision");
  const Revision next = from_revision == 0 ? revision_ + 1 : from_revision;
  if (next <= compacted_) {
    return NotFound("compacted: watch from revision " + std::to_string(next) +
                    ", history starts at " + std::to_string(compacted_ + 1));
  }
  return std::unique_ptr<WatchCursor>(new Cursor(this, prefix, next));
}

Result<std::vector<WatchEvent>> EmbeddedMetaStore::Cursor::Poll() {
  Revision upto;
  {
    MutexLock lock(&store_->mu_);
    if (store_->stopped_) return Cancelled("metastore stopped");
    if (next_ <= store_->compacted_) {
      return NotFound("compacted: watch fell behind at revision " + std::to_string(next_));
    }
    upto = store_->revision_;
  }
  if (next_ > upto) return std::vector<WatchEvent>();
  return ReadHistory(upto);
}

Result<std::vector<WatchEvent>> EmbeddedMetaStore::Cursor::ReadHistory(Revision upto) {
  std::vector<WatchEvent> out;
  std::unique_ptr<rocksdb::Iterator> it(store_->db_->NewIterator(rocksdb::ReadOptions()));
  Revision expected = next_;
  for (it->Seek(format::EventKey(next_)); it->Valid() && expected <= upto; it->Next()) {
    if (it->key() != format::EventKey(expected)) break;
    ASSIGN_OR_RETURN(std::vector<WatchEvent> events,
                     format::DecodeEvents(it->value().ToStringView()));
    for (WatchEvent& e : events) {
      if (HasPrefix(e.kv.key, prefix_)) out.push_back(std::move(e));
    }
    ++expected;
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "metastore watch"));
  if (expected <= upto) {
    // History was trimmed under us: the cursor is behind compaction.
    return NotFound("compacted: watch fell behind at revision " + std::to_string(expected));
  }
  next_ = upto + 1;
  return out;
}

Status EmbeddedMetaStore::Cursor::WaitForRevision(const CancelToken& token,
                                                  Clock::TimePoint deadline) {
  EmbeddedMetaStore* store = store_;
  CancelCallback wake(token, [store] {
    MutexLock lock(&store->mu_);
    store->changed_.SignalAll();
  });
  MutexLock lock(&store_->mu_);
  while (store_->revision_ < next_) {
    if (store_->stopped_) return Cancelled("metastore stopped");
    if (token.cancelled()) return Cancelled("watch cancelled");
    if (store_->clock_->WaitUntil(&store_->changed_, &store_->mu_, deadline) &&
        store_->revision_ < next_) {
      return Timeout("watch: no event before the deadline");
    }
  }
  return Status::Ok();
}

Result<std::vector<WatchEvent>> EmbeddedMetaStore::Cursor::Next(const CancelToken& token,
                                                                Clock::TimePoint deadline) {
  while (true) {
    ASSIGN_OR_RETURN(std::vector<WatchEvent> events, Poll());
    if (!events.empty()) return events;
    RETURN_IF_ERROR(WaitForRevision(token, deadline));
  }
}

}  // namespace sluice::meta
