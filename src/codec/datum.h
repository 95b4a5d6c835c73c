// Datum: one decoded TiDB value (pkg/types/datum.go, reduced to what CDC
// needs). Byte payloads (strings, JSON, vectors) are either views into the
// buffer they were decoded from or owned copies; a view is only valid while
// that buffer lives. Call MakeOwned() before keeping a datum longer.
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace sluice::codec {

enum class DatumKind : uint8_t {
  kNull,
  kInt64,
  kUint64,
  kFloat32,
  kFloat64,
  kBytes,          // strings and binary strings alike
  kDecimal,        // decimal text plus precision and frac
  kTime,           // packed time plus type (DATE/DATETIME/TIMESTAMP) and fsp
  kDuration,       // nanoseconds plus fsp
  kEnum,           // 1-based index, 0 for the empty value
  kSet,            // bitmask
  kBit,            // BIT(n) as an unsigned integer
  kJson,           // type code byte followed by the binary JSON body
  kVectorFloat32,  // uint32 LE dimension then dimension x float32 LE
  kMinNotNull,     // sentinel below every non-null value (key form only)
  kMax,            // sentinel above every value (key form only)
};

// Stable lower-case name, e.g. "int64".
std::string_view DatumKindName(DatumKind kind);

class Datum {
 public:
  Datum() : i_(0) {}

  static Datum Null() { return Datum(); }
  static Datum Int64(int64_t v);
  static Datum Uint64(uint64_t v);
  static Datum Float32(float v);
  static Datum Float64(double v);
  static Datum Bytes(std::string v);           // owns the bytes
  static Datum BytesView(std::string_view v);  // refers to caller memory
  // `text` is a plain decimal string such as "-12.340" (see decimal.h).
  static Datum Decimal(std::string text, int precision, int frac);
  static Datum Time(uint64_t packed, uint8_t time_type, int fsp);
  static Datum Duration(int64_t nanos, int fsp);
  static Datum Enum(uint64_t v);
  static Datum Set(uint64_t v);
  static Datum Bit(uint64_t v);
  static Datum Json(std::string binary);           // type code + body, owned
  static Datum JsonView(std::string_view binary);  // type code + body, a view
  static Datum VectorFloat32View(std::string_view raw);
  static Datum MinNotNull();
  static Datum Max();

  DatumKind kind() const { return kind_; }
  bool is_null() const { return kind_ == DatumKind::kNull; }

  // Integer payload: kInt64 and kDuration (nanoseconds).
  int64_t int64() const { return i_; }
  // Unsigned payload: kUint64, kTime (packed), kEnum, kSet, kBit.
  uint64_t uint64() const { return u_; }
  double float64() const { return f_; }
  float float32() const { return static_cast<float>(f_); }
  // Byte payload: kBytes, kJson, kVectorFloat32, and the text of kDecimal.
  std::string_view bytes() const { return owned_ ? std::string_view(storage_) : view_; }
  bool owns_bytes() const { return owned_; }

  // kDecimal: precision and frac; kTime: time type; kTime/kDuration: fsp.
  int precision() const { return aux1_; }
  int frac() const { return aux2_; }
  uint8_t time_type() const { return aux1_; }
  int fsp() const { return aux2_; }

  // In-place setters used by the decoders (reuse storage, no allocation for
  // scalar and view payloads).
  void SetNull() { Reset(DatumKind::kNull); }
  void SetInt64(int64_t v) {
    Reset(DatumKind::kInt64);
    i_ = v;
  }
  void SetUint64(uint64_t v) { SetUnsigned(DatumKind::kUint64, v); }
  // For kUint64, kEnum, kSet and kBit.
  void SetUnsigned(DatumKind kind, uint64_t v) {
    Reset(kind);
    u_ = v;
  }
  void SetFloat64(double v) {
    Reset(DatumKind::kFloat64);
    f_ = v;
  }
  void SetFloat32(float v) {
    Reset(DatumKind::kFloat32);
    f_ = v;
  }
  void SetBytesView(std::string_view v) { SetView(DatumKind::kBytes, v); }
  // For kBytes, kJson and kVectorFloat32.
  void SetView(DatumKind kind, std::string_view v) {
    Reset(kind);
    view_ = v;
  }
  void SetTime(uint64_t packed, uint8_t time_type, int fsp);
  void SetDuration(int64_t nanos, int fsp);
  // Switches to an owned payload of `kind` and returns its (cleared) buffer.
  std::string* ResetOwned(DatumKind kind);
  // Switches to kDecimal with the given precision/frac; fill the text buffer.
  std::string* ResetDecimal(int precision, int frac);

  // Copies a viewed payload into owned storage. No-op otherwise.
  void MakeOwned();

  // Human-readable form for tests and logs, e.g. "int64(5)".
  std::string DebugString() const;

  friend bool operator==(const Datum& a, const Datum& b);

 private:
  void Reset(DatumKind kind) {
    kind_ = kind;
    owned_ = false;
    aux1_ = aux2_ = 0;
    view_ = {};
  }

  DatumKind kind_ = DatumKind::kNull;
  bool owned_ = false;
  uint8_t aux1_ = 0;
  uint8_t aux2_ = 0;
  union {
    int64_t i_;
    uint64_t u_;
    double f_;
  };
  std::string_view view_;
  std::string storage_;
};

// gtest printer.
void PrintTo(const Datum& d, std::ostream* os);

}  // namespace sluice::codec
