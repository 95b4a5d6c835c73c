#include "meta/meta_client.h"

#include <algorithm>
#include <limits>

namespace sluice::meta {

Result<Revision> MetaClient::Committed(const TxnResponse& resp, std::string_view what) {
  if (!resp.succeeded) return Aborted(std::string(what) + ": revision moved");
  return resp.revision;
}

Status MetaClient::CheckId(const ChangefeedId& id) const {
  if (!IsValidChangefeedName(id.ns) || !IsValidChangefeedName(id.name)) {
    return InvalidArgument("invalid changefeed id \"" + id.ToString() + "\"");
  }
  return Status::Ok();
}

Result<Revision> MetaClient::CreateChangefeed(const ChangefeedInfo& info,
                                              const ChangefeedStatus& status) {
  RETURN_IF_ERROR(CheckId(info.id));
  const std::string info_key = layout_.ChangefeedInfoKey(info.id);
  const std::string status_key = layout_.ChangefeedStatusKey(info.id);
  TxnRequest txn;
  txn.compares = {Compare::Absent(info_key), Compare::Absent(status_key)};
  txn.success = {TxnOp::Put(info_key, EncodeChangefeedInfo(info)),
                 TxnOp::Put(status_key, EncodeChangefeedStatus(status))};
  ASSIGN_OR_RETURN(TxnResponse resp, store_->Txn(txn));
  if (!resp.succeeded) return AlreadyExists("changefeed " + info.id.ToString() + " exists");
  return resp.revision;
}

Result<Versioned<ChangefeedInfo>> MetaClient::GetChangefeedInfo(const ChangefeedId& id) {
  RETURN_IF_ERROR(CheckId(id));
  ASSIGN_OR_RETURN(std::optional<KeyValue> kv, store_->Get(layout_.ChangefeedInfoKey(id)));
  if (!kv) return NotFound("changefeed " + id.ToString() + " not found");
  Result<ChangefeedInfo> info = DecodeChangefeedInfo(kv->value);
  if (!info.ok()) return info.status().WithContext("changefeed " + id.ToString());
  return Versioned<ChangefeedInfo>{std::move(info).value(), kv->mod_revision};
}

Result<Versioned<ChangefeedStatus>> MetaClient::GetChangefeedStatus(const ChangefeedId& id) {
  RETURN_IF_ERROR(CheckId(id));
  ASSIGN_OR_RETURN(std::optional<KeyValue> kv, store_->Get(layout_.ChangefeedStatusKey(id)));
  if (!kv) return NotFound("changefeed status " + id.ToString() + " not found");
  Result<ChangefeedStatus> status = DecodeChangefeedStatus(kv->value);
  if (!status.ok()) return status.status().WithContext("changefeed " + id.ToString());
  return Versioned<ChangefeedStatus>{std::move(status).value(), kv->mod_revision};
}

Result<ChangefeedList> MetaClient::ListChangefeeds() {
  ASSIGN_OR_RETURN(RangeResult range, store_->GetPrefix(layout_.root() + "/"));
  ChangefeedList list;
  list.revision = range.revision;
  for (KeyValue& kv : range.kvs) {
    Result<ChangefeedId> id = layout_.ParseChangefeedInfoKey(kv.key);
    if (!id.ok() && id.status().code() == Code::kNotFound) continue;
    Result<ChangefeedInfo> info =
        id.ok() ? DecodeChangefeedInfo(kv.value) : Result<ChangefeedInfo>(id.status());
    if (info.ok() && info->id != *id) info = Corruption("info value names another changefeed");
    if (!info.ok()) {
      list.bad.push_back(BadEntry{kv.key, info.status()});
      continue;
    }
    list.feeds.push_back(Versioned<ChangefeedInfo>{std::move(info).value(), kv.mod_revision});
  }
  return list;
}

Result<Revision> MetaClient::UpdateChangefeedInfo(const ChangefeedInfo& info,
                                                  Revision expected_revision) {
  RETURN_IF_ERROR(CheckId(info.id));
  const std::string key = layout_.ChangefeedInfoKey(info.id);
  if (expected_revision <= 0) return InvalidArgument("update of changefeed info needs a revision");
  TxnRequest txn;
  txn.compares = {Compare::ModRevisionIs(key, expected_revision)};
  txn.success = {TxnOp::Put(key, EncodeChangefeedInfo(info))};
  ASSIGN_OR_RETURN(TxnResponse resp, store_->Txn(txn));
  return Committed(resp, "update changefeed " + info.id.ToString());
}

Result<Revision> MetaClient::UpdateChangefeedStatus(const ChangefeedId& id,
                                                    const ChangefeedStatus& status,
                                                    std::optional<Revision> expected_revision) {
  RETURN_IF_ERROR(CheckId(id));
  const std::string key = layout_.ChangefeedStatusKey(id);
  TxnRequest txn;
  if (expected_revision) txn.compares = {Compare::ModRevisionIs(key, *expected_revision)};
  txn.success = {TxnOp::Put(key, EncodeChangefeedStatus(status))};
  ASSIGN_OR_RETURN(TxnResponse resp, store_->Txn(txn));
  return Committed(resp, "update changefeed status " + id.ToString());
}

Result<EpochBump> MetaClient::BumpMaintainerEpoch(const ChangefeedId& id,
                                                  Revision expected_revision,
                                                  MaintainerEpoch candidate) {
  ASSIGN_OR_RETURN(Versioned<ChangefeedInfo> info, GetChangefeedInfo(id));
  if (info.mod_revision != expected_revision) {
    return Aborted("bump epoch of " + id.ToString() + ": revision moved");
  }
  const uint64_t current = info.value.epoch.value();
  if (current == std::numeric_limits<uint64_t>::max()) {
    return Internal("maintainer epoch of " + id.ToString() + " would overflow");
  }
  const MaintainerEpoch next(std::max(candidate.value(), current + 1));
  info.value.epoch = next;
  // The compare makes the read above and this write one atomic step.
  ASSIGN_OR_RETURN(Revision revision, UpdateChangefeedInfo(info.value, expected_revision));
  return EpochBump{next, revision};
}

Result<Revision> MetaClient::RemoveChangefeed(const ChangefeedId& id,
                                              std::optional<Revision> expected_info_revision) {
  RETURN_IF_ERROR(CheckId(id));
  const std::string info_key = layout_.ChangefeedInfoKey(id);
  TxnRequest txn;
  txn.compares = {Compare::CreateRevisionIs(info_key, 0)};
  txn.compares[0].op = Compare::Op::kNotEqual;  // The changefeed exists.
  if (expected_info_revision) {
    txn.compares.push_back(Compare::ModRevisionIs(info_key, *expected_info_revision));
  }
  txn.success = {TxnOp::Delete(info_key), TxnOp::Delete(layout_.ChangefeedStatusKey(id))};
  ASSIGN_OR_RETURN(TxnResponse resp, store_->Txn(txn));
  if (resp.succeeded) return resp.revision;
  ASSIGN_OR_RETURN(std::optional<KeyValue> kv, store_->Get(info_key));
  if (!kv) return NotFound("changefeed " + id.ToString() + " not found");
  return Aborted("remove changefeed " + id.ToString() + ": revision moved");
}

Result<Revision> MetaClient::RegisterCapture(const CaptureInfo& info, LeaseId lease) {
  if (info.id.empty()) return InvalidArgument("capture with an empty id");
  return store_->Put(layout_.CaptureKey(info.id), EncodeCaptureInfo(info), lease);
}

Result<Revision> MetaClient::DeregisterCapture(const NodeId& id) {
  if (id.empty()) return InvalidArgument("capture with an empty id");
  return store_->Delete(layout_.CaptureKey(id));
}

Result<CaptureList> MetaClient::ListCaptures() {
  ASSIGN_OR_RETURN(RangeResult range, store_->GetPrefix(layout_.CapturePrefix()));
  CaptureList list;
  list.revision = range.revision;
  for (KeyValue& kv : range.kvs) {
    Result<CaptureInfo> info = DecodeCaptureInfo(kv.value);
    if (!info.ok()) {
      list.bad.push_back(BadEntry{kv.key, info.status()});
      continue;
    }
    list.captures.push_back(Versioned<CaptureInfo>{std::move(info).value(), kv.mod_revision});
  }
  return list;
}

}  // namespace sluice::meta
