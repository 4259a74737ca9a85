// A small metrics registry rendered in the Prometheus text format.
// Counters and gauges are lock-free atomics once created; creation and
// rendering take a mutex. Any thread.
#ifndef TESSERA_COMMON_METRICS_H_
#define TESSERA_COMMON_METRICS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessera {

class Counter {
 public:
  void Add(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

class Gauge {
 public:
  void Set(int64_t v) { v_.store(v, std::memory_order_relaxed); }
  void Add(int64_t n) { v_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> v_{0};
};

// Cumulative buckets with fixed upper bounds (seconds or bytes).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  // Per-bucket cumulative counts (size bounds()+1, last is +Inf), sum, count.
  std::vector<uint64_t> Counts() const;
  double sum() const;
  uint64_t count() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_bits_{0};  // double, CAS-added
};

class Metrics {
 public:
  // Out of line: Family is incomplete here.
  Metrics();
  ~Metrics();

  // Returns the metric named `name` with `labels` (e.g. {{"status","running"}}),
  // creating it on first use; the pointer stays valid for the registry's
  // lifetime. `help` is used on first creation of the name.
  using Labels = std::map<std::string, std::string>;
  Counter* GetCounter(const std::string& name, const std::string& help,
                      const Labels& labels = {});
  Gauge* GetGauge(const std::string& name, const std::string& help,
                  const Labels& labels = {});
  Histogram* GetHistogram(const std::string& name, const std::string& help,
                          std::vector<double> bounds,
                          const Labels& labels = {});
  // Prometheus text exposition format 0.0.4.
  std::string Render() const;

 private:
  struct Family;
  Family& FamilyFor(const std::string& name, const std::string& help,
                    const char* type);
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Family>> families_;
};

}  // namespace tessera

#endif  // TESSERA_COMMON_METRICS_H_
