// ApiClient: HTTP requests to the API v2 and TiCDC's error bodies.
#include "cli/api_client.h"

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

namespace sluice::cli {
namespace {

constexpr time_t kConnectTimeoutSeconds = 5;
constexpr time_t kIoTimeoutSeconds = 60;

// "[CDC:ErrXxx]message" from TiCDC's error body, or nullopt if the body is
// not one.
std::optional<std::string> TiCdcError(const std::string& body) {
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::nullopt;
  auto msg = doc.find("error_msg");
  if (msg == doc.end() || !msg->is_string()) return std::nullopt;
  std::string message = msg->get<std::string>();
  auto code = doc.find("error_code");
  if (code == doc.end() || !code->is_string() || code->get<std::string>().empty()) return message;
  std::string prefix = "[" + code->get<std::string>() + "]";
  if (message.rfind(prefix, 0) == 0) return message;
  return prefix + message;
}

Code CodeForHttpStatus(int status) {
  switch (status) {
    case 400:
      return Code::kInvalidArgument;
    case 404:
      return Code::kNotFound;
    case 409:
      return Code::kAlreadyExists;
    case 503:
      return Code::kUnavailable;
    default:
      return Code::kInternal;
  }
}

}  // namespace

Result<std::unique_ptr<ApiClient>> ApiClient::Create(const std::string& server) {
  if (server.empty()) return InvalidArgument("--server is empty");
  if (server.find("://") != std::string::npos && server.rfind("http://", 0) != 0) {
    return InvalidArgument("unsupported server address \"" + server +
                           "\": only http:// is supported");
  }
  auto client = std::make_unique<httplib::Client>(server);
  if (!client->is_valid()) return InvalidArgument("invalid server address \"" + server + "\"");
  client->set_connection_timeout(kConnectTimeoutSeconds, 0);
  client->set_read_timeout(kIoTimeoutSeconds, 0);
  client->set_write_timeout(kIoTimeoutSeconds, 0);
  return std::unique_ptr<ApiClient>(new ApiClient(server, std::move(client)));
}

ApiClient::ApiClient(std::string server, std::unique_ptr<httplib::Client> client)
    : server_(std::move(server)), client_(std::move(client)) {}

ApiClient::~ApiClient() = default;

namespace {

Result<std::string> Check(const std::string& server, const std::string& path,
                          const httplib::Result& res) {
  if (!res) {
    return Unavailable("failed to reach the server at " + server + ": " +
                       httplib::to_string(res.error()));
  }
  if (res->status >= 200 && res->status <= 206) return res->body;
  if (std::optional<std::string> message = TiCdcError(res->body)) {
    return Status(CodeForHttpStatus(res->status), *message);
  }
  return Status(
      CodeForHttpStatus(res->status),
      "call cdc api failed, url=" + server + path + ", code=" + std::to_string(res->status) +
          ", contentType=" + res->get_header_value("Content-Type") + ", response=" + res->body);
}

}  // namespace

Result<std::string> ApiClient::Get(const std::string& path) {
  return Check(server_, path, client_->Get(path.c_str()));
}

Result<std::string> ApiClient::Post(const std::string& path, const std::string& json_body) {
  return Check(server_, path, client_->Post(path.c_str(), json_body, "application/json"));
}

Result<std::string> ApiClient::Put(const std::string& path, const std::string& json_body) {
  return Check(server_, path, client_->Put(path.c_str(), json_body, "application/json"));
}

Result<std::string> ApiClient::Delete(const std::string& path) {
  return Check(server_, path, client_->Delete(path.c_str()));
}

}  // namespace sluice::cli
