// The anchor's interest scenario, shared by interest_bench
// (bench/interest) and history_bench (bench/replication): 1,000 entities
// and 300 subscribers; subscriber i ("player-<i>") is centred on entity i
// with a circle of radius 150 (cell 150, margin 15). Start positions are
// uniform in a world x world square; every tick each entity takes a
// random-walk step per axis, x = clamp(x + (rand() - 0.5) * 20, 0, world),
// then y. rand() is xorshift64 (13, 7, 17) seeded 0x9e3779b97f4a7c15,
// (s >> 40) / 2^24. The visibility filter hides ids divisible by 97 except
// the subscriber's own entity. Plus the benches' timing helpers.
#ifndef TESSERA_BENCH_SCENARIO_CROWD_H_
#define TESSERA_BENCH_SCENARIO_CROWD_H_

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "interest/interest.h"

namespace tessera::bench::crowd {

inline constexpr int kEntities = 1000;
inline constexpr int kSubscribers = 300;
inline constexpr float kRadius = 150;
inline constexpr float kMargin = kRadius * 0.1f;
inline constexpr uint64_t kHiddenEvery = 97;

class XorShift64 {
 public:
  double Next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return static_cast<double>(s_ >> 40) / 16777216.0;
  }

 private:
  uint64_t s_ = 0x9e3779b97f4a7c15ull;
};

// The kEntities positions, kept in double, and the walk's random numbers.
class RandomWalk {
 public:
  // Uniform start positions (x, then y, entity by entity).
  explicit RandomWalk(double world)
      : world_(world), xs_(kEntities), ys_(kEntities) {
    for (int i = 0; i < kEntities; ++i) {
      xs_[i] = rng_.Next() * world_;
      ys_[i] = rng_.Next() * world_;
    }
  }
  // One step per axis for every entity.
  void Step() {
    for (int i = 0; i < kEntities; ++i) {
      xs_[i] = std::clamp(xs_[i] + (rng_.Next() - 0.5) * 20, 0.0, world_);
      ys_[i] = std::clamp(ys_[i] + (rng_.Next() - 0.5) * 20, 0.0, world_);
    }
  }
  double x(int i) const { return xs_[i]; }
  double y(int i) const { return ys_[i]; }

 private:
  const double world_;
  XorShift64 rng_;
  std::vector<double> xs_, ys_;
};

inline bool Hidden(uint64_t id, size_t subscriber) {
  return id % kHiddenEvery == 0 && id != subscriber;
}

// The visibility filter: hides what Hidden() says.
inline interest::Filter HiddenFilter() {
  return
      [](std::span<const interest::Subscriber>, interest::FilterBatch& batch) {
        for (size_t i = 0; i < batch.size(); ++i) {
          std::span<const uint64_t> c = batch.candidates(i);
          for (size_t j = 0; j < c.size(); ++j) {
            if (Hidden(c[j], i)) batch.Hide(i, j);
          }
        }
        return Status::Ok();
      };
}

// "player-0" .. "player-<kSubscribers - 1>".
inline std::vector<std::string> SubscriberNames() {
  std::vector<std::string> names;
  for (int i = 0; i < kSubscribers; ++i) {
    names.push_back("player-" + std::to_string(i));
  }
  return names;
}

// subs[i]: names[i], centred on entities[i] (entity i is at index i).
inline void CentreSubscribers(const std::vector<std::string>& names,
                              const std::vector<interest::EntityPos>& entities,
                              std::vector<interest::Subscriber>& subs) {
  for (int i = 0; i < kSubscribers; ++i) {
    subs[i] = {names[i], interest::Area{entities[i].x, entities[i].y, kRadius}};
  }
}

// CPU time of this thread: unlike the wall clock, it does not count the
// time other processes had the core.
inline double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 +
         static_cast<double>(ts.tv_nsec) / 1e6;
}

// The q-quantile of `v` (nearest rank).
inline double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * v.size()));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace tessera::bench::crowd

#endif  // TESSERA_BENCH_SCENARIO_CROWD_H_
