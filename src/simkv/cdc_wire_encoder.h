// The protobuf wire encoding of the ChangeDataEvent messages a store's stream
// writer sends, written straight from row views instead of through Row
// messages. The bytes are exactly what protobuf's serializer writes for the
// same message: fields in field-number order, proto3 defaults (zero, empty)
// left out, a set `entries` always present. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "cdcpb.pb.h"
#include "simkv/cdc_rows.h"

namespace sluice::simkv::wire {

// The encoded size of one cdcpb.Event.Row body.
size_t RowSize(const RowView& row);

// Appends one `ChangeDataEvent.events` element: an Event of (region_id,
// index, request_id) whose `entries` holds `rows`.
void AppendRowsEvent(uint64_t region_id, uint64_t index, uint64_t request_id,
                     std::span<const RowView> rows, std::string* out);
// Appends one `ChangeDataEvent.events` element serialized by protobuf.
void AppendEvent(const cdcpb::Event& event, std::string* out);
// Appends `ChangeDataEvent.resolved_ts`.
void AppendResolvedTs(const cdcpb::ResolvedTs& resolved, std::string* out);

}  // namespace sluice::simkv::wire
