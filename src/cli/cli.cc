// RunCli: the command tree (CLI11) and the dispatch to the commands.
#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <exception>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "cli/api_client.h"
#include "cli/commands.h"

namespace sluice::cli {
namespace {

struct GlobalFlags {
  std::string server = "http://127.0.0.1:8300";
  std::string pd = "http://127.0.0.1:2379";
  std::string log_level = "warn";
};

// Unsigned 64-bit decimal integers only: CLI11 alone takes "-5" and
// out-of-range values into a uint64_t.
std::string CheckUnsigned(std::string& value) {
  uint64_t parsed = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
  if (!value.empty() && ec == std::errc() && ptr == end) return "";
  return "invalid argument \"" + value + "\": must be an unsigned 64-bit integer";
}

// What runs once the line is parsed.
using Action = std::function<Status(std::ostream& out)>;

// Binds an action to a subcommand: `run` gets an API client for --server.
using ApiCommand = Status (*)(ApiClient&, const ChangefeedFlags&, std::ostream&);

class CommandTree {
 public:
  CommandTree() : app_("Manage replication task and TiCDC cluster", "cli") {
    app_.fallthrough();
    app_.require_subcommand(1);
    app_.add_option("--server", global_.server, "CDC server address")->capture_default_str();
    app_.add_option("--pd", global_.pd, "PD address, use ',' to separate multiple PDs")
        ->capture_default_str();
    app_.add_option("--log-level", global_.log_level, "log level (etc: debug|info|warn|error)")
        ->capture_default_str();
    AddChangefeed();
    AddCapture();
    AddTso();
  }

  CLI::App& app() { return app_; }

  // The action of the subcommand that was parsed (empty if none).
  Action Selected() const {
    for (const auto& [sub, action] : actions_) {
      if (sub->parsed()) return action;
    }
    return nullptr;
  }

 private:
  CLI::App* Group(CLI::App* parent, const std::string& name, const std::string& help) {
    CLI::App* sub = parent->add_subcommand(name, help);
    sub->fallthrough();
    sub->require_subcommand(1);
    return sub;
  }

  CLI::App* Leaf(CLI::App* parent, const std::string& name, const std::string& help) {
    CLI::App* sub = parent->add_subcommand(name, help);
    sub->fallthrough();
    sub->allow_extras(false);
    return sub;
  }

  void Bind(CLI::App* sub, ApiCommand command) {
    actions_.emplace_back(sub, [this, command](std::ostream& out) -> Status {
      ASSIGN_OR_RETURN(std::unique_ptr<ApiClient> api, ApiClient::Create(global_.server));
      return command(*api, cf_, out);
    });
  }

  void AddNamespace(CLI::App* sub) {
    sub->add_option("-n,--namespace", cf_.ns, "Replication task (changefeed) Namespace")
        ->capture_default_str();
  }

  CLI::Option* AddId(CLI::App* sub) {
    return sub->add_option("-c,--changefeed-id", cf_.id, "Replication task (changefeed) ID");
  }

  void AddCommonChangefeedFlags(CLI::App* sub) {
    sub->add_option("--sink-uri", cf_.sink_uri, "sink uri")->each([this](const std::string&) {
      cf_.sink_uri_set = true;
    });
    sub->add_option("--target-ts", cf_.target_ts, "Target ts of changefeed")
        ->check(CLI::Validator(CheckUnsigned, "UINT64"));
    sub->add_option("--config", cf_.config_path, "Path of the configuration file");
    sub->add_flag("--no-confirm", cf_.no_confirm,
                  "Don't ask user whether to ignore ineligible table");
  }

  void AddChangefeed();
  void AddCapture();
  void AddTso();

