// The metastore key layout, TiCDC's etcd layout (pkg/etcd/etcdkey.go):
//
//   /tidb/cdc/<cluster>/<namespace>/changefeed/info/<name>    ChangefeedInfo JSON
//   /tidb/cdc/<cluster>/<namespace>/changefeed/status/<name>  ChangefeedStatus JSON
//   /tidb/cdc/<cluster>/__cdc_meta__/capture/<node id>        CaptureInfo JSON, on a lease
//   /tidb/cdc/<cluster>/__cdc_meta__/owner/<lease id hex>     coordinator election
//
// Plain value type; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/strong_id.h"
#include "meta/model.h"
#include "meta/types.h"

namespace sluice::meta {

class KeyLayout {
 public:
  // `cluster` is TiCDC's cluster id ("default" unless configured).
  explicit KeyLayout(std::string cluster = "default");

  const std::string& root() const { return root_; }  // "/tidb/cdc/<cluster>"

  std::string ChangefeedInfoKey(const ChangefeedId& id) const;
  std::string ChangefeedStatusKey(const ChangefeedId& id) const;
  // Every info key of every namespace lives under root() + "/"; the info
  // keys are those for which ParseChangefeedInfoKey succeeds.
  std::string CaptureKey(const NodeId& id) const;
  std::string CapturePrefix() const;  // Ends with "/".
  std::string OwnerPrefix() const;    // Ends with "/".
  static std::string OwnerKey(const std::string& owner_prefix, LeaseId lease);

  // The changefeed of an info key; kNotFound if `key` is not an info key,
  // kCorruption if it is one with an invalid name.
  Result<ChangefeedId> ParseChangefeedInfoKey(std::string_view key) const;

 private:
  std::string root_;
};

}  // namespace sluice::meta
