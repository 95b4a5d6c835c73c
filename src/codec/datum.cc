#include "codec/datum.h"

#include <ostream>
#include <utility>

namespace sluice::codec {

std::string_view DatumKindName(DatumKind kind) {
  switch (kind) {
    case DatumKind::kNull:
      return "null";
    case DatumKind::kInt64:
      return "int64";
    case DatumKind::kUint64:
      return "uint64";
    case DatumKind::kFloat32:
      return "float32";
    case DatumKind::kFloat64:
      return "float64";
    case DatumKind::kBytes:
      return "bytes";
    case DatumKind::kDecimal:
      return "decimal";
    case DatumKind::kTime:
      return "time";
    case DatumKind::kDuration:
      return "duration";
    case DatumKind::kEnum:
      return "enum";
    case DatumKind::kSet:
      return "set";
    case DatumKind::kBit:
      return "bit";
    case DatumKind::kJson:
      return "json";
    case DatumKind::kVectorFloat32:
      return "vector_float32";
    case DatumKind::kMinNotNull:
      return "min_not_null";
    case DatumKind::kMax:
      return "max";
  }
  return "unknown";
}

Datum Datum::Int64(int64_t v) {
  Datum d;
  d.SetInt64(v);
  return d;
}

Datum Datum::Uint64(uint64_t v) {
  Datum d;
  d.SetUint64(v);
  return d;
}

Datum Datum::Float32(float v) {
  Datum d;
  d.SetFloat32(v);
  return d;
}

Datum Datum::Float64(double v) {
  Datum d;
  d.SetFloat64(v);
  return d;
}

Datum Datum::Bytes(std::string v) {
  Datum d;
  *d.ResetOwned(DatumKind::kBytes) = std::move(v);
  return d;
}

Datum Datum::BytesView(std::string_view v) {
  Datum d;
  d.SetBytesView(v);
  return d;
}

Datum Datum::Decimal(std::string text, int precision, int frac) {
  Datum d;
  *d.ResetDecimal(precision, frac) = std::move(text);
  return d;
}

Datum Datum::Time(uint64_t packed, uint8_t time_type, int fsp) {
  Datum d;
  d.SetTime(packed, time_type, fsp);
  return d;
}

Datum Datum::Duration(int64_t nanos, int fsp) {
  Datum d;
  d.SetDuration(nanos, fsp);
  return d;
}

Datum Datum::Enum(uint64_t v) {
  Datum d;
  d.SetUnsigned(DatumKind::kEnum, v);
  return d;
}

Datum Datum::Set(uint64_t v) {
  Datum d;
  d.SetUnsigned(DatumKind::kSet, v);
  return d;
}

Datum Datum::Bit(uint64_t v) {
  Datum d;
  d.SetUnsigned(DatumKind::kBit, v);
  return d;
}

Datum Datum::Json(std::string binary) {
  Datum d;
  *d.ResetOwned(DatumKind::kJson) = std::move(binary);
  return d;
}

Datum Datum::JsonView(std::string_view binary) {
  Datum d;
  d.SetView(DatumKind::kJson, binary);
  return d;
}

Datum Datum::VectorFloat32View(std::string_view raw) {
  Datum d;
  d.SetView(DatumKind::kVectorFloat32, raw);
  return d;
}

Datum Datum::MinNotNull() {
  Datum d;
  d.Reset(DatumKind::kMinNotNull);
  return d;
}

Datum Datum::Max() {
  Datum d;
  d.Reset(DatumKind::kMax);
  return d;
}

void Datum::SetTime(uint64_t packed, uint8_t time_type, int fsp) {
  Reset(DatumKind::kTime);
  u_ = packed;
  aux1_ = time_type;
  aux2_ = static_cast<uint8_t>(fsp);
}

void Datum::SetDuration(int64_t nanos, int fsp) {
  Reset(DatumKind::kDuration);
  i_ = nanos;
  aux2_ = static_cast<uint8_t>(fsp);
}

std::string* Datum::ResetOwned(DatumKind kind) {
  Reset(kind);
  owned_ = true;
  storage_.clear();
  return &storage_;
}

std::string* Datum::ResetDecimal(int precision, int frac) {
  std::string* text = ResetOwned(DatumKind::kDecimal);
  aux1_ = static_cast<uint8_t>(precision);
  aux2_ = static_cast<uint8_t>(frac);
  return text;
}

void Datum::MakeOwned() {
  bool has_bytes =
      kind_ == DatumKind::kBytes || kind_ == DatumKind::kJson || kind_ == DatumKind::kVectorFloat32;
  if (owned_ || !has_bytes) return;
  storage_.assign(view_.data(), view_.size());
  view_ = {};
  owned_ = true;
}

std::string Datum::DebugString() const {
  std::string out(DatumKindName(kind_));
  out += "(";
  switch (kind_) {
    case DatumKind::kInt64:
      out += std::to_string(i_);
      break;
    case DatumKind::kUint64:
    case DatumKind::kEnum:
    case DatumKind::kSet:
    case DatumKind::kBit:
      out += std::to_string(u_);
      break;
    case DatumKind::kFloat32:
    case DatumKind::kFloat64:
      out += std::to_string(f_);
      break;
    case DatumKind::kDecimal:
      out += std::string(bytes()) + "," + std::to_string(aux1_) + "," + std::to_string(aux2_);
      break;
    case DatumKind::kTime:
      out +=
          std::to_string(u_) + ",type=" + std::to_string(aux1_) + ",fsp=" + std::to_string(aux2_);
      break;
    case DatumKind::kDuration:
      out += std::to_string(i_) + ",fsp=" + std::to_string(aux2_);
      break;
    case DatumKind::kBytes:
    case DatumKind::kJson:
    case DatumKind::kVectorFloat32:
      out += std::to_string(bytes().size()) + " bytes";
      break;
    default:
      break;
  }
  out += ")";
  return out;
}

bool operator==(const Datum& a, const Datum& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case DatumKind::kInt64:
      return a.i_ == b.i_;
    case DatumKind::kUint64:
    case DatumKind::kEnum:
    case DatumKind::kSet:
    case DatumKind::kBit:
      return a.u_ == b.u_;
    case DatumKind::kFloat32:
    case DatumKind::kFloat64:
      return a.f_ == b.f_;
    case DatumKind::kBytes:
    case DatumKind::kJson:
    case DatumKind::kVectorFloat32:
      return a.bytes() == b.bytes();
    case DatumKind::kDecimal:
      return a.bytes() == b.bytes() && a.aux1_ == b.aux1_ && a.aux2_ == b.aux2_;
    case DatumKind::kTime:
      return a.u_ == b.u_ && a.aux1_ == b.aux1_ && a.aux2_ == b.aux2_;
    case DatumKind::kDuration:
      return a.i_ == b.i_ && a.aux2_ == b.aux2_;
    default:
      return true;
  }
}

void PrintTo(const Datum& d, std::ostream* os) { *os << d.DebugString(); }

}  // namespace sluice::codec
