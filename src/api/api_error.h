// Errors of the HTTP API in TiCDC's shape: an HTTP status plus the body
// {"error_msg":"[CDC:ErrXxx]...","error_code":"CDC:ErrXxx"}
// (TiCDC pkg/api HTTPError), and the mapping of Sluice Status codes to
// TiCDC's error codes. Plain values; every function here is pure and may be
// called from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/status.h"

namespace sluice::api {

// TiCDC's RFC error codes used by the API (pkg/errors/error.go).
inline constexpr std::string_view kErrApiInvalidParam = "CDC:ErrAPIInvalidParam";
inline constexpr std::string_view kErrChangefeedNotExists = "CDC:ErrChangeFeedNotExists";
inline constexpr std::string_view kErrChangefeedAlreadyExists = "CDC:ErrChangeFeedAlreadyExists";
inline constexpr std::string_view kErrSinkUriInvalid = "CDC:ErrSinkURIInvalid";
inline constexpr std::string_view kErrStartTsBeforeGc = "CDC:ErrStartTsBeforeGC";
inline constexpr std::string_view kErrTargetTsBeforeStartTs = "CDC:ErrTargetTsBeforeStartTs";
inline constexpr std::string_view kErrChangefeedUpdateRefused = "CDC:ErrChangefeedUpdateRefused";
inline constexpr std::string_view kErrInvalidReplicaConfig = "CDC:ErrInvalidReplicaConfig";
inline constexpr std::string_view kErrFilterRuleInvalid = "CDC:ErrFilterRuleInvalid";
inline constexpr std::string_view kErrClusterIsUnhealthy = "CDC:ErrClusterIsUnhealthy";
inline constexpr std::string_view kErrEtcdTryAgain = "CDC:ErrEtcdTryAgain";
inline constexpr std::string_view kErrPdEtcdApiError = "CDC:ErrPDEtcdAPIError";
inline constexpr std::string_view kErrUpstreamNotFound = "CDC:ErrUpstreamNotFound";
inline constexpr std::string_view kErrInternalServerError = "CDC:ErrInternalServerError";
inline constexpr std::string_view kErrOwnerNotFound = "CDC:ErrOwnerNotFound";

// One failed request. `message` is the full error_msg, "[code]text".
struct ApiError {
  int http_status = 400;
  std::string code;
  std::string message;
};

// An error with TiCDC's status for `code`: 400 for the codes TiCDC lists as
// bad requests (pkg/api httpBadRequestError; Sluice adds
// ErrInvalidReplicaConfig, a client error TiCDC answers with 500), 500 for
// the rest. `text` becomes "[code]text".
ApiError MakeError(std::string_view code, std::string_view text);

// The TiCDC code for a Status from the coordinator or a parser:
//   kNotFound → ErrChangeFeedNotExists, kAlreadyExists →
//   ErrChangeFeedAlreadyExists, kGcSafepointExceeded → ErrStartTsBeforeGC,
//   kInvalidArgument → ErrAPIInvalidParam (ErrTargetTsBeforeStartTs for a
//   target ts error), kAborted → ErrEtcdTryAgain (retry), kUnavailable /
//   kTimeout → ErrPDEtcdAPIError, anything else → ErrInternalServerError.
ApiError FromStatus(const Status& status);

// The JSON body of an error.
std::string ErrorBody(const ApiError& error);

// Either a value or an ApiError.
template <typename T>
class [[nodiscard]] ApiOr {
 public:
  ApiOr(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design.
  ApiOr(ApiError error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  const ApiError& error() const { return std::get<ApiError>(v_); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T* operator->() { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, ApiError> v_;
};

}  // namespace sluice::api
