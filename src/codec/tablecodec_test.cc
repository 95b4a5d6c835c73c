#include "codec/tablecodec.h"

#include <gtest/gtest.h>

#include <limits>

#include "codec/datum_codec.h"
#include "codec/metakey.h"
#include "codec/test_util.h"

namespace sluice::codec {
namespace {

using testing::Hex;
using testing::Unhex;

std::string WithByte(std::string s, size_t pos, char c) {
  s[pos] = c;
  return s;
}

constexpr char kRowKey100_1[] = "74 80 00 00 00 00 00 00 64 5F 72 80 00 00 00 00 00 00 01";

TEST(TableCodecTest, RecordKeyGoldenVector) {
  std::string key = EncodeRowKey(TableId(100), 1);
  EXPECT_EQ(Hex(key), kRowKey100_1);
  EXPECT_EQ(key.size(), kRecordRowKeyLength);
  EXPECT_TRUE(IsRecordKey(key));
  EXPECT_FALSE(IsIndexKey(key));
  Result<DecodedRowKey> decoded = DecodeRowKey(key);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->table_id, TableId(100));
  EXPECT_TRUE(decoded->handle.is_int);
  EXPECT_EQ(decoded->handle.int_value, 1);
  EXPECT_EQ(*DecodeTableId(key), TableId(100));
}

TEST(TableCodecTest, RecordKeysRoundTripExtremes) {
  for (int64_t table :
       {int64_t{1}, int64_t{281474976710654}, std::numeric_limits<int64_t>::max()}) {
    for (int64_t handle : {std::numeric_limits<int64_t>::min(), int64_t{-1}, int64_t{0},
                           std::numeric_limits<int64_t>::max()}) {
      Result<DecodedRowKey> d = DecodeRowKey(EncodeRowKey(TableId(table), handle));
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(d->table_id.value(), table);
      EXPECT_EQ(d->handle.int_value, handle);
    }
  }
  // Handles order like integers inside one table.
  EXPECT_LT(EncodeRowKey(TableId(5), -1), EncodeRowKey(TableId(5), 0));
  EXPECT_LT(EncodeRowKey(TableId(5), INT64_MAX), EncodeRowKey(TableId(6), INT64_MIN));
}

TEST(TableCodecTest, CommonHandleRecordKey) {
  std::string handle;
  ASSERT_TRUE(EncodeKeyDatums({Datum::Bytes("abc"), Datum::Int64(7)}, &handle).ok());
  std::string key = EncodeRowKeyWithCommonHandle(TableId(42), handle);
  EXPECT_EQ(Hex(key),
            "74 80 00 00 00 00 00 00 2A 5F 72 01 61 62 63 00 00 00 00 00 FA 03 80 00 "
            "00 00 00 00 00 07");
  Result<DecodedRowKey> d = DecodeRowKey(key);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->handle.is_int);
  EXPECT_EQ(d->handle.common, handle);
  EXPECT_EQ(d->handle.Encoded(), handle);
  EXPECT_EQ(EncodeRowKeyWithHandle(TableId(42), d->handle), key);
  Result<std::vector<Datum>> cols = DecodeDatums(d->handle.common);
  ASSERT_TRUE(cols.ok());
  EXPECT_EQ((*cols)[0], Datum::Bytes("abc"));
  EXPECT_EQ((*cols)[1], Datum::Int64(7));
}

TEST(TableCodecTest, MalformedRowKeys) {
  std::string key = Unhex(kRowKey100_1);
  for (std::string bad :
       {std::string(), key.substr(0, 11), key.substr(0, 12), key + "\x03", WithByte(key, 0, 'm'),
        WithByte(key, 10, 'i'), key.substr(0, 11) + Unhex("01 61 00 00 00 00 00 00 00 F0")}) {
    EXPECT_EQ(DecodeRowKey(bad).status().code(), Code::kCorruption) << Hex(bad);
  }
  EXPECT_FALSE(IsRecordKey(key.substr(0, 11)));
  EXPECT_EQ(DecodeTableId("t\x80").status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeTableId("mDBs").status().code(), Code::kCorruption);
}

