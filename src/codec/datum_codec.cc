#include "codec/datum_codec.h"

#include "codec/decimal.h"
#include "codec/endian.h"
#include "codec/json_binary.h"
#include "codec/number.h"
#include "common/memcomparable.h"

namespace sluice::codec {

namespace {

void PutFlag(uint8_t flag, std::string* out) { out->push_back(static_cast<char>(flag)); }

Status EncodeDecimalDatum(const Datum& d, std::string* out) {
  int precision = d.precision();
  int frac = d.frac();
  if (precision == 0) RETURN_IF_ERROR(DecimalPrecisionAndFrac(d.bytes(), &precision, &frac));
  size_t mark = out->size();
  PutFlag(datum_flag::kDecimal, out);
  out->push_back(static_cast<char>(precision));
  out->push_back(static_cast<char>(frac));
  Status st = EncodeDecimalBin(d.bytes(), precision, frac, out);
  if (!st.ok()) out->resize(mark);
  return st;
}

// Encodings shared by both forms; returns false for kinds that differ.
bool EncodeCommon(const Datum& d, std::string* out, Status* st) {
  switch (d.kind()) {
    case DatumKind::kNull:
      PutFlag(datum_flag::kNil, out);
      return true;
    case DatumKind::kFloat32:
    case DatumKind::kFloat64:
      PutFlag(datum_flag::kFloat, out);
      EncodeFloat(d.float64(), out);
      return true;
    case DatumKind::kDecimal:
      *st = EncodeDecimalDatum(d, out);
      return true;
    case DatumKind::kTime:
      PutFlag(datum_flag::kUint, out);
      EncodeUint(d.uint64(), out);
      return true;
    case DatumKind::kDuration:
      PutFlag(datum_flag::kDuration, out);
      EncodeInt(d.int64(), out);
      return true;
    case DatumKind::kJson:
      PutFlag(datum_flag::kJson, out);
      break;
    case DatumKind::kVectorFloat32:
      PutFlag(datum_flag::kVectorFloat32, out);
      break;
    case DatumKind::kMinNotNull:
      PutFlag(datum_flag::kBytes, out);
      return true;
    case DatumKind::kMax:
      PutFlag(datum_flag::kMax, out);
      return true;
    default:
      return false;
  }
  out->append(d.bytes());  // JSON and vectors: raw payload after the flag
  return true;
}

bool IsUnsignedKind(DatumKind k) {
  return k == DatumKind::kUint64 || k == DatumKind::kEnum || k == DatumKind::kSet ||
         k == DatumKind::kBit;
}

}  // namespace

Status EncodeKeyDatum(const Datum& d, std::string* out) {
  Status st;
  if (EncodeCommon(d, out, &st)) return st;
  if (d.kind() == DatumKind::kInt64) {
    PutFlag(datum_flag::kInt, out);
    EncodeInt(d.int64(), out);
  } else if (IsUnsignedKind(d.kind())) {
    PutFlag(datum_flag::kUint, out);
    EncodeUint(d.uint64(), out);
  } else {  // kBytes
    PutFlag(datum_flag::kBytes, out);
    memcomparable::EncodeBytes(d.bytes(), out);
  }
  return Status::Ok();
}

Status EncodeKeyDatums(const std::vector<Datum>& ds, std::string* out) {
  size_t mark = out->size();
  for (const Datum& d : ds) {
    Status st = EncodeKeyDatum(d, out);
    if (!st.ok()) {
      out->resize(mark);
      return st;
    }
  }
  return Status::Ok();
}

Status EncodeValueDatum(const Datum& d, std::string* out) {
  Status st;
  if (EncodeCommon(d, out, &st)) return st;
  if (d.kind() == DatumKind::kInt64) {
    PutFlag(datum_flag::kVarint, out);
    EncodeVarint(d.int64(), out);
  } else if (IsUnsignedKind(d.kind())) {
    PutFlag(datum_flag::kUvarint, out);
    EncodeUvarint(d.uint64(), out);
  } else {  // kBytes
    PutFlag(datum_flag::kCompactBytes, out);
    EncodeCompactBytes(d.bytes(), out);
  }
  return Status::Ok();
}

namespace {

Status DecodeDecimalDatum(std::string_view* in, Datum* out) {
  if (in->size() < 2) return Corruption("datum: truncated decimal header");
  int precision = static_cast<uint8_t>((*in)[0]);
  int frac = static_cast<uint8_t>((*in)[1]);
  std::string_view rest = in->substr(2);
  RETURN_IF_ERROR(DecodeDecimalBin(&rest, precision, frac, out->ResetDecimal(precision, frac)));
  *in = rest;
  return Status::Ok();
}

Status DecodeJsonDatum(std::string_view* in, Datum* out) {
  ASSIGN_OR_RETURN(size_t n, JsonBinaryLength(*in));
  out->SetView(DatumKind::kJson, in->substr(0, n));
  in->remove_prefix(n);
  return Status::Ok();
}

Status DecodeVectorDatum(std::string_view* in, Datum* out) {
  if (in->size() < 4) return Corruption("datum: truncated vector dimension");
  uint64_t n = 4 + uint64_t{internal::LoadLe32(in->data())} * 4;
  if (n > in->size()) return Corruption("datum: truncated vector");
  out->SetView(DatumKind::kVectorFloat32, in->substr(0, n));
  in->remove_prefix(n);
  return Status::Ok();
}

// Decodes a number with `decode` and hands it to `set`.
template <typename T, typename Set>
Status DecodeNumber(Result<T> (*decode)(std::string_view*), std::string_view* rest, Set set) {
  ASSIGN_OR_RETURN(T v, decode(rest));
  set(v);
  return Status::Ok();
}

Status DecodeCompactBytesDatum(std::string_view* rest, Datum* out) {
  ASSIGN_OR_RETURN(std::string_view v, DecodeCompactBytes(rest));
  out->SetBytesView(v);
  return Status::Ok();
}

// Decodes the body after `flag`; `rest` starts after the flag byte.
Status DecodeBody(uint8_t flag, std::string_view* rest, Datum* out) {
  auto set_int = [out](int64_t v) { out->SetInt64(v); };
  auto set_uint = [out](uint64_t v) { out->SetUint64(v); };
  switch (flag) {
    case datum_flag::kNil:
      out->SetNull();
      return Status::Ok();
    case datum_flag::kBytes:
      return memcomparable::DecodeBytes(rest, out->ResetOwned(DatumKind::kBytes));
    case datum_flag::kCompactBytes:
      return DecodeCompactBytesDatum(rest, out);
    case datum_flag::kInt:
      return DecodeNumber(DecodeInt, rest, set_int);
    case datum_flag::kUint:
      return DecodeNumber(DecodeUint, rest, set_uint);
    case datum_flag::kVarint:
      return DecodeNumber(DecodeVarint, rest, set_int);
    case datum_flag::kUvarint:
      return DecodeNumber(DecodeUvarint, rest, set_uint);
    case datum_flag::kFloat:
      return DecodeNumber(DecodeFloat, rest, [out](double v) { out->SetFloat64(v); });
    case datum_flag::kDuration:
      return DecodeNumber(DecodeInt, rest, [out](int64_t v) { out->SetDuration(v, 0); });
    case datum_flag::kDecimal:
      return DecodeDecimalDatum(rest, out);
    case datum_flag::kJson:
      return DecodeJsonDatum(rest, out);
    case datum_flag::kVectorFloat32:
      return DecodeVectorDatum(rest, out);
    case datum_flag::kMax:
      *out = Datum::Max();
      return Status::Ok();
    default:
      return Corruption("datum: unknown flag " + std::to_string(flag));
  }
}

}  // namespace

Status DecodeDatum(std::string_view* in, Datum* out) {
  if (in->empty()) return Corruption("datum: empty input");
  std::string_view rest = in->substr(1);
  RETURN_IF_ERROR(DecodeBody(static_cast<uint8_t>((*in)[0]), &rest, out));
  *in = rest;
  return Status::Ok();
}

Result<std::vector<Datum>> DecodeDatums(std::string_view in) {
  std::vector<Datum> out;
  while (!in.empty()) {
    Datum d;
    RETURN_IF_ERROR(DecodeDatum(&in, &d));
    out.push_back(std::move(d));
  }
  return out;
}

Result<size_t> PeekDatumLength(std::string_view in) {
  Datum scratch;
  std::string_view rest = in;
  RETURN_IF_ERROR(DecodeDatum(&rest, &scratch));
  return in.size() - rest.size();
}

}  // namespace sluice::codec
