// `tso query`: one TSO from PD with the project's PD client.
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "pd/pd_client.h"

namespace sluice::cli {
namespace {

std::vector<std::string> SplitEndpoints(const std::string& text) {
  std::vector<std::string> endpoints;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t begin = item.find_first_not_of(" \t");
    size_t end = item.find_last_not_of(" \t");
    if (begin != std::string::npos) endpoints.push_back(item.substr(begin, end - begin + 1));
  }
  return endpoints;
}

}  // namespace

Status QueryTso(const std::string& pd_endpoints, std::ostream& out) {
  pd::PdClientOptions options;
  options.endpoints = SplitEndpoints(pd_endpoints);
  if (options.endpoints.empty()) return InvalidArgument("--pd names no PD endpoint");
  options.caller_id = "sluice-cli";
  Result<std::unique_ptr<pd::PdClient>> client = pd::PdClient::Connect(options);
  if (!client.ok()) {
    return client.status().WithContext("failed to reach PD at " + pd_endpoints);
  }
  Result<Ts> ts = (*client)->GetTs();
  (*client)->Stop();
  if (!ts.ok()) return ts.status().WithContext("failed to get a TSO from PD at " + pd_endpoints);
  out << ts->value() << "\n";
  return Status::Ok();
}

}  // namespace sluice::cli
