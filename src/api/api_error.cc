#include "api/api_error.h"

#include <array>
#include <nlohmann/json.hpp>

namespace sluice::api {
namespace {

// TiCDC's httpBadRequestError list, plus ErrInvalidReplicaConfig.
constexpr std::array<std::string_view, 9> kBadRequestCodes = {
    kErrApiInvalidParam,         kErrSinkUriInvalid,          kErrStartTsBeforeGc,
    kErrChangefeedNotExists,     kErrChangefeedAlreadyExists, kErrTargetTsBeforeStartTs,
    kErrChangefeedUpdateRefused, kErrFilterRuleInvalid,       kErrInvalidReplicaConfig,
};

bool IsBadRequest(std::string_view code) {
  for (std::string_view c : kBadRequestCodes) {
    if (c == code) return true;
  }
  return false;
}

std::string_view CodeFor(const Status& status) {
  switch (status.code()) {
    case Code::kNotFound:
      return kErrChangefeedNotExists;
    case Code::kAlreadyExists:
      return kErrChangefeedAlreadyExists;
    case Code::kGcSafepointExceeded:
      return kErrStartTsBeforeGc;
    case Code::kInvalidArgument:
      if (status.message().starts_with("target ts")) return kErrTargetTsBeforeStartTs;
      return kErrApiInvalidParam;
    case Code::kAborted:
      return kErrEtcdTryAgain;
    case Code::kUnavailable:
    case Code::kTimeout:
      return kErrPdEtcdApiError;
    default:
      return kErrInternalServerError;
  }
}

}  // namespace

ApiError MakeError(std::string_view code, std::string_view text) {
  ApiError e;
  e.http_status = IsBadRequest(code) ? 400 : 500;
  e.code = std::string(code);
  e.message = "[" + e.code + "]" + std::string(text);
  return e;
}

ApiError FromStatus(const Status& status) { return MakeError(CodeFor(status), status.message()); }

std::string ErrorBody(const ApiError& error) {
  nlohmann::json body = {{"error_msg", error.message}, {"error_code", error.code}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sluice::api
