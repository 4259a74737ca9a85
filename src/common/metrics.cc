// Metrics are created under mu_ and never destroyed before the registry, so
// the pointers handed out stay valid; their values are atomics read without
// the lock while rendering (a scrape sees each value at some moment during
// the render, not one global snapshot).
#include "common/metrics.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>

namespace tessera {

// ---- Histogram
// ---------------------------------------------------------------

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  // Upper bounds must be increasing and finite (+Inf is implicit).
  std::erase_if(bounds_, [](double b) { return !std::isfinite(b); });
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
  buckets_ = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1);
}

void Histogram::Observe(double v) {
  if (std::isnan(v)) return;  // would poison the sum; nothing to count
  // The first bucket whose upper bound is >= v ("le"), else +Inf.
  const size_t i = static_cast<size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  uint64_t old_bits = sum_bits_.load(std::memory_order_relaxed);
  while (!sum_bits_.compare_exchange_weak(
      old_bits, std::bit_cast<uint64_t>(std::bit_cast<double>(old_bits) + v),
      std::memory_order_relaxed)) {
  }
}

std::vector<uint64_t> Histogram::Counts() const {
  std::vector<uint64_t> counts(bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    counts[i] = total;
  }
  return counts;
}

double Histogram::sum() const {
  return std::bit_cast<double>(sum_bits_.load(std::memory_order_relaxed));
}

uint64_t Histogram::count() const {
  return count_.load(std::memory_order_relaxed);
}

// ---- Registry
// ----------------------------------------------------------------

// All series of one metric name. A name keeps the type it was first created
// with; a later Get of another type still returns a working metric, but it
// is not rendered (a programmer error: one name, one type).
struct Metrics::Family {
  std::string help;
  const char* type = "";
  std::map<Labels, std::unique_ptr<Counter>> counters;
  std::map<Labels, std::unique_ptr<Gauge>> gauges;
  std::map<Labels, std::unique_ptr<Histogram>> histograms;
};

Metrics::Metrics() = default;
Metrics::~Metrics() = default;

Metrics::Family& Metrics::FamilyFor(const std::string& name,
                                    const std::string& help, const char* type) {
  std::unique_ptr<Family>& family = families_[name];
  if (!family) {
    family = std::make_unique<Family>();
    family->help = help;
    family->type = type;
  }
  return *family;
}

Counter* Metrics::GetCounter(const std::string& name, const std::string& help,
                             const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = FamilyFor(name, help, "counter").counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return slot.get();
}

Gauge* Metrics::GetGauge(const std::string& name, const std::string& help,
                         const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = FamilyFor(name, help, "gauge").gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return slot.get();
}

Histogram* Metrics::GetHistogram(const std::string& name,
                                 const std::string& help,
                                 std::vector<double> bounds,
                                 const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = FamilyFor(name, help, "histogram").histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(std::move(bounds));
  return slot.get();
}

// ---- Text format 0.0.4
// -------------------------------------------------------

namespace {

// HELP text escapes backslash and newline; label values also the quote.
std::string Escape(const std::string& s, bool quote) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return "NaN";
  return std::string(buf, end);
}

// `{a="x",b="y"}` (with `le` last when given), or "" without labels.
std::string FormatLabels(const Metrics::Labels& labels,
                         const std::string* le = nullptr) {
  if (labels.empty() && le == nullptr) return "";
  std::string out = "{";
  bool first = true;
  auto add = [&](const std::string& key, const std::string& value) {
    if (!first) out += ',';
    first = false;
    out += key;
    out += "=\"";
    out += Escape(value, true);
    out += '"';
  };
  for (const auto& [key, value] : labels) add(key, value);
  if (le != nullptr) add("le", *le);
  out += '}';
  return out;
}

void RenderHistogram(const std::string& name, const Metrics::Labels& labels,
                     const Histogram& h, std::string* out) {
  const std::vector<uint64_t> counts = h.Counts();
  for (size_t i = 0; i < counts.size(); ++i) {
    const std::string le =
        i < h.bounds().size() ? FormatDouble(h.bounds()[i]) : "+Inf";
    *out += name + "_bucket" + FormatLabels(labels, &le) + " " +
            std::to_string(counts[i]) + "\n";
  }
  const std::string label_text = FormatLabels(labels);
  *out += name + "_sum" + label_text + " " + FormatDouble(h.sum()) + "\n";
  // The +Inf bucket, so _count always equals it within one scrape.
  *out +=
      name + "_count" + label_text + " " + std::to_string(counts.back()) + "\n";
}

}  // namespace

std::string Metrics::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [name, family] : families_) {  // sorted by name
    if (!family->help.empty()) {
      out += "# HELP " + name + " " + Escape(family->help, false) + "\n";
    }
    out += "# TYPE " + name + " " + family->type + "\n";
    const std::string type = family->type;
    if (type == "counter") {
      for (const auto& [labels, c] : family->counters) {
        out += name + FormatLabels(labels) + " " + std::to_string(c->value()) +
               "\n";
      }
    } else if (type == "gauge") {
      for (const auto& [labels, g] : family->gauges) {
        out += name + FormatLabels(labels) + " " + std::to_string(g->value()) +
               "\n";
      }
    } else {
      for (const auto& [labels, h] : family->histograms) {
        RenderHistogram(name, labels, *h, &out);
      }
    }
  }
  return out;
}

}  // namespace tessera
