// CanalJsonEncoder: TiCDC's canal-json protocol (pkg/sink/codec/canal).
// A row message is, byte for byte as TiCDC writes it:
//   {"id":0,"database":..,"table":..,"pkNames":[..],"isDdl":false,
//    "type":"INSERT|UPDATE|DELETE","es":<commit physical ms>,"ts":<now ms>,
//    "sql":"","sqlType":{..},"mysqlType":{..},"old":..,"data":[{..}]
//    [,"_tidb":{"commitTs":N}]}
// Values are strings (NULL as null), binary bytes as ISO-8859-1 code
// points, ENUM/SET as their numbers. ("mysqlType" is a Go map in TiCDC,
// so its key order there is random; here it follows the columns.)
// DDL and watermark messages follow TiCDC's JSONMessage struct. In storage
// files each message is followed by the terminator. Immutable after
// construction; thread-safe.
#pragma once

#include <string>

#include "common/clock.h"
#include "sink/codec/codec_config.h"
#include "sink/codec/txn_encoder.h"

namespace sluice::sink::codec {

class CanalJsonEncoder final : public TxnEncoder {
 public:
  // `clock` gives the "ts" (build time) field; not owned, outlives this.
  CanalJsonEncoder(CanalJsonConfig config, const Clock* clock)
      : config_(std::move(config)), clock_(clock) {}

  Status Append(const event::DmlEvent& event, std::string* out) const override;
  std::string FileHeader(const event::TableSchema&) const override { return ""; }
  std::string_view extension() const override { return ".json"; }

  // One row message without the terminator.
  Result<std::string> EncodeRow(const event::TableSchema& schema, Ts commit_ts,
                                const event::RowChange& row) const;
  // A DDL message ("isDdl":true, "type" from the action, "sql" the query).
  std::string EncodeDdl(const event::DdlEvent& ddl) const;
  // A TIDB_WATERMARK message (TiCDC sends it only with the extension on).
  std::string EncodeWatermark(Ts ts) const;

 private:
  int64_t NowMs() const;

  CanalJsonConfig config_;
  const Clock* clock_;
};

// Canal's event type name for a DDL action ("CREATE", "ALTER", "QUERY", ...).
std::string_view CanalDdlType(model::ActionType type);

}  // namespace sluice::sink::codec
