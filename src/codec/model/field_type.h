// Column type (TiDB `types.FieldType`) and the MySQL type and flag numbers
// it carries. JSON keys are capitalised because TiDB marshals the type
// through a struct without tags:
//   {"Tp":3,"Flag":4099,"Flen":11,"Decimal":0,"Charset":"binary",
//    "Collate":"binary","Elems":null,"ElemsIsBinaryLit":null,"Array":false}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/go_json.h"

namespace sluice::model {

// MySQL column type codes (`mysql.Type*`).
inline constexpr uint8_t kTypeUnspecified = 0;
inline constexpr uint8_t kTypeTiny = 1;
inline constexpr uint8_t kTypeShort = 2;
inline constexpr uint8_t kTypeLong = 3;
inline constexpr uint8_t kTypeFloat = 4;
inline constexpr uint8_t kTypeDouble = 5;
inline constexpr uint8_t kTypeNull = 6;
inline constexpr uint8_t kTypeTimestamp = 7;
inline constexpr uint8_t kTypeLonglong = 8;
inline constexpr uint8_t kTypeInt24 = 9;
inline constexpr uint8_t kTypeDate = 10;
inline constexpr uint8_t kTypeDuration = 11;
inline constexpr uint8_t kTypeDatetime = 12;
inline constexpr uint8_t kTypeYear = 13;
inline constexpr uint8_t kTypeNewDate = 14;
inline constexpr uint8_t kTypeVarchar = 15;
inline constexpr uint8_t kTypeBit = 16;
inline constexpr uint8_t kTypeTiDBVectorFloat32 = 0xe1;
inline constexpr uint8_t kTypeJson = 0xf5;
inline constexpr uint8_t kTypeNewDecimal = 0xf6;
inline constexpr uint8_t kTypeEnum = 0xf7;
inline constexpr uint8_t kTypeSet = 0xf8;
inline constexpr uint8_t kTypeTinyBlob = 0xf9;
inline constexpr uint8_t kTypeMediumBlob = 0xfa;
inline constexpr uint8_t kTypeLongBlob = 0xfb;
inline constexpr uint8_t kTypeBlob = 0xfc;
inline constexpr uint8_t kTypeVarString = 0xfd;
inline constexpr uint8_t kTypeString = 0xfe;
inline constexpr uint8_t kTypeGeometry = 0xff;

// Column flag bits (`mysql.*Flag`).
inline constexpr uint64_t kNotNullFlag = 1 << 0;
inline constexpr uint64_t kPriKeyFlag = 1 << 1;
inline constexpr uint64_t kUniqueKeyFlag = 1 << 2;
inline constexpr uint64_t kMultipleKeyFlag = 1 << 3;
inline constexpr uint64_t kBlobFlag = 1 << 4;
inline constexpr uint64_t kUnsignedFlag = 1 << 5;
inline constexpr uint64_t kZerofillFlag = 1 << 6;
inline constexpr uint64_t kBinaryFlag = 1 << 7;
inline constexpr uint64_t kEnumFlag = 1 << 8;
inline constexpr uint64_t kAutoIncrementFlag = 1 << 9;
inline constexpr uint64_t kTimestampFlag = 1 << 10;
inline constexpr uint64_t kSetFlag = 1 << 11;
inline constexpr uint64_t kNoDefaultValueFlag = 1 << 12;
inline constexpr uint64_t kOnUpdateNowFlag = 1 << 13;
inline constexpr uint64_t kPartKeyFlag = 1 << 14;
inline constexpr uint64_t kNumFlag = 1 << 15;
inline constexpr uint64_t kGeneratedColumnFlag = 1 << 23;

// Flen / Decimal value meaning "not specified".
inline constexpr int64_t kUnspecifiedLength = -1;

struct FieldType {
  uint8_t tp = kTypeUnspecified;
  uint64_t flag = 0;
  int64_t flen = 0;
  int64_t decimal = 0;
  std::string charset;
  std::string collate;
  std::vector<std::string> elems;         // ENUM / SET members.
  std::vector<bool> elems_is_binary_lit;  // Parallel to elems; often empty.
  bool array = false;                     // Multi-valued index element type.

  bool HasFlag(uint64_t bit) const { return (flag & bit) != 0; }
  // The effective type: TiDB reports an array type as JSON.
  uint8_t EffectiveType() const { return array ? kTypeJson : tp; }

  bool operator==(const FieldType&) const = default;
};

// DOM-level codec used by the column and job codecs.
Status DecodeFieldType(const JsonValue& value, std::string_view path, FieldType* out);
JsonValue EncodeFieldType(const FieldType& type);

}  // namespace sluice::model