TEST(TableCodecTest, IndexKeys) {
  std::string unique;
  ASSERT_TRUE(EncodeIndexKey(TableId(1), 1, {Datum::Int64(5)}, nullptr, &unique).ok());
  EXPECT_EQ(Hex(unique),
            "74 80 00 00 00 00 00 00 01 5F 69 80 00 00 00 00 00 00 01 03 80 00 00 "
            "00 00 00 00 05");
  EXPECT_TRUE(IsIndexKey(unique));
  EXPECT_FALSE(IsRecordKey(unique));

  RowHandle handle = RowHandle::Int(9);
  std::string non_unique;
  ASSERT_TRUE(EncodeIndexKey(TableId(1), 1, {Datum::Int64(5)}, &handle, &non_unique).ok());
  EXPECT_EQ(non_unique, unique + Unhex("03 80 00 00 00 00 00 00 09"));

  Result<DecodedIndexKey> d = DecodeIndexKey(non_unique);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->table_id, TableId(1));
  EXPECT_EQ(d->index_id, 1);
  Result<std::vector<Datum>> values = DecodeDatums(d->values);
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(values->size(), 2u);
  EXPECT_EQ(DecodeIndexKey(unique.substr(0, 15)).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeIndexKey(EncodeRowKey(TableId(1), 1)).status().code(), Code::kCorruption);
}

TEST(TableCodecTest, RecordSpans) {
  KeySpan raw = TableRecordSpan(TableId(100));
  EXPECT_EQ(Hex(raw.start), "74 80 00 00 00 00 00 00 64 5F 72");
  EXPECT_EQ(Hex(raw.end), "74 80 00 00 00 00 00 00 64 5F 73");
  std::string row = EncodeRowKey(TableId(100), INT64_MAX);
  EXPECT_TRUE(raw.start <= row && row < raw.end);
  KeySpan cmp = ComparableTableRecordSpan(TableId(100));
  EXPECT_EQ(Hex(cmp.start), "74 80 00 00 00 00 00 00 FF 64 5F 72 00 00 00 00 00 FA");
  EXPECT_EQ(Hex(cmp.end), "74 80 00 00 00 00 00 00 FF 64 5F 73 00 00 00 00 00 FA");
  // A memcomparable row key of the table falls inside.
  std::string cmp_row =
      Unhex("74 80 00 00 00 00 00 00 FF 64 5F 72 80 00 00 00 00 FF 00 00 01 00 00 00 00 00 FA");
  EXPECT_TRUE(cmp.start <= cmp_row && cmp_row < cmp.end);
}

TEST(MetaKeyTest, GoldenHashFieldKey) {
  EXPECT_EQ(Hex(EncodeMetaHashFieldKey("DBs", "DB:1")),
            "6D 44 42 73 00 00 00 00 00 FA 00 00 00 00 00 00 00 68 44 42 3A 31 00 00 00 00 FB");
  EXPECT_EQ(Hex(EncodeMetaStringKey("K")), "6D 4B 00 00 00 00 00 00 00 F8 00 00 00 00 00 00 00 73");
}

TEST(MetaKeyTest, RoundTripsEveryShape) {
  struct Case {
    std::string raw;
    MetaKey want;
  };
  for (const Case& c : {
           Case{EncodeMetaStringKey("SchemaVersionKey"), {'s', "SchemaVersionKey", "", 0}},
           Case{EncodeMetaHashFieldKey("DB:2", "Table:100"), {'h', "DB:2", "Table:100", 0}},
           Case{EncodeMetaHashMetaKey("DBs"), {'H', "DBs", "", 0}},
           Case{EncodeMetaListItemKey("DDLJobList", -3), {'l', "DDLJobList", "", -3}},
           Case{EncodeMetaListMetaKey("DDLJobList"), {'L', "DDLJobList", "", 0}},
           Case{EncodeMetaHashFieldKey("DDLJobHistory", Unhex("00 00 00 00 00 00 00 2A")),
                {'h', "DDLJobHistory", Unhex("00 00 00 00 00 00 00 2A"), 0}},
       }) {
    EXPECT_TRUE(IsMetaKey(c.raw));
    Result<MetaKey> got = DecodeMetaKey(c.raw);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(MetaKeyTest, MalformedMetaKeys) {
  std::string good = EncodeMetaHashFieldKey("DBs", "DB:1");
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_EQ(DecodeMetaKey(good.substr(0, n)).status().code(), Code::kCorruption) << n;
  }
  std::string bad_type = good;
  bad_type[17] = 'x';
  EXPECT_EQ(DecodeMetaKey(bad_type).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeMetaKey(good + "z").status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeMetaKey(WithByte(good, 0, 't')).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeMetaKey(EncodeMetaStringKey("k") + "x").status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::codec
