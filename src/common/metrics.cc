#include "common/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace sluice {
namespace metrics_internal {

void Fatal(const std::string& message) {
  std::fprintf(stderr, "metrics: %s\n", message.c_str());
  std::abort();
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string LabelText(const std::vector<std::string>& names, const std::vector<std::string>& values,
                      std::string_view extra) {
  if (names.empty() && extra.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ",";
    out += names[i];
    out += "=\"";
    out += EscapeLabelValue(values[i]);
    out += "\"";
  }
  if (!extra.empty()) {
    if (!names.empty()) out += ",";
    out += extra;
  }
  out += "}";
  return out;
}

namespace {

void AppendLine(const std::string& name, std::string_view suffix, const std::string& labels,
                double value, std::string* out) {
  out->append(name);
  out->append(suffix);
  out->append(labels);
  out->push_back(' ');
  out->append(FormatValue(value));
  out->push_back('\n');
}

}  // namespace

void AppendSamples(const std::string& name, const std::vector<std::string>& label_names,
                   const std::vector<std::string>& values, const Counter& c, std::string* out) {
  AppendLine(name, "", LabelText(label_names, values), c.Value(), out);
}

void AppendSamples(const std::string& name, const std::vector<std::string>& label_names,
                   const std::vector<std::string>& values, const Gauge& g, std::string* out) {
  AppendLine(name, "", LabelText(label_names, values), g.Value(), out);
}

void AppendSamples(const std::string& name, const std::vector<std::string>& label_names,
                   const std::vector<std::string>& values, const Histogram& h, std::string* out) {
  uint64_t cumulative = 0;
  const auto& bounds = h.bounds();
  for (size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += h.BucketCount(i);
    std::string le = i < bounds.size() ? FormatValue(bounds[i]) : "+Inf";
    AppendLine(name, "_bucket", LabelText(label_names, values, "le=\"" + le + "\""),
               static_cast<double>(cumulative), out);
  }
  std::string labels = LabelText(label_names, values);
  AppendLine(name, "_sum", labels, h.Sum(), out);
  AppendLine(name, "_count", labels, static_cast<double>(cumulative), out);
}

void AppendHeader(const MetricFamilyBase& family, std::string* out) {
  out->append("# HELP ").append(family.name()).append(" ");
  out->append(EscapeHelp(family.help())).append("\n");
  out->append("# TYPE ").append(family.name()).append(" ");
  switch (family.type()) {
    case MetricType::kCounter:
      out->append("counter\n");
      break;
    case MetricType::kGauge:
      out->append("gauge\n");
      break;
    case MetricType::kHistogram:
      out->append("histogram\n");
      break;
  }
}

}  // namespace metrics_internal

namespace {

using metrics_internal::Fatal;

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

void ValidateBounds(const std::vector<double>& bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      Fatal("histogram bounds must be finite and strictly increasing");
    }
  }
}

}  // namespace

void Counter::Add(double v) {
  assert(v >= 0 && "counters only go up");
  if (!(v >= 0)) return;
  value_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
  ValidateBounds(bounds_);
}

void Histogram::Observe(double v) {
  size_t i = std::isnan(v)
                 ? bounds_.size()
                 : static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) -
                                       bounds_.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

uint64_t Histogram::Count() const {
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) total += BucketCount(i);
  return total;
}

std::vector<double> LinearBuckets(double start, double width, int count) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) out.push_back(start + width * i);
  return out;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  assert(start > 0 && factor > 1);
  std::vector<double> out;
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor) out.push_back(v);
  return out;
}

MetricFamilyBase::MetricFamilyBase(std::string name, std::string help, MetricType type,
                                   std::vector<std::string> label_names, std::vector<double> bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)),
      bounds_(std::move(bounds)) {
  if (!IsValidMetricName(name_)) Fatal("invalid metric name \"" + name_ + "\"");
  std::set<std::string_view> seen;
  for (const auto& label : label_names_) {
    if (!IsValidLabelName(label)) Fatal("metric " + name_ + ": invalid label \"" + label + "\"");
    if (type_ == MetricType::kHistogram && label == "le") {
      Fatal("metric " + name_ + ": histograms cannot have a label \"le\"");
    }
    if (!seen.insert(label).second) Fatal("metric " + name_ + ": duplicate label " + label);
  }
  ValidateBounds(bounds_);
}

Registry* Registry::Default() {
  static Registry* const kRegistry = new Registry();
  return kRegistry;
}

MetricFamilyBase* Registry::Add(std::unique_ptr<MetricFamilyBase> family) {
  MutexLock lock(&mu_);
  auto it = families_.find(family->name());
  if (it == families_.end()) {
    MetricFamilyBase* raw = family.get();
    families_.emplace(family->name(), std::move(family));
    return raw;
  }
  const MetricFamilyBase& existing = *it->second;
  if (existing.type() != family->type() || existing.label_names() != family->label_names() ||
      existing.bounds() != family->bounds()) {
    Fatal("metric " + family->name() + " registered twice with different type or labels");
  }
  return it->second.get();
}

CounterFamily* Registry::AddCounterFamily(const std::string& name, const std::string& help,
                                          std::vector<std::string> label_names) {
  return static_cast<CounterFamily*>(Add(
      std::make_unique<CounterFamily>(name, help, MetricType::kCounter, std::move(label_names))));
}

GaugeFamily* Registry::AddGaugeFamily(const std::string& name, const std::string& help,
                                      std::vector<std::string> label_names) {
  return static_cast<GaugeFamily*>(
      Add(std::make_unique<GaugeFamily>(name, help, MetricType::kGauge, std::move(label_names))));
}

HistogramFamily* Registry::AddHistogramFamily(const std::string& name, const std::string& help,
                                              std::vector<std::string> label_names,
                                              std::vector<double> bounds) {
  return static_cast<HistogramFamily*>(Add(std::make_unique<HistogramFamily>(
      name, help, MetricType::kHistogram, std::move(label_names), std::move(bounds))));
}

std::shared_ptr<Counter> Registry::AddCounter(const std::string& name, const std::string& help) {
  return AddCounterFamily(name, help, {})->WithLabels({});
}

std::shared_ptr<Gauge> Registry::AddGauge(const std::string& name, const std::string& help) {
  return AddGaugeFamily(name, help, {})->WithLabels({});
}

std::shared_ptr<Histogram> Registry::AddHistogram(const std::string& name, const std::string& help,
                                                  std::vector<double> bounds) {
  return AddHistogramFamily(name, help, {}, std::move(bounds))->WithLabels({});
}

std::string Registry::Expose() const {
  std::string out;
  MutexLock lock(&mu_);
  for (const auto& [name, family] : families_) family->AppendText(&out);
  return out;
}

}  // namespace sluice
