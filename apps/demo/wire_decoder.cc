#include "apps/demo/wire_decoder.h"

#include "cdcpb.pb.h"

namespace sluice::demo {

namespace {

Status Violation(const char* what) { return ProtocolViolation(std::string("cdc stream: ") + what); }

}  // namespace

Status WireDecoder::Consume(std::string_view wire) {
  cdcpb::ChangeDataEvent msg;
  if (!msg.ParseFromArray(wire.data(), static_cast<int>(wire.size()))) {
    return Corruption("cdc stream: ChangeDataEvent does not parse");
  }
  if (msg.has_resolved_ts()) {
    Ts ts(msg.resolved_ts().ts());
    if (ts < resolved_ts_) return Violation("resolved ts went back");
    resolved_ts_ = ts;
  }
  for (const cdcpb::Event& event : msg.events()) {
    if (!event.has_entries()) continue;  // admin, error and long-txn events
    for (const cdcpb::Event_Row& row : event.entries().entries()) {
      ++rows_seen_;
      TxnKey txn{row.start_ts(), row.key()};
      bool is_delete = row.op_type() == cdcpb::Event_Row_OpType_DELETE;
      // Rows that carry data must say PUT or DELETE; ROLLBACK rows need not.
      if (!is_delete && row.op_type() != cdcpb::Event_Row_OpType_PUT &&
          row.type() != cdcpb::Event_LogType_ROLLBACK) {
        return Violation("unknown op type");
      }
      switch (row.type()) {
        case cdcpb::Event_LogType_PREWRITE:
          prewrites_[txn] =
              Prewrite{is_delete, row.value(),
                       row.old_value().empty() ? std::nullopt : std::optional(row.old_value())};
          break;
        case cdcpb::Event_LogType_ROLLBACK:
          prewrites_.erase(txn);
          break;
        case cdcpb::Event_LogType_COMMITTED: {
          if (Ts(row.commit_ts()) <= resolved_ts_) return Violation("commit below resolved ts");
          CommittedChange c{Ts(row.commit_ts()), Ts(row.start_ts()), row.key(),
                            is_delete,           row.value(),        std::nullopt};
          if (!row.old_value().empty()) c.old_value = row.old_value();
          committed_.emplace(std::pair(row.commit_ts(), row.key()), std::move(c));
          break;
        }
        case cdcpb::Event_LogType_COMMIT: {
          auto it = prewrites_.find(txn);
          if (it == prewrites_.end()) return Violation("COMMIT without PREWRITE");
          if (Ts(row.commit_ts()) <= resolved_ts_) return Violation("commit below resolved ts");
          CommittedChange c{
              Ts(row.commit_ts()),  Ts(row.start_ts()),          row.key(),
              it->second.is_delete, std::move(it->second.value), std::move(it->second.old_value)};
          prewrites_.erase(it);
          committed_.emplace(std::pair(row.commit_ts(), row.key()), std::move(c));
          break;
        }
        default:
          return Violation("unexpected row type");
      }
    }
  }
  return Status::Ok();
}

std::vector<CommittedChange> WireDecoder::TakeResolved() {
  std::vector<CommittedChange> out;
  for (auto it = committed_.begin();
       it != committed_.end() && it->first.first <= resolved_ts_.value();) {
    out.push_back(std::move(it->second));
    it = committed_.erase(it);
  }
  return out;
}

}  // namespace sluice::demo
