// A metrics registry that renders the Prometheus text exposition format
// 0.0.4: counters, gauges and fixed-bucket histograms, each in a family with
// optional labels.
//
//   Registry& reg = *Registry::Default();
//   CounterFamily* rows = reg.AddCounterFamily(
//       "sluice_sink_rows_total", "Rows written to the sink.", {"changefeed"});
//   std::shared_ptr<Counter> cf_rows = rows->WithLabels({"cf-1"});  // cache it
//   cf_rows->Add(batch.size());                                    // hot path
//
// Updating a metric is a relaxed atomic operation and takes no lock. Creating
// families and children and rendering take a mutex. All classes here are
// thread-safe. A registry owns its families, which live as long as it does;
// children are shared between the family and whoever holds them.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/thread_annotations.h"

namespace sluice {

// The Content-Type of Registry::Expose() output.
inline constexpr std::string_view kPrometheusTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// A value that only goes up (restarts at zero with the process).
class Counter {
 public:
  void Inc() { Add(1); }
  // `v` must be >= 0 (asserted in debug builds, ignored otherwise).
  void Add(double v);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that goes up and down.
class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  void Sub(double v) { Add(-v); }
  void Inc() { Add(1); }
  void Dec() { Add(-1); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Counts observations into fixed buckets. Bucket i counts values
// <= bounds[i]; an implicit +Inf bucket counts the rest. Concurrent
// Observe() calls may make a rendered _sum lag its _count slightly; the
// buckets and _count are always consistent with each other.
class Histogram {
 public:
  // `bounds` must be strictly increasing and finite.
  explicit Histogram(std::vector<double> bounds);

  void Observe(double v);

  const std::vector<double>& bounds() const { return bounds_; }
  // Non-cumulative count of bucket i; i == bounds().size() is +Inf.
  uint64_t BucketCount(size_t i) const { return counts_[i].load(std::memory_order_relaxed); }
  uint64_t Count() const;
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  const std::vector<double> bounds_;
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<double> sum_{0};
};

// `count` bounds start, start + width, ...
std::vector<double> LinearBuckets(double start, double width, int count);
// `count` bounds start, start * factor, ... (start > 0, factor > 1).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

enum class MetricType { kCounter, kGauge, kHistogram };

// Name, help and label names of one metric family, plus its rendering.
class MetricFamilyBase {
 public:
  MetricFamilyBase(std::string name, std::string help, MetricType type,
                   std::vector<std::string> label_names, std::vector<double> bounds);
  virtual ~MetricFamilyBase() = default;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  // Histogram bucket bounds; empty for other types.
  const std::vector<double>& bounds() const { return bounds_; }

  // Appends HELP, TYPE and one sample line per child (nothing if the
  // family has no children).
  virtual void AppendText(std::string* out) const = 0;

 private:
  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;
};

// The children of one family, one per distinct list of label values.
template <typename T>
class MetricFamily final : public MetricFamilyBase {
 public:
  MetricFamily(std::string name, std::string help, MetricType type,
               std::vector<std::string> label_names, std::vector<double> bounds = {})
      : MetricFamilyBase(std::move(name), std::move(help), type, std::move(label_names),
                         std::move(bounds)) {}

  // The child for these label values (one per label name, in order),
  // created on first use. Takes the family mutex: call it once and keep the
  // pointer rather than calling it on every update. A wrong number of values
  // is a programming error and aborts.
  std::shared_ptr<T> WithLabels(const std::vector<std::string>& values) EXCLUDES(mu_);

  // Stops exporting the child with these values (e.g. when a changefeed is
  // removed). Holders of the pointer may keep updating it; it is no longer
  // rendered.
  void Remove(const std::vector<std::string>& values) EXCLUDES(mu_);

  void AppendText(std::string* out) const override EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<std::vector<std::string>, std::shared_ptr<T>> children_ GUARDED_BY(mu_);
};

using CounterFamily = MetricFamily<Counter>;
using GaugeFamily = MetricFamily<Gauge>;
using HistogramFamily = MetricFamily<Histogram>;

// A set of families rendered together. Adding a family whose name is already
// registered returns the existing one if type, labels (and buckets) match and
// aborts otherwise, as do invalid metric or label names: both are
// programming errors caught at startup.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The process-wide registry that the server's /metrics endpoint renders.
  static Registry* Default();

  CounterFamily* AddCounterFamily(const std::string& name, const std::string& help,
                                  std::vector<std::string> label_names) EXCLUDES(mu_);
  GaugeFamily* AddGaugeFamily(const std::string& name, const std::string& help,
                              std::vector<std::string> label_names) EXCLUDES(mu_);
  HistogramFamily* AddHistogramFamily(const std::string& name, const std::string& help,
                                      std::vector<std::string> label_names,
                                      std::vector<double> bounds) EXCLUDES(mu_);

  // Unlabelled metrics: a family with no labels and its single child.
  std::shared_ptr<Counter> AddCounter(const std::string& name, const std::string& help);
  std::shared_ptr<Gauge> AddGauge(const std::string& name, const std::string& help);
  std::shared_ptr<Histogram> AddHistogram(const std::string& name, const std::string& help,
                                          std::vector<double> bounds);

  // Every family, sorted by name, in text format 0.0.4.
  std::string Expose() const EXCLUDES(mu_);

 private:
  MetricFamilyBase* Add(std::unique_ptr<MetricFamilyBase> family) EXCLUDES(mu_);

  mutable Mutex mu_;
  std::map<std::string, std::unique_ptr<MetricFamilyBase>, std::less<>> families_ GUARDED_BY(mu_);
};

namespace metrics_internal {

// Rendering helpers, exposed for MetricFamily<T> and for tests.
std::string FormatValue(double v);                 // 1, 0.25, 1e+20, +Inf, -Inf, NaN
std::string EscapeLabelValue(std::string_view v);  // \ " newline
std::string EscapeHelp(std::string_view v);        // \ newline
// `{a="x",b="y"}` (with `extra` = `le="0.5"` appended), or "" with no labels.
std::string LabelText(const std::vector<std::string>& names, const std::vector<std::string>& values,
                      std::string_view extra = {});
[[noreturn]] void Fatal(const std::string& message);

void AppendSamples(const std::string& name, const std::vector<std::string>& label_names,
                   const std::vector<std::string>& values, const Counter& c, std::string* out);
void AppendSamples(const std::string& name, const std::vector<std::string>& label_names,
                   const std::vector<std::string>& values, const Gauge& g, std::string* out);
void AppendSamples(const std::string& name, const std::vector<std::string>& label_names,
                   const std::vector<std::string>& values, const Histogram& h, std::string* out);
void AppendHeader(const MetricFamilyBase& family, std::string* out);

template <typename T>
std::shared_ptr<T> MakeChild(const std::vector<double>& bounds) {
  if constexpr (std::is_same_v<T, Histogram>) {
    return std::make_shared<Histogram>(bounds);
  } else {
    return std::make_shared<T>();
  }
}

}  // namespace metrics_internal

template <typename T>
std::shared_ptr<T> MetricFamily<T>::WithLabels(const std::vector<std::string>& values) {
  if (values.size() != label_names().size()) {
    metrics_internal::Fatal("metric " + name() + ": got " + std::to_string(values.size()) +
                            " label values for " + std::to_string(label_names().size()) +
                            " labels");
  }
  MutexLock lock(&mu_);
  auto [it, inserted] = children_.try_emplace(values);
  if (inserted) it->second = metrics_internal::MakeChild<T>(bounds());
  return it->second;
}

template <typename T>
void MetricFamily<T>::Remove(const std::vector<std::string>& values) {
  MutexLock lock(&mu_);
  children_.erase(values);
}

template <typename T>
void MetricFamily<T>::AppendText(std::string* out) const {
  MutexLock lock(&mu_);
  if (children_.empty()) return;
  metrics_internal::AppendHeader(*this, out);
  for (const auto& [values, child] : children_) {
    metrics_internal::AppendSamples(name(), label_names(), values, *child, out);
  }
}

}  // namespace sluice
