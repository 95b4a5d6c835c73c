// sluice: the Sluice binary.
//   sluice server --pd ADDR --addr HOST:PORT --data-dir DIR   one node
//   sluice cli ...                                          TiCDC's cdc cli
//   sluice playground [--output DIR] [--sink-uri URI]       the demo
//   sluice version
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "common/allocator.h"
#include "sluice/commands.h"

namespace {

void Usage(std::ostream& out) {
  out << "usage: sluice <command> [flags]\n"
         "commands:\n"
         "  server      run a Sluice node (sluice server --help)\n"
         "  cli         manage changefeeds and captures (sluice cli --help)\n"
         "  playground  simulated upstream -> sluice -> local output, checked\n"
         "  version     print the version\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    Usage(std::cerr);
    return 2;
  }
  const std::string command = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (command == "server") return sluice::app::RunServer(rest);
  if (command == "cli") return sluice::cli::RunCli(rest, std::cout, std::cerr);
  if (command == "playground") return sluice::app::RunPlayground(rest);
  if (command == "version" || command == "--version") {
    std::cout << "Release Version: " << sluice::app::kVersion << "\n"
              << "Allocator: " << sluice::AllocatorDescription() << "\n";
    return 0;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    Usage(std::cout);
    return 0;
  }
  std::cerr << "sluice: unknown command \"" << command << "\"\n";
  Usage(std::cerr);
  return 2;
}
