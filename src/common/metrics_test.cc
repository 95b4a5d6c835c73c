#include "common/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

namespace sluice {
namespace {

TEST(MetricsTest, ExpositionTextOfSmallRegistry) {
  Registry reg;
  CounterFamily* rows =
      reg.AddCounterFamily("sluice_sink_rows_total", "Rows written.", {"changefeed", "table"});
  rows->WithLabels({"cf-1", "t1"})->Add(3);
  rows->WithLabels({"cf-1", "t2"})->Inc();
  rows->WithLabels({"we\"ird\\cf\n", "t"})->Add(0.5);

  std::shared_ptr<Gauge> lag = reg.AddGauge("sluice_lag_seconds", "Lag.\nIn seconds \\ wall.");
  lag->Set(12.25);

  std::shared_ptr<Histogram> latency =
      reg.AddHistogram("sluice_flush_duration_seconds", "Flush time.", {0.25, 1, 10});
  latency->Observe(0.125);
  latency->Observe(0.25);  // le is inclusive.
  latency->Observe(2);
  latency->Observe(100);

  reg.AddCounterFamily("sluice_unused_total", "No children, not rendered.", {"x"});

  EXPECT_EQ(reg.Expose(),
            "# HELP sluice_flush_duration_seconds Flush time.\n"
            "# TYPE sluice_flush_duration_seconds histogram\n"
            "sluice_flush_duration_seconds_bucket{le=\"0.25\"} 2\n"
            "sluice_flush_duration_seconds_bucket{le=\"1\"} 2\n"
            "sluice_flush_duration_seconds_bucket{le=\"10\"} 3\n"
            "sluice_flush_duration_seconds_bucket{le=\"+Inf\"} 4\n"
            "sluice_flush_duration_seconds_sum 102.375\n"
            "sluice_flush_duration_seconds_count 4\n"
            "# HELP sluice_lag_seconds Lag.\\nIn seconds \\\\ wall.\n"
            "# TYPE sluice_lag_seconds gauge\n"
            "sluice_lag_seconds 12.25\n"
            "# HELP sluice_sink_rows_total Rows written.\n"
            "# TYPE sluice_sink_rows_total counter\n"
            "sluice_sink_rows_total{changefeed=\"cf-1\",table=\"t1\"} 3\n"
            "sluice_sink_rows_total{changefeed=\"cf-1\",table=\"t2\"} 1\n"
            "sluice_sink_rows_total{changefeed=\"we\\\"ird\\\\cf\\n\",table=\"t\"} 0.5\n");
}

TEST(MetricsTest, LabelledHistogramPutsLeLast) {
  Registry reg;
  HistogramFamily* family = reg.AddHistogramFamily("h", "H.", {"store"}, {1});
  family->WithLabels({"s1"})->Observe(1);
  EXPECT_EQ(reg.Expose(),
            "# HELP h H.\n"
            "# TYPE h histogram\n"
            "h_bucket{store=\"s1\",le=\"1\"} 1\n"
            "h_bucket{store=\"s1\",le=\"+Inf\"} 1\n"
            "h_sum{store=\"s1\"} 1\n"
            "h_count{store=\"s1\"} 1\n");
}

TEST(MetricsTest, RegistrationIsGetOrCreateAndChildrenAreShared) {
  Registry reg;
  CounterFamily* a = reg.AddCounterFamily("c_total", "C.", {"k"});
  CounterFamily* b = reg.AddCounterFamily("c_total", "C.", {"k"});
  EXPECT_EQ(a, b);
  auto x = a->WithLabels({"v"});
  auto y = b->WithLabels({"v"});
  EXPECT_EQ(x.get(), y.get());
  x->Inc();
  EXPECT_EQ(y->Value(), 1);
}

TEST(MetricsTest, RemovedChildIsNotRenderedButStaysUsable) {
  Registry reg;
  GaugeFamily* family = reg.AddGaugeFamily("g", "G.", {"changefeed"});
  auto keep = family->WithLabels({"a"});
  auto gone = family->WithLabels({"b"});
  keep->Set(1);
  family->Remove({"b"});
  gone->Set(5);  // Still safe to update.
  EXPECT_EQ(reg.Expose(),
            "# HELP g G.\n"
            "# TYPE g gauge\n"
            "g{changefeed=\"a\"} 1\n");
  // Asking again creates a fresh child.
  EXPECT_EQ(family->WithLabels({"b"})->Value(), 0);
}

TEST(MetricsTest, GaugeArithmetic) {
  Gauge g;
  g.Set(10);
  g.Add(2.5);
  g.Sub(0.5);
  g.Inc();
  g.Dec();
  g.Dec();
  EXPECT_EQ(g.Value(), 11);
}

TEST(MetricsTest, FormatValue) {
  using metrics_internal::FormatValue;
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(1), "1");
  EXPECT_EQ(FormatValue(-2.5), "-2.5");
  EXPECT_EQ(FormatValue(1234567), "1234567");
  EXPECT_EQ(FormatValue(1e20), "1e+20");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
}

TEST(MetricsTest, BucketHelpers) {
  EXPECT_EQ(LinearBuckets(1, 2, 3), (std::vector<double>{1, 3, 5}));
  EXPECT_EQ(ExponentialBuckets(0.001, 10, 4), (std::vector<double>{0.001, 0.01, 0.1, 1}));
}

TEST(MetricsTest, HistogramBucketsAreCumulativeInCount) {
  Histogram h({1, 2});
  h.Observe(0.5);
  h.Observe(1.5);
  h.Observe(3);
  h.Observe(std::nan(""));  // NaN counts in +Inf.
  EXPECT_EQ(h.BucketCount(0), 1u);
  EXPECT_EQ(h.BucketCount(1), 1u);
  EXPECT_EQ(h.BucketCount(2), 2u);
  EXPECT_EQ(h.Count(), 4u);
}

TEST(MetricsTest, ConcurrentUpdatesAreNotLost) {
  Registry reg;
  auto counter = reg.AddCounter("n_total", "N.");
  auto hist = reg.AddHistogram("h", "H.", {5});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        counter->Inc();
        hist->Observe(i % 10);
      }
    });
  }
  // Rendering concurrently with updates must be safe.
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(reg.Expose().empty());
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter->Value(), 40000);
  EXPECT_EQ(hist->Count(), 40000u);
  EXPECT_EQ(hist->BucketCount(0), 24000u);  // 0..5 of every 10.
  EXPECT_EQ(hist->Sum(), 4 * 1000 * 45);
}

TEST(MetricsDeathTest, ProgrammingErrorsAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Registry reg;
  reg.AddCounterFamily("dup_total", "D.", {"a"});
  EXPECT_DEATH(reg.AddGaugeFamily("dup_total", "D.", {"a"}), "registered twice");
  EXPECT_DEATH(reg.AddCounterFamily("dup_total", "D.", {"b"}), "registered twice");
  EXPECT_DEATH(reg.AddCounterFamily("bad-name", "B.", {}), "invalid metric name");
  EXPECT_DEATH(reg.AddHistogramFamily("h2", "H.", {"le"}, {1}), "cannot have a label");
  EXPECT_DEATH(reg.AddHistogramFamily("h3", "H.", {}, {2, 1}), "strictly increasing");
  EXPECT_DEATH(reg.AddCounterFamily("dup_total", "D.", {"a"})->WithLabels({}), "label values");
}

}  // namespace
}  // namespace sluice
