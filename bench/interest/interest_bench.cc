// interest_bench: the interest grid (src/interest) on the anchor's
// scenario, our per-tick time beside the anchor's published figure.
//
// The scenario of bench/scenario/crowd.h: 1,000 entities and 300
// subscribers; subscriber i is centred on entity i with a circle of radius
// 150; cell size 150, margin 15. "spread": a world of 2000 x 2000,
// "crowded": 400 x 400. Start positions are uniform; every tick each entity
// takes a random-walk step per axis, x = clamp(x + (rand() - 0.5) * 20, 0,
// world), then y. rand() is xorshift64 (13, 7, 17) seeded
// 0x9e3779b97f4a7c15, (s >> 40) / 2^24. The visibility filter hides ids
// divisible by 97 except the subscriber's own entity. Each tick moves the
// entities (positions kept in double, passed as float), then times one
// InterestManager::Update (grid rebuild, 300 queries with hysteresis, the
// filter, entered/left); the movement is not timed. 20 warm-up ticks, then 400
// measured; p50 and p99 per tick.
//
// The first ticks are checked against a brute-force computation; a mismatch
// makes the exit status 1. Timing never does. --quick: a few ticks, all
// checked (the interest_bench_smoke test).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/scenario/crowd.h"
#include "interest/interest.h"

namespace {

using tessera::Status;
using namespace tessera::interest;
using namespace tessera::bench::crowd;

// The same rules, pair by pair; returns the number of mismatching views.
class BruteForce {
 public:
  int Check(const std::vector<EntityPos>& es,
            const std::vector<Subscriber>& subs, const std::vector<View>& got) {
    if (seen_.empty()) {
      seen_.assign(subs.size(), std::vector<uint8_t>(es.size()));
    }
    int bad = 0;
    const double r2 = double{kRadius} * kRadius;
    const double outer = double{kRadius} + double{kMargin};
    for (size_t i = 0; i < subs.size(); ++i) {
      std::vector<uint64_t> visible, entered, left;
      for (size_t e = 0; e < es.size(); ++e) {
        const double dx = double{es[e].x} - subs[i].area->x;
        const double dy = double{es[e].y} - subs[i].area->y;
        const double d2 = dx * dx + dy * dy;
        const bool now = (d2 <= r2 || (seen_[i][e] && d2 <= outer * outer)) &&
                         !Hidden(es[e].id, i);
        if (now) visible.push_back(es[e].id);
        if (now && !seen_[i][e]) entered.push_back(es[e].id);
        if (!now && seen_[i][e]) left.push_back(es[e].id);
        seen_[i][e] = now;
      }
      if (visible != got[i].visible || entered != got[i].entered ||
          left != got[i].left) {
        ++bad;
      }
    }
    return bad;
  }

 private:
  std::vector<std::vector<uint8_t>> seen_;
};

struct Outcome {
  double p50_ms = 0;
  double p99_ms = 0;
  double cpu_p50_ms = 0;
  double visible_per_subscriber = 0;
  double changes_per_tick = 0;  // entered + left, all subscribers
  int checked_ticks = 0;
  int mismatches = 0;
};

Outcome Run(float world, int warmup, int measured, int checked) {
  RandomWalk walk(world);
  InterestManager manager =
      std::move(InterestManager::Create({kRadius, kMargin})).value();
  const std::vector<std::string> names = SubscriberNames();
  std::vector<Subscriber> subs(kSubscribers);
  std::vector<EntityPos> entities(kEntities);
  std::vector<View> views;
  Filter filter = HiddenFilter();
  BruteForce brute;
  Outcome out;
  std::vector<double> times_ms, cpu_ms;
  uint64_t visible = 0, changes = 0;
  for (int tick = 0; tick < warmup + measured; ++tick) {
    walk.Step();
    for (int i = 0; i < kEntities; ++i) {
      entities[i] = {static_cast<uint64_t>(i), 0, static_cast<float>(walk.x(i)),
                     static_cast<float>(walk.y(i))};
    }
    CentreSubscribers(names, entities, subs);
    const double c0 = ThreadCpuMs();
    const auto t0 = std::chrono::steady_clock::now();
    Status st = manager.Update(entities, subs, &filter, views);
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = ThreadCpuMs();
    if (!st.ok()) {
      std::fprintf(stderr, "Update failed: %s\n", st.ToString().c_str());
      ++out.mismatches;
      return out;
    }
    if (tick < checked) {
      out.mismatches += brute.Check(entities, subs, views);
      ++out.checked_ticks;
    }
    if (tick < warmup) continue;
    times_ms.push_back(
        std::chrono::duration<double, std::milli>(t1 - t0).count());
    cpu_ms.push_back(c1 - c0);
    for (const View& v : views) {
      visible += v.visible.size();
      changes += v.entered.size() + v.left.size();
    }
  }
  const size_t n = times_ms.size();
  out.p50_ms = Percentile(times_ms, 0.5);
  out.p99_ms = Percentile(times_ms, 0.99);
  out.cpu_p50_ms = Percentile(cpu_ms, 0.5);
  out.visible_per_subscriber =
      static_cast<double>(visible) / (n * kSubscribers);
  out.changes_per_tick = static_cast<double>(changes) / n;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--scenario") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--scenario spread|crowded]\n",
                   argv[0]);
      return 2;
    }
  }
  const int warmup = quick ? 3 : 20;
  const int measured = quick ? 12 : 400;
  const int checked = quick ? warmup + measured : 25;
  std::printf(
      "interest_bench: %d entities, %d subscribers, radius %.0f, cell %.0f, "
      "margin %.0f; %d warm-up + %d measured ticks%s\n\n",
      kEntities, kSubscribers, kRadius, kRadius, kMargin, warmup, measured,
      quick ? " (--quick: timings not meaningful)" : "");
  std::printf("%-8s %-10s %7s %7s %8s %11s %11s %10s %12s %13s\n", "scenario",
              "world", "p50 ms", "p99 ms", "cpu p50", "anchor p50",
              "ours/anchor", "target p50", "visible/sub", "changes/tick");
  struct Case {
    const char* name;
    float world;
    double anchor_p50_ms;
    double target_p50_ms;
  };
  const Case cases[] = {{"spread", 2000, 0.2, 0.1},
                        {"crowded", 400, 1.5, 0.75}};
  int mismatches = 0, checked_ticks = 0;
  for (const Case& c : cases) {
    if (only != nullptr && std::strcmp(only, c.name) != 0) continue;
    const Outcome o = Run(c.world, warmup, measured, checked);
    mismatches += o.mismatches;
    checked_ticks += o.checked_ticks;
    const std::string world = std::to_string(static_cast<int>(c.world)) + "x" +
                              std::to_string(static_cast<int>(c.world));
    std::printf(
        "%-8s %-10s %7.3f %7.3f %8.3f %11.2f %11.2f %7.2f %-2s %12.1f %13.1f\n",
        c.name, world.c_str(), o.p50_ms, o.p99_ms, o.cpu_p50_ms,
        c.anchor_p50_ms, o.p50_ms / c.anchor_p50_ms, c.target_p50_ms,
        o.p50_ms <= c.target_p50_ms ? "ok" : "--", o.visible_per_subscriber,
        o.changes_per_tick);
  }
  std::printf(
      "\np50/p99: wall clock per Update; cpu p50: this thread's CPU time per "
      "Update\n(not counting time the core ran other processes). anchor: the "
      "competitor's p50\non the same scenario; target: ours.\n");
  std::printf(
      "\ncross-check against brute force: %d ticks, %d mismatching views\n",
      checked_ticks, mismatches);
  return mismatches == 0 ? 0 : 1;
}
