#include <signal.h>
#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "common/logging.h"
#include "server/server.h"
#include "sluice/commands.h"

namespace sluice::app {

namespace {

// Parses `--pd` as TiCDC does: comma-separated endpoints, with or without
// an http:// scheme.
std::vector<std::string> PdEndpoints(const std::string& flag) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= flag.size()) {
    size_t end = flag.find(',', begin);
    if (end == std::string::npos) end = flag.size();
    std::string e = flag.substr(begin, end - begin);
    for (const char* scheme : {"http://", "https://"}) {
      if (e.rfind(scheme, 0) == 0) e = e.substr(std::string(scheme).size());
    }
    if (!e.empty()) out.push_back(e);
    begin = end + 1;
  }
  return out;
}

// The [puller] table: each key as server::SetPullerKey reads it (an integer
// or a string), unless its --puller-<key> flag was given.
Status ApplyPullerTable(const toml::table& table, const std::string& path, const CLI::App& app,
                        server::PullerConfig* config) {
  for (const auto& [key, node] : table) {
    const std::string k(key.str());
    const std::string where = "puller key \"" + k + "\" at line " +
                              std::to_string(node.source().begin.line) + " of " + path;
    std::string text;
    if (std::optional<int64_t> i = node.value_exact<int64_t>()) {
      text = std::to_string(*i);
    } else if (std::optional<std::string> s = node.value_exact<std::string>()) {
      text = *s;
    } else {
      return InvalidArgument(where + ": expected an integer or a string");
    }
    // An unknown key has no flag; SetPullerKey names it below.
    const CLI::Option* flag = app.get_option_no_throw("--puller-" + k);
    if (flag != nullptr && flag->count() > 0) continue;
    if (Status s = server::SetPullerKey(k, text, config); !s.ok()) {
      return InvalidArgument(where + ": " + std::string(s.message()));
    }
  }
  return Status::Ok();
}

// Applies TiCDC's server config file keys (addr, advertise-addr, data-dir,
// gc-ttl, capture-session-ttl, cluster-id, log-level), Sluice's peer-addr
// and its [puller] table to the options; flags given on the command line win. Unknown keys and
// wrong types are errors naming key and line.
Status ApplyConfigFile(const std::string& path, const CLI::App& app, server::ServerOptions* options,
                       std::string* log_level) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  toml::table table;
  try {
    table = toml::parse(text.str(), path);
  } catch (const toml::parse_error& e) {
    return InvalidArgument("TOML syntax error in " + path + " at line " +
                           std::to_string(e.source().begin.line) + ": " +
                           std::string(e.description()));
  }
  for (const auto& [key, node] : table) {
    const std::string k(key.str());
    const std::string where =
        "key \"" + k + "\" at line " + std::to_string(node.source().begin.line) + " of " + path;
    auto flag_given = [&](const char* flag) { return app.count(flag) > 0; };
    if (k == "puller") {
      const toml::table* puller = node.as_table();
      if (puller == nullptr) return InvalidArgument(where + ": expected a table");
      RETURN_IF_ERROR(ApplyPullerTable(*puller, path, app, &options->puller));
      continue;
    }
    if (k == "gc-ttl") {
      std::optional<int64_t> v = node.value<int64_t>();
      if (!v.has_value() || *v <= 0)
        return InvalidArgument(where + ": expected a positive integer");
      if (!flag_given("--gc-ttl")) options->gc_ttl_seconds = *v;
      continue;
    }
    if (k == "capture-session-ttl") {
      std::optional<int64_t> v = node.value<int64_t>();
      if (!v.has_value() || *v <= 0 || *v > 3600) {
        return InvalidArgument(where + ": expected seconds in 1..3600");
      }
      if (!flag_given("--capture-session-ttl"))
        options->capture_session_ttl = std::chrono::seconds(*v);
      continue;
    }
    std::optional<std::string> v = node.value<std::string>();
    if (k != "addr" && k != "advertise-addr" && k != "data-dir" && k != "cluster-id" &&
        k != "log-level" && k != "peer-addr") {
      return InvalidArgument("unknown " + where);
    }
    if (!v.has_value()) return InvalidArgument(where + ": expected a string");
    if (k == "addr" && !flag_given("--addr")) options->addr = *v;
    if (k == "advertise-addr" && !flag_given("--advertise-addr")) options->advertise_addr = *v;
    if (k == "data-dir" && !flag_given("--data-dir")) options->data_dir = *v;
    if (k == "cluster-id" && !flag_given("--cluster-id")) options->cluster_id = *v;
    if (k == "log-level" && !flag_given("--log-level")) *log_level = *v;
    if (k == "peer-addr" && !flag_given("--peer-addr")) options->peer_addr = *v;
  }
  return Status::Ok();
}

}  // namespace

