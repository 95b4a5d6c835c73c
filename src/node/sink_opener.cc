#include "node/sink_opener.h"

#include "sink/blackhole/blackhole_sink.h"
#include "sink/mysql/mysql_sink.h"
#include "sink/sink_uri.h"
#include "sink/storage/storage_options.h"
#include "sink/storage/storage_sink.h"

namespace sluice::node {

Result<sink::SinkUri> EffectiveSinkUri(const SinkOpenOptions& options) {
  ASSIGN_OR_RETURN(sink::SinkUri uri, sink::SinkUri::Parse(options.sink_uri));
  for (auto& [key, value] : config::SinkParams(options.config, uri.scheme)) {
    uri.params.emplace(key, std::move(value));
  }
  return uri;
}

Result<std::unique_ptr<sink::Sink>> OpenSink(const SinkOpenOptions& options) {
  ASSIGN_OR_RETURN(sink::SinkUri uri, EffectiveSinkUri(options));
  if (uri.scheme == "mysql" || uri.scheme == "tidb" || uri.scheme == "mysql+ssl" ||
      uri.scheme == "tidb+ssl") {
    sink::MysqlSinkOptions o;
    o.changefeed_id = options.changefeed_id;
    o.start_ts = options.start_ts;
    o.clock = options.clock;
    o.write_permit = options.write_permit;
    o.epoch = options.epoch.value();
    ASSIGN_OR_RETURN(std::unique_ptr<sink::MysqlSink> s, sink::MysqlSink::Create(uri, o));
    return std::unique_ptr<sink::Sink>(std::move(s));
  }
  if (uri.scheme == "file") {
    ASSIGN_OR_RETURN(sink::storage::StorageSinkOptions o,
                     sink::storage::StorageSinkOptions::FromUri(uri));
    o.write_permit = options.write_permit;
    ASSIGN_OR_RETURN(std::unique_ptr<sink::storage::StorageSink> s,
                     sink::storage::StorageSink::Create(std::move(o), options.clock));
    return std::unique_ptr<sink::Sink>(std::move(s));
  }
  if (uri.scheme == "blackhole") return std::unique_ptr<sink::Sink>(new sink::BlackholeSink());
  return NotSupported("sink scheme \"" + uri.scheme + "\" is not supported by this node");
}

}  // namespace sluice::node
