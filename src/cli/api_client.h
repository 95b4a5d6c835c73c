// ApiClient: the CLI's client of a Sluice (or TiCDC) server's HTTP API v2.
//
// Promises:
//  - one request per call, no retries; a 2xx answer returns its body;
//  - an answer outside 2xx carrying TiCDC's error body
//    {"error_msg": ..., "error_code": "CDC:ErrXxx"} is a Status whose message
//    is "[CDC:ErrXxx]message" (the code is not repeated if the message
//    already starts with it); other error answers name the URL, the HTTP
//    status and the body, as TiCDC's client does;
//  - a server that cannot be reached is kUnavailable naming its address.
// Never throws.
//
// Thread-compatible: one ApiClient per thread (the CLI uses one per run).
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

namespace httplib {
class Client;
}  // namespace httplib

namespace sluice::cli {

class ApiClient {
 public:
  // `server` is "http://host:port" or "host:port". InvalidArgument if it does
  // not name an http server.
  static Result<std::unique_ptr<ApiClient>> Create(const std::string& server);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // `path` is absolute ("/api/v2/changefeeds?namespace=default").
  Result<std::string> Get(const std::string& path);
  Result<std::string> Post(const std::string& path, const std::string& json_body);
  Result<std::string> Put(const std::string& path, const std::string& json_body);
  Result<std::string> Delete(const std::string& path);

 private:
  ApiClient(std::string server, std::unique_ptr<httplib::Client> client);

  std::string server_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace sluice::cli