int RunServer(const std::vector<std::string>& args) {
  server::ServerOptions options;
  std::string pd = "http://127.0.0.1:2379";
  std::string config_file;
  std::string log_level = "info";
  CLI::App app("sluice server: run a Sluice node", "sluice server");
  app.add_option("--pd", pd, "PD endpoints, comma-separated");
  std::string etcd;
  app.add_option("--etcd", etcd,
                 "etcd endpoints of the cluster's metastore, comma-separated (Sluice's own flag; "
                 "default: none, one node on the embedded store under --data-dir)");
  int64_t session_ttl_s = 10;
  app.add_option("--capture-session-ttl", session_ttl_s,
                 "seconds a node may go silent before the others take its place (default 10)")
      ->check(CLI::Range(int64_t{1}, int64_t{3600}));
  app.add_option("--addr", options.addr, "HTTP API address (host:port)");
  app.add_option("--advertise-addr", options.advertise_addr, "address other nodes use");
  app.add_option("--peer-addr", options.peer_addr,
                 "host:port of the node-to-node message stream (Sluice's own flag; default: the "
                 "--addr host with a free port)");
  app.add_option("--data-dir", options.data_dir, "data directory");
  app.add_option("--cluster-id", options.cluster_id, "cluster id");
  app.add_option("--gc-ttl", options.gc_ttl_seconds, "service GC safepoint TTL in seconds")
      ->check(CLI::Range(int64_t{1}, int64_t{86400 * 365}));
  app.add_option("--config", config_file, "server config file (TOML)")->check(CLI::ExistingFile);
  app.add_option("--log-level", log_level, "log level")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  // The log puller's settings; also the [puller] table of --config.
  std::map<std::string, std::string> puller_flags;
  for (const server::PullerKey& key : server::PullerKeys()) {
    app.add_option("--puller-" + key.name, puller_flags[key.name],
                   key.help + " (default " + key.default_value + ")")
        ->group("Log puller ([puller] in --config)");
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  options.pd_endpoints = PdEndpoints(pd);
  for (size_t begin = 0; begin < etcd.size();) {
    size_t end = etcd.find(',', begin);
    if (end == std::string::npos) end = etcd.size();
    if (end > begin) options.etcd_endpoints.push_back(etcd.substr(begin, end - begin));
    begin = end + 1;
  }
  options.capture_session_ttl = std::chrono::seconds(session_ttl_s);
  if (!config_file.empty()) {
    if (Status s = ApplyConfigFile(config_file, app, &options, &log_level); !s.ok()) {
      std::cerr << "sluice server: " << s.ToString() << "\n";
      return 2;
    }
  }
  for (const auto& [name, value] : puller_flags) {
    if (app.count("--puller-" + name) == 0) continue;
    if (Status s = server::SetPullerKey(name, value, &options.puller); !s.ok()) {
      std::cerr << "sluice server: --puller-" << name << ": " << s.ToString() << "\n";
      return 2;
    }
  }
  if (options.data_dir.empty()) {
    std::cerr << "sluice server: --data-dir is required (flag or data-dir in --config)\n";
    return 2;
  }
  Result<logging::Level> level = logging::ParseLevel(log_level);
  if (!level.ok()) {
    std::cerr << "sluice server: " << level.status().ToString() << "\n";
    return 2;
  }
  logging::SetLevel(*level);

  // SIGTERM and SIGINT are taken synchronously by this thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Result<std::unique_ptr<server::Server>> server = server::Server::Start(options);
  if (!server.ok()) {
    std::cerr << "sluice server: " << server.status().ToString() << "\n";
    return 1;
  }
  std::cout << "sluice server: node " << (*server)->id().value() << " serving the API on "
            << (*server)->api_address() << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  LOG_INFO("server received a signal; signal={}", received);
  (*server)->Stop();
  std::cout << "sluice server: stopped" << std::endl;
  return 0;
}

}  // namespace sluice::app
