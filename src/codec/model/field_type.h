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
#include "codec/mysql_type.h"

namespace sluice::model {

// MySQL type codes and flags are codec/mysql_type.h's.
namespace mysql_type = ::sluice::codec::mysql_type;
namespace mysql_flag = ::sluice::codec::mysql_flag;

// Flen / Decimal value meaning "not specified".
inline constexpr int64_t kUnspecifiedLength = -1;

struct FieldType {
  uint8_t tp = mysql_type::kUnspecified;
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
  uint8_t EffectiveType() const { return array ? mysql_type::kJson : tp; }

  bool operator==(const FieldType&) const = default;
};

// DOM-level codec used by the column and job codecs.
Status DecodeFieldType(const JsonValue& value, std::string_view path, FieldType* out);
JsonValue EncodeFieldType(const FieldType& type);

}  // namespace sluice::model
