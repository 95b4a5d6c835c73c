// A Google Benchmark reporter that, besides the usual console table, prints
// one line per result in the project's collectable form:
//   BENCH <name> <metric>=<value> ...
// Use SLUICE_BENCH_MAIN() instead of BENCHMARK_MAIN().
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <ostream>
#include <string>

namespace sluice::bench {

class BenchLineReporter : public benchmark::ConsoleReporter {
 public:
  // Plain output (no colour codes) so BENCH lines stay clean when collected.
  BenchLineReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      std::string line = "BENCH " + run.benchmark_name();
      line += " ns_per_op=" + Format(run.GetAdjustedRealTime());
      for (const auto& [name, counter] : run.counters) {
        line += " " + name + "=" + Format(counter.value);
      }
      GetOutputStream() << line << "\n";
    }
    GetOutputStream().flush();
  }

 private:
  static std::string Format(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", v);
    return buf;
  }
};

}  // namespace sluice::bench

#define SLUICE_BENCH_MAIN()                                   \
  int main(int argc, char** argv) {                           \
    benchmark::Initialize(&argc, argv);                       \
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) { \
      return 1;                                               \
    }                                                         \
    sluice::bench::BenchLineReporter reporter;                \
    benchmark::RunSpecifiedBenchmarks(&reporter);             \
    benchmark::Shutdown();                                    \
    return 0;                                                 \
  }
