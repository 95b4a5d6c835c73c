// Randomly damaged inputs for every decoder: each must return OK,
// Corruption or InvalidArgument and never read outside its input (run under
// the asan build to check the latter).
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <vector>

#include "codec/datum_codec.h"
#include "codec/decimal.h"
#include "codec/json_binary.h"
#include "codec/metakey.h"
#include "codec/mysql_type.h"
#include "codec/row.h"
#include "codec/rowcodec_v1.h"
#include "codec/rowcodec_v2.h"
#include "codec/tablecodec.h"

namespace sluice::codec {
namespace {

using Decoder = std::function<Status(std::string_view)>;

bool Acceptable(const Status& st) {
  return st.ok() || st.code() == Code::kCorruption || st.code() == Code::kInvalidArgument;
}

std::vector<ColumnSpec> AllTypeSpecs() {
  std::vector<ColumnSpec> specs;
  const uint8_t types[] = {
      mysql_type::kTiny,     mysql_type::kLonglong,   mysql_type::kFloat,
      mysql_type::kDouble,   mysql_type::kNewDecimal, mysql_type::kDatetime,
      mysql_type::kDuration, mysql_type::kEnum,       mysql_type::kBit,
      mysql_type::kJson,     mysql_type::kVarchar,    mysql_type::kVectorFloat32};
  for (uint8_t t : types) {
    int64_t id = static_cast<int64_t>(specs.size()) + 1;
    specs.push_back({.id = id, .type = t, .is_handle = id == 2});
  }
  return specs;
}

std::vector<Datum> AllTypeValues(const std::string& json) {
  return {Datum::Int64(-3),
          Datum::Int64(1LL << 40),
          Datum::Float32(2.5f),
          Datum::Float64(-7.25),
          Datum::Decimal("-12345.678", 12, 3),
          Datum::Time(0x19a5443105000000ULL, mysql_type::kDatetime, 0),
          Datum::Duration(123456789, 0),
          Datum::Enum(2),
          Datum::Bit(5),
          Datum::Json(json),
          Datum::Bytes("some text"),
          Datum::VectorFloat32View(std::string_view("\x01\x00\x00\x00\x00\x00\x80\x3f", 8))};
}

// Decodes a row and renders every JSON column, as a consumer would.
Status DecodeRowAndJson(std::string_view row, const RowHandle& handle) {
  static const std::vector<ColumnSpec> specs = AllTypeSpecs();
  std::vector<Datum> out;
  RETURN_IF_ERROR(DecodeRow(row, specs, handle, &out));
  for (const Datum& d : out) {
    if (d.kind() == DatumKind::kJson) RETURN_IF_ERROR(JsonBinaryToText(d.bytes()).status());
  }
  return Status::Ok();
}

struct Target {
  std::string name;
  std::string seed;
  Decoder decode;
};

std::vector<Target> Targets() {
  std::string json = *JsonTextToBinary(R"({"k": [1, -2, 3.5, "s", null, {"n": true}], "z": ""})");
  std::vector<Datum> values = AllTypeValues(json);
  std::vector<int64_t> ids;
  for (int64_t i = 1; i <= static_cast<int64_t>(values.size()); ++i) ids.push_back(i);
  std::string v2, v2_large, v1, datums, common;
  EXPECT_TRUE(EncodeRowV2(ids, values, &v2, {.checksum_version = 1, .checksum_key = "k"}).ok());
  EXPECT_TRUE(EncodeRowV2(ids, values, &v2_large, {.force_large = true}).ok());
  EXPECT_TRUE(EncodeRowV1(ids, values, &v1).ok());
  for (const Datum& d : values) EXPECT_TRUE(EncodeKeyDatum(d, &datums).ok());
  EXPECT_TRUE(EncodeKeyDatums({Datum::Int64(9), Datum::Bytes("pk")}, &common).ok());
  std::string decimal;
  EXPECT_TRUE(EncodeDecimalBin("-1234567890.123456789", 30, 9, &decimal).ok());

  Decoder row = [common](std::string_view in) {
    RETURN_IF_ERROR(DecodeRowAndJson(in, RowHandle::Int(1)));
    return DecodeRowAndJson(in, RowHandle::Common(common));
  };
  return {
      {"row_v2", v2, row},
      {"row_v2_large", v2_large, row},
      {"row_v1", v1, row},
      {"json", json, [](std::string_view in) { return JsonBinaryToText(in).status(); }},
      {"datums", datums, [](std::string_view in) { return DecodeDatums(in).status(); }},
      {"row_key", EncodeRowKeyWithCommonHandle(TableId(7), common),
       [](std::string_view in) { return DecodeRowKey(in).status(); }},
      {"index_key", EncodeIndexPrefix(TableId(7), 3) + datums,
       [](std::string_view in) {
         ASSIGN_OR_RETURN(DecodedIndexKey k, DecodeIndexKey(in));
         return DecodeDatums(k.values).status();
       }},
      {"meta_key", EncodeMetaHashFieldKey("DB:12", "Table:345"),
       [](std::string_view in) { return DecodeMetaKey(in).status(); }},
      {"decimal", decimal,
       [](std::string_view in) {
         std::string text;
         return DecodeDecimalBin(&in, 30, 9, &text);
       }},
  };
}

std::string Mutate(std::string s, std::mt19937* rng) {
  int edits = 1 + static_cast<int>((*rng)() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t pos = s.empty() ? 0 : (*rng)() % s.size();
    switch ((*rng)() % 5) {
      case 0:
        if (!s.empty()) s[pos] = static_cast<char>((*rng)());
        break;
      case 1:
        if (!s.empty()) s[pos] = static_cast<char>(s[pos] ^ (1 << ((*rng)() % 8)));
        break;
      case 2:
        s.insert(pos, 1, static_cast<char>((*rng)()));
        break;
      case 3:
        if (!s.empty()) s.erase(pos, 1 + (*rng)() % 4);
        break;
      default:
        s.resize(pos);
        break;
    }
  }
  return s;
}

TEST(MalformedTest, SeedsDecode) {
  for (const Target& t : Targets()) {
    Status st = t.decode(t.seed);
    EXPECT_TRUE(st.ok()) << t.name << ": " << st.ToString();
  }
}

TEST(MalformedTest, RandomDamageNeverEscapesStatus) {
  std::mt19937 rng(20240229);
  for (const Target& t : Targets()) {
    int corrupt = 0;
    for (int i = 0; i < 4000; ++i) {
      std::string damaged = Mutate(t.seed, &rng);
      Status st = t.decode(damaged);
      ASSERT_TRUE(Acceptable(st)) << t.name << ": " << st.ToString();
      corrupt += st.code() == Code::kCorruption;
    }
    EXPECT_GT(corrupt, 400) << t.name;  // damage is detected, not silently accepted
  }
}

TEST(MalformedTest, EveryTruncationIsCorruption) {
  for (const Target& t : Targets()) {
    // Prefixes of datum lists (v1 rows, index values, common handles) can be
    // valid shorter lists.
    if (t.name == "row_v1" || t.name == "datums" || t.name == "index_key" || t.name == "row_key") {
      continue;
    }
    for (size_t n = 0; n < t.seed.size(); ++n) {
      EXPECT_EQ(t.decode(t.seed.substr(0, n)).code(), Code::kCorruption) << t.name << " " << n;
    }
  }
}

}  // namespace
}  // namespace sluice::codec
