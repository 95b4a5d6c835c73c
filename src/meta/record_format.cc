#include "meta/record_format.h"

namespace sluice::meta::format {
namespace {

// Reads fixed-width fields from a byte string, remembering the first failure.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  bool U8(uint8_t* v) {
    if (rest_.empty()) return false;
    *v = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return true;
  }
  bool U32(uint32_t* v) {
    if (rest_.size() < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v = (*v << 8) | static_cast<uint8_t>(rest_[i]);
    rest_.remove_prefix(4);
    return true;
  }
  bool I64(int64_t* v) {
    if (rest_.size() < 8) return false;
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u = (u << 8) | static_cast<uint8_t>(rest_[i]);
    *v = static_cast<int64_t>(u);
    rest_.remove_prefix(8);
    return true;
  }
  bool Bytes(std::string* out) {
    uint32_t n = 0;
    if (!U32(&n) || rest_.size() < n) return false;
    out->assign(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return true;
  }
  std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
};

void PutU32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

void PutI64(std::string* out, int64_t v) { out->append(EncodeU64(static_cast<uint64_t>(v))); }

void PutBytes(std::string* out, std::string_view bytes) {
  PutU32(out, static_cast<uint32_t>(bytes.size()));
  out->append(bytes);
}

void PutRevisions(std::string* out, const KeyValue& kv) {
  PutI64(out, kv.create_revision);
  PutI64(out, kv.mod_revision);
  PutI64(out, kv.version);
  PutI64(out, kv.lease.value());
}

bool ReadRevisions(Reader* r, KeyValue* kv) {
  int64_t lease = 0;
  if (!r->I64(&kv->create_revision) || !r->I64(&kv->mod_revision) || !r->I64(&kv->version) ||
      !r->I64(&lease)) {
    return false;
  }
  kv->lease = LeaseId(lease);
  return true;
}

Status CheckVersion(Reader* r, std::string_view what) {
  uint8_t version = 0;
  if (!r->U8(&version)) return Corruption(std::string(what) + ": empty record");
  if (version != kFormatVersion) {
    return Corruption(std::string(what) + ": unknown format version " + std::to_string(version));
  }
  return Status::Ok();
}

}  // namespace

std::string RevisionKey() { return "mrevision"; }
std::string LeaseNextKey() { return "mlease_next"; }

std::string UserKey(std::string_view key) {
  std::string out(1, kUserPrefix);
  out.append(key);
  return out;
}

std::string LeaseKey(LeaseId lease) {
  return std::string(1, kLeasePrefix) + EncodeU64(static_cast<uint64_t>(lease.value()));
}

std::string EventKey(Revision revision) {
  return std::string(1, kEventPrefix) + EncodeU64(static_cast<uint64_t>(revision));
}

std::string EncodeU64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<char>(v & 0xff);
  return out;
}

Result<uint64_t> DecodeU64(std::string_view bytes) {
  if (bytes.size() != 8)
    return Corruption("metastore: integer of " + std::to_string(bytes.size()) + " bytes");
  Reader r(bytes);
  int64_t v = 0;
  if (!r.I64(&v)) return Corruption("metastore: truncated integer");
  return static_cast<uint64_t>(v);
}

std::string EncodeKeyRecord(const KeyValue& kv) {
  std::string out(1, static_cast<char>(kFormatVersion));
  PutRevisions(&out, kv);
  out.append(kv.value);
  return out;
}

Result<KeyValue> DecodeKeyRecord(std::string_view user_key, std::string_view bytes) {
  Reader r(bytes);
  RETURN_IF_ERROR(CheckVersion(&r, "metastore key record"));
  KeyValue kv;
  kv.key.assign(user_key);
  if (!ReadRevisions(&r, &kv)) return Corruption("metastore key record: truncated");
  kv.value.assign(r.rest());
  if (kv.create_revision <= 0 || kv.mod_revision < kv.create_revision || kv.version <= 0) {
    return Corruption("metastore key record: inconsistent revisions");
  }
  return kv;
}

std::string EncodeLeaseRecord(int64_t ttl_ms) {
  std::string out(1, static_cast<char>(kFormatVersion));
  PutI64(&out, ttl_ms);
  return out;
}

Result<int64_t> DecodeLeaseRecord(std::string_view bytes) {
  Reader r(bytes);
  RETURN_IF_ERROR(CheckVersion(&r, "metastore lease record"));
  int64_t ttl_ms = 0;
  if (!r.I64(&ttl_ms) || !r.rest().empty() || ttl_ms <= 0) {
    return Corruption("metastore lease record: bad ttl");
  }
  return ttl_ms;
}

Result<LeaseId> DecodeLeaseKey(std::string_view store_key) {
  if (store_key.size() != 9 || store_key[0] != kLeasePrefix) {
    return Corruption("metastore lease key of " + std::to_string(store_key.size()) + " bytes");
  }
  ASSIGN_OR_RETURN(uint64_t id, DecodeU64(store_key.substr(1)));
  return LeaseId(static_cast<int64_t>(id));
}

std::string EncodeEvents(const std::vector<WatchEvent>& events) {
  std::string out(1, static_cast<char>(kFormatVersion));
  PutU32(&out, static_cast<uint32_t>(events.size()));
  for (const WatchEvent& e : events) {
    out.push_back(e.type == WatchEvent::Type::kPut ? 1 : 2);
    PutBytes(&out, e.kv.key);
    PutBytes(&out, e.kv.value);
    PutRevisions(&out, e.kv);
  }
  return out;
}

Result<std::vector<WatchEvent>> DecodeEvents(std::string_view bytes) {
  Reader r(bytes);
  RETURN_IF_ERROR(CheckVersion(&r, "metastore event record"));
  uint32_t count = 0;
  if (!r.U32(&count)) return Corruption("metastore event record: truncated count");
  std::vector<WatchEvent> events;
  for (uint32_t i = 0; i < count; ++i) {
    WatchEvent e;
    uint8_t type = 0;
    if (!r.U8(&type) || (type != 1 && type != 2) || !r.Bytes(&e.kv.key) || !r.Bytes(&e.kv.value) ||
        !ReadRevisions(&r, &e.kv)) {
      return Corruption("metastore event record: bad event " + std::to_string(i));
    }
    e.type = type == 1 ? WatchEvent::Type::kPut : WatchEvent::Type::kDelete;
    events.push_back(std::move(e));
  }
  if (!r.rest().empty()) return Corruption("metastore event record: trailing bytes");
  return events;
}

}  // namespace sluice::meta::format