  CLI::App app_;
  GlobalFlags global_;
  ChangefeedFlags cf_;
  std::vector<std::pair<CLI::App*, Action>> actions_;
};

void CommandTree::AddChangefeed() {
  CLI::App* group =
      Group(&app_, "changefeed", "Manage changefeed (changefeed is a replication task)");

  CLI::App* create = Leaf(group, "create", "Create a new replication task (changefeed)");
  AddNamespace(create);
  AddId(create);
  AddCommonChangefeedFlags(create);
  create->add_option("--start-ts", cf_.start_ts, "Start ts of changefeed")
      ->check(CLI::Validator(CheckUnsigned, "UINT64"));
  Bind(create, CreateChangefeed);

  CLI::App* list = Leaf(group, "list", "List all replication tasks (changefeeds) in TiCDC cluster");
  AddNamespace(list);
  list->add_flag("-a,--all", cf_.all, "List all replication tasks(including removed and finished)");
  Bind(list, ListChangefeeds);

  CLI::App* query = Leaf(group, "query", "Query information and status of a replication task");
  AddNamespace(query);
  AddId(query)->required();
  query->add_flag("-s,--simple", cf_.simple, "Output simplified replication status");
  Bind(query, QueryChangefeed);

  CLI::App* pause = Leaf(group, "pause", "Pause a replication task (changefeed)");
  AddNamespace(pause);
  AddId(pause)->required();
  Bind(pause, PauseChangefeed);

  CLI::App* move = Leaf(group, "move-table", "Move one table of a changefeed to another node");
  AddNamespace(move);
  AddId(move)->required();
  move->add_option("-t,--table-id", cf_.table_id, "The table to move")->required();
  move->add_option("-d,--target-node-id", cf_.target_node_id, "The node (capture id) to move it to")
      ->required();
  Bind(move, MoveTable);

  CLI::App* resume = Leaf(group, "resume", "Resume a paused replication task (changefeed)");
  AddNamespace(resume);
  AddId(resume)->required();
  resume->add_flag("--no-confirm", cf_.no_confirm,
                   "Don't ask user whether to ignore ineligible table");
  resume->add_option(
      "--overwrite-checkpoint-ts", cf_.overwrite_checkpoint_ts,
      "Overwrite the changefeed checkpoint ts, should be 'now' or a specified tso value");
  Bind(resume, ResumeChangefeed);

  CLI::App* remove = Leaf(group, "remove", "Remove a replication task (changefeed)");
  AddNamespace(remove);
  AddId(remove)->required();
  Bind(remove, RemoveChangefeed);

  CLI::App* update = Leaf(group, "update", "Update config of an existing replication task");
  AddNamespace(update);
  AddId(update)->required();
  AddCommonChangefeedFlags(update);
  Bind(update, UpdateChangefeed);
}

void CommandTree::AddCapture() {
  CLI::App* group = Group(&app_, "capture", "Manage capture (capture is a CDC server instance)");
  CLI::App* list = Leaf(group, "list", "List all captures in TiCDC cluster");
  actions_.emplace_back(list, [this](std::ostream& out) -> Status {
    ASSIGN_OR_RETURN(std::unique_ptr<ApiClient> api, ApiClient::Create(global_.server));
    return ListCaptures(*api, out);
  });
}

void CommandTree::AddTso() {
  CLI::App* group = Group(&app_, "tso", "Manage tso");
  CLI::App* query =
      Leaf(group, "query", "Get tso from PD (should use --pd to specify PD cluster addresses)");
  actions_.emplace_back(query, [this](std::ostream& out) { return QueryTso(global_.pd, out); });
}

// Parses the line; returns the exit code if the run ends here (help or a
// parse error), nullopt if the selected action should run.
std::optional<int> Parse(CommandTree& tree, const std::vector<std::string>& args, std::ostream& out,
                         std::ostream& err) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed.
  try {
    tree.app().parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return tree.app().exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return tree.app().exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << "Error: " << e.what() << "\n";
    return 1;
  }
  return std::nullopt;
}

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandTree tree;
  if (std::optional<int> code = Parse(tree, args, out, err)) return *code;
  Action action = tree.Selected();
  if (!action) {
    err << "Error: no command given\n";
    return 1;
  }
  Status status = action(out);
  if (status.ok()) return 0;
  err << "Error: " << status.message() << "\n";
  return 1;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    return Run(args, out, err);
  } catch (const nlohmann::json::exception& e) {
    err << "Error: unexpected JSON: " << e.what() << "\n";
  } catch (const CLI::Error& e) {
    err << "Error: " << e.what() << "\n";
  } catch (const std::exception& e) {
    err << "Error: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace sluice::cli
