#include "codec/metakey.h"

#include "codec/number.h"
#include "common/memcomparable.h"

namespace sluice::codec {

namespace {

std::string MetaKeyOf(std::string_view key, char type) {
  std::string out(1, kMetaPrefix);
  memcomparable::EncodeBytes(key, &out);
  EncodeUint(static_cast<uint8_t>(type), &out);
  return out;
}

// Decodes the part after the type flag into `mk`.
Status DecodeMetaSuffix(std::string_view rest, MetaKey* mk) {
  switch (mk->type) {
    case meta_type::kHashData:
      RETURN_IF_ERROR(memcomparable::DecodeBytes(&rest, &mk->field));
      break;
    case meta_type::kListData: {
      ASSIGN_OR_RETURN(mk->index, DecodeInt(&rest));
      break;
    }
    case meta_type::kStringMeta:
    case meta_type::kStringData:
    case meta_type::kHashMeta:
    case meta_type::kListMeta:
      break;
    default:
      return Corruption("meta key: unknown type flag");
  }
  if (!rest.empty()) return Corruption("meta key: trailing bytes");
  return Status::Ok();
}

}  // namespace

std::string EncodeMetaStringKey(std::string_view key) {
  return MetaKeyOf(key, meta_type::kStringData);
}

std::string EncodeMetaHashFieldKey(std::string_view key, std::string_view field) {
  std::string out = MetaKeyOf(key, meta_type::kHashData);
  memcomparable::EncodeBytes(field, &out);
  return out;
}

std::string EncodeMetaHashMetaKey(std::string_view key) {
  return MetaKeyOf(key, meta_type::kHashMeta);
}

std::string EncodeMetaListItemKey(std::string_view key, int64_t index) {
  std::string out = MetaKeyOf(key, meta_type::kListData);
  EncodeInt(index, &out);
  return out;
}

std::string EncodeMetaListMetaKey(std::string_view key) {
  return MetaKeyOf(key, meta_type::kListMeta);
}

bool IsMetaKey(std::string_view raw) { return !raw.empty() && raw[0] == kMetaPrefix; }

Result<MetaKey> DecodeMetaKey(std::string_view raw) {
  if (!IsMetaKey(raw)) return Corruption("meta key: missing 'm' prefix");
  std::string_view rest = raw.substr(1);
  MetaKey mk;
  RETURN_IF_ERROR(memcomparable::DecodeBytes(&rest, &mk.key));
  ASSIGN_OR_RETURN(uint64_t type, DecodeUint(&rest));
  if (type > 0xFF) return Corruption("meta key: type flag out of range");
  mk.type = static_cast<char>(type);
  RETURN_IF_ERROR(DecodeMetaSuffix(rest, &mk));
  return mk;
}

}  // namespace sluice::codec
