#include <utility>

#include "eventstore/key_format.h"
#include "eventstore/store_internal.h"

namespace sluice::eventstore {

EventIterator::Impl::Impl(std::shared_ptr<DbHandle> db, std::string lower, std::string upper,
                          ScanCursor start, bool has_prev)
    : db_(std::move(db)),
      lower_(std::move(lower)),
      upper_(std::move(upper)),
      lower_slice_(lower_),
      upper_slice_(upper_),
      has_prev_(has_prev),
      cursor_(std::move(start)) {
  rocksdb::ReadOptions options;
  options.iterate_lower_bound = &lower_slice_;
  if (!upper_.empty()) options.iterate_upper_bound = &upper_slice_;
  it_.reset(db_->db->NewIterator(options));
  done_ = !upper_.empty() && lower_ >= upper_;
}

bool EventIterator::Impl::Next(RawKvEntry* out, bool* new_txn) {
  if (done_) return false;
  if (!started_) {
    it_->Seek(lower_slice_);
    started_ = true;
  } else {
    it_->Next();
  }
  if (!it_->Valid()) {
    done_ = true;
    status_ = FromRocks(it_->status(), "event store scan");
    return false;
  }
  rocksdb::Slice key = it_->key();
  rocksdb::Slice value = it_->value();
  Status st = DecodeEntry(std::string_view(key.data(), key.size()),
                          std::string_view(value.data(), value.size()), out);
  if (!st.ok()) {
    done_ = true;
    status_ = st;
    return false;
  }
  *new_txn = !has_prev_ || out->commit_ts != cursor_.commit_ts || out->start_ts != cursor_.start_ts;
  has_prev_ = true;
  cursor_.commit_ts = out->commit_ts;
  cursor_.start_ts = out->start_ts;
  cursor_.position.assign(key.data(), key.size());
  return true;
}

EventIterator::EventIterator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EventIterator::~EventIterator() = default;

bool EventIterator::Next(RawKvEntry* out, bool* new_txn) { return impl_->Next(out, new_txn); }
Status EventIterator::status() const { return impl_->status(); }
ScanCursor EventIterator::cursor() const { return impl_->cursor(); }

}  // namespace sluice::eventstore
