// Shared pieces of the proto/ golden tests: a hand encoder for the protobuf
// wire format that does not use libprotobuf, the registry of golden cases and
// the helpers that compare messages and bytes.
//
// Each *_golden_test.cc registers its cases with SLUICE_GOLDEN_CASES; the
// parameterized golden tests, the coverage test and the mutation test in the
// same binary see the cases of every file through AllGoldens().

#pragma once

#include <google/protobuf/message.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::golden {

using std::string_literals::operator""s;

// ---------------------------------------------------------------------------
// Hand encoder.

enum WireType : int { kVarint = 0, kLen = 2 };

// LEB128 unsigned varint.
inline std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

// One field: tag (number << 3 | wire type), then the payload. A
// length-delimited payload is prefixed with its length.
inline std::string Field(int number, WireType wire_type, std::string_view payload) {
  std::string out = Varint((static_cast<uint64_t>(number) << 3) | wire_type);
  if (wire_type == kLen) out += Varint(payload.size());
  out.append(payload);
  return out;
}

// Varint field (uint32/64, int32/64, bool, enum).
inline std::string V(int number, uint64_t value) { return Field(number, kVarint, Varint(value)); }

// Length-delimited field (bytes, message, packed repeated).
inline std::string L(int number, std::string_view payload) { return Field(number, kLen, payload); }

inline std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

// Two's complement of a signed value, as int32/int64 fields put it on the wire.
inline uint64_t Signed(int64_t v) { return static_cast<uint64_t>(v); }

// ---------------------------------------------------------------------------
// Comparison helpers.

// Upper-case hex with a space between bytes, so that a byte mismatch in
// EXPECT_EQ(Hex(a), Hex(b)) reads as a diff of the wire.
inline std::string Hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// Equal messages (fields, unknown fields and oneof cases); on failure prints
// both.
inline ::testing::AssertionResult SameMessage(const google::protobuf::Message& actual,
                                              const google::protobuf::Message& expected) {
  if (google::protobuf::util::MessageDifferencer::Equals(actual, expected)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "actual:\n"
                                       << actual.DebugString() << "expected:\n"
                                       << expected.DebugString();
}

template <typename T>
bool Parses(std::string_view bytes) {
  T m;
  return m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// ---------------------------------------------------------------------------
// Golden cases.

struct Golden {
  std::string name;  // gtest parameter name
  std::shared_ptr<const google::protobuf::Message> message;
  std::string expected;
};

inline void PrintTo(const Golden& g, std::ostream* os) { *os << g.name; }

template <typename T>
std::shared_ptr<const google::protobuf::Message> Own(const T& m) {
  return std::make_shared<T>(m);
}

// Fields that this project does not model: a varint, a nested message and a
// length-delimited text. Messages declared without fields must keep them.
inline const std::string kForeign = Cat({V(1, 3), L(2, V(1, 1)), L(15, "opaque")});

// A message without modelled fields, parsed from foreign bytes.
template <typename T>
Golden Opaque(std::string name) {
  auto m = std::make_shared<T>();
  if (!m->ParseFromString(kForeign)) m->Clear();  // a failed parse shows as a byte mismatch
  return {std::move(name), m, kForeign};
}

using GoldenAdder = void (*)(std::vector<Golden>&);

// Registers a group of golden cases during static initialization. Groups are
// collected in name order; a group name must be unique.
struct GoldenRegistrar {
  GoldenRegistrar(const char* group, GoldenAdder add);
};

// The cases of every registered group. Built on first use, which must come
// after static initialization (test bodies and gtest parameter generators do).
const std::vector<Golden>& AllGoldens();

// Every .proto file compiled into sluice_proto.
inline constexpr const char* kProtoFiles[] = {"cdcpb.proto",  "errorpb.proto", "kvrpcpb.proto",
                                              "metapb.proto", "pdpb.proto",    "raft_cmdpb.proto",
                                              "tikvpb.proto", "etcd/kv.proto", "etcd/rpc.proto"};

}  // namespace sluice::golden

// Registers `fn` (a void(std::vector<Golden>&)) as the golden group `group`.
#define SLUICE_GOLDEN_CASES(group, fn) \
  const ::sluice::golden::GoldenRegistrar sluice_golden_registrar_##group(#group, fn)
