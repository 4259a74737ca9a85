// history_bench: the upkeep of replication::SentHistory (lag compensation,
// issue 13) beside the tick's interest + replication work it rides on.
//
// The interest bench's crowded scenario (bench/scenario/crowd.h):
// 1,000 entities and 300 subscribers in a 400 x 400 world; subscriber i is
// centred on entity i with radius 150 (cell 150, margin 15); every tick each
// entity takes a random-walk step per axis, x = clamp(x + (rand() - 0.5) *
// 20, 0, 400), then y (xorshift64 (13, 7, 17) seeded 0x9e3779b97f4a7c15,
// (s >> 40) / 2^24); the visibility filter hides ids divisible by 97 except
// the subscriber's own entity. Replication: precision 0.01, z up; one
// Mirror, one SubscriberStream per subscriber encoding its visible set with
// its interest circle as the focus.
//
// Per tick, timed (this thread's CPU time, not the wall clock: the machine
// may be shared): Mirror::Apply of the guest's change list, the interest
// Update (grid, queries, filter) over the mirror's ground positions and the
// 300 Encodes ("base"); with the history also RecordWorld after the Apply
// and a RecordSent per subscriber after the Encodes ("history"). The
// guest's moves and change list are not timed. Each row runs the same ticks
// twice, without and with a SentHistory of 10 ticks: the figure is the
// history's time as a share of the base time of the same ticks (target <=
// 15%), with the whole tick's time of both runs beside it, and the
// history's memory_bytes() (target <= 8 MB). Rows: no byte budget, and a
// budget of 1,200 bytes per tick that defers updates. 20 warm-up ticks, 300
// measured; p50 over ticks.
//
// Correctness, never timing, decides the exit status: for every 37th
// subscriber a plain reference model (replication/testing/sent_model.h)
// records what its stream held each tick, and the history's picture at
// several view ticks must equal the model's exactly; on every tick with
// --quick (a few ticks: the history_bench_smoke test), on the first 30
// otherwise (outside the timed parts).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bench/scenario/crowd.h"
#include "interest/interest.h"
#include "replication/mirror.h"
#include "replication/sent_history.h"
#include "replication/subscriber_stream.h"
#include "replication/testing/guest_store.h"
#include "replication/testing/sent_model.h"

namespace {

using tessera::Status;
using tessera::interest::EntityPos;
using tessera::interest::InterestManager;
using tessera::interest::View;
using tessera::replication::Config;
using tessera::replication::Focus;
using tessera::replication::Mirror;
using tessera::replication::SentHistory;
using tessera::replication::SubscriberStream;
using tessera::replication::testing::GuestStore;
using tessera::replication::testing::PictureText;
using tessera::replication::testing::SentModel;
using namespace tessera::bench::crowd;
using Clock = std::chrono::steady_clock;

constexpr double kWorld = 400;
constexpr uint32_t kHistoryTicks = 10;
constexpr double kPrecision = 0.01;
constexpr int kCheckEvery = 37;  // subscribers compared with the model

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

struct Outcome {
  double cpu_p50_ms = 0;   // the whole tick, this thread's CPU time
  double tick_p50_ms = 0;  // base + history, CPU time
  double base_p50_ms = 0;
  double history_p50_ms = 0;
  double history_share = 0;  // sum of history / sum of base, measured ticks
  size_t memory_bytes = 0;   // at the end
  size_t max_memory_bytes = 0;
  double draw_us = 0;  // one Draw, mean
  double visible_per_subscriber = 0;
  double deferred_per_subscriber = 0;
  int checked_draws = 0;
  int mismatches = 0;
};

Outcome Run(uint32_t budget, bool with_history, int warmup, int measured,
            int checked) {
  RandomWalk walk(kWorld);
  GuestStore store;
  for (int i = 0; i < kEntities; ++i) store.Spawn(static_cast<uint64_t>(i));
  Mirror mirror(Config{kPrecision, budget, false});
  InterestManager manager =
      std::move(InterestManager::Create({kRadius, kMargin})).value();
  const std::vector<std::string> names = SubscriberNames();
  std::vector<SubscriberStream> streams(kSubscribers);
  std::optional<SentHistory> history;
  if (with_history) history.emplace(kHistoryTicks);
  SentModel model(kHistoryTicks, kPrecision);
  std::vector<tessera::interest::Subscriber> subs(kSubscribers);
  std::vector<EntityPos> entities;
  entities.reserve(kEntities);
  std::vector<View> views;
  tessera::interest::Filter filter = HiddenFilter();
  std::string payload;
  Outcome out;
  std::vector<double> tick_ms, base_ms, history_ms;
  double base_sum = 0, history_sum = 0;
  uint64_t visible = 0, deferred = 0;
  for (int n = 0; n < warmup + measured; ++n) {
    const uint64_t tick = static_cast<uint64_t>(n) + 1;
    // The guest's tick: not timed.
    walk.Step();
    for (int i = 0; i < kEntities; ++i) {
      store.Move(static_cast<uint64_t>(i), walk.x(i), walk.y(i), 0);
    }
    const std::string changes = store.TakeChanges();

    // This thread's CPU time, four reads per tick (the wall clock would
    // count the time other processes had the core).
    const double c0 = ThreadCpuMs();
    Status applied = mirror.Apply(changes, tick);
    const double c1 = ThreadCpuMs();
    if (!applied.ok()) {
      std::fprintf(stderr, "Apply failed: %s\n", applied.ToString().c_str());
      ++out.mismatches;
      return out;
    }
    if (history) history->RecordWorld(mirror, tick);
    const double c2 = ThreadCpuMs();
    entities.clear();
    for (size_t i = 0; i < mirror.size(); ++i) {
      const tessera::replication::MirrorEntity& e = mirror.entity_at(i);
      const tessera::replication::GroundPoint g = mirror.Ground(e);
      entities.push_back({e.id, static_cast<uint32_t>(e.incarnation),
                          static_cast<float>(g.x), static_cast<float>(g.y)});
    }
    // Entity i is at index i (ids 0..999, all held).
    CentreSubscribers(names, entities, subs);
    Status updated = manager.Update(entities, subs, &filter, views);
    if (!updated.ok()) {
      std::fprintf(stderr, "Update failed: %s\n", updated.ToString().c_str());
      ++out.mismatches;
      return out;
    }
    for (int i = 0; i < kSubscribers; ++i) {
      const Focus focus{entities[i].x, entities[i].y, kRadius};
      streams[i].Encode(mirror, views[i].visible, focus, tick, payload);
    }
    const double c3 = ThreadCpuMs();
    // What each stream holds stays until its next Encode: recording them
    // all after the Encodes costs what recording each after its own does
    // (a little more: its held entities are no longer in the cache).
    if (history) {
      for (int i = 0; i < kSubscribers; ++i) {
        history->RecordSent(names[i], streams[i], tick);
      }
    }
    const double c4 = ThreadCpuMs();

    if (n >= warmup) {
      const double base = (c1 - c0) + (c3 - c2);
      const double hist = (c2 - c1) + (c4 - c3);
      tick_ms.push_back(base + hist);
      base_ms.push_back(base);
      history_ms.push_back(hist);
      base_sum += base;
      history_sum += hist;
      for (int i = 0; i < kSubscribers; ++i) {
        visible += views[i].visible.size();
        deferred += streams[i].last().deferred;
      }
    }
    if (!history) continue;
    out.max_memory_bytes =
        std::max(out.max_memory_bytes, history->memory_bytes());
    if (n >= checked) continue;
    // The reference model, not timed.
    model.World(tick);
    for (int i = 0; i < kSubscribers; i += kCheckEvery) {
      model.Sent(names[i], streams[i], tick);
      const double now = static_cast<double>(tick);
      for (double view : {now, now - 0.5, now - 3.25, now - 9.9, now - 20}) {
        for (std::optional<double> back :
             {std::optional<double>(), std::optional<double>(7.0)}) {
          ++out.checked_draws;
          if (PictureText(history->Draw(names[i], view, back)) !=
              PictureText(model.Draw(names[i], view, back))) {
            if (out.mismatches == 0) {
              std::fprintf(stderr, "mismatch: tick %llu %s view %g\n",
                           static_cast<unsigned long long>(tick),
                           names[i].c_str(), view);
            }
            ++out.mismatches;
          }
        }
      }
    }
  }
  out.tick_p50_ms = Percentile(tick_ms, 0.5);
  out.base_p50_ms = Percentile(base_ms, 0.5);
  out.history_p50_ms = Percentile(history_ms, 0.5);
  out.history_share = base_sum > 0 ? history_sum / base_sum : 0;
  const double counted = static_cast<double>(measured) * kSubscribers;
  out.visible_per_subscriber = static_cast<double>(visible) / counted;
  out.deferred_per_subscriber = static_cast<double>(deferred) / counted;
  if (history) {
    out.memory_bytes = history->memory_bytes();
    // Draw: what an input with a view tick costs, 3 ticks back.
    const int draws = 3000;
    size_t drawn = 0;
    const Clock::time_point t0 = Clock::now();
    for (int k = 0; k < draws; ++k) {
      const double view =
          static_cast<double>(warmup + measured) - 3 + (k % 4) * 0.25;
      std::optional<tessera::replication::DrawnPicture> p =
          history->Draw(names[k % kSubscribers], view, 7.0);
      drawn += p ? p->entities.size() : 0;
    }
    out.draw_us = Ms(Clock::now() - t0) * 1000 / draws;
    if (drawn == 0) ++out.mismatches;  // every subscriber sees someone
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  const int warmup = quick ? 3 : 20;
  const int measured = quick ? 12 : 300;
  const int checked = quick ? warmup + measured : 30;
  std::printf(
      "history_bench: %d entities, %d subscribers, world %.0fx%.0f, radius "
      "%.0f; SentHistory of %u ticks; %d warm-up + %d measured ticks%s\n\n",
      kEntities, kSubscribers, kWorld, kWorld, kRadius, kHistoryTicks, warmup,
      measured, quick ? " (--quick: timings not meaningful)" : "");
  std::printf("%-7s %8s %8s %8s %8s %8s %7s %7s %8s %7s %7s %8s\n", "budget",
              "tick", "tick", "base", "history", "history", "target", "memory",
              "target", "draw", "defer", "visible");
  std::printf("%-7s %8s %8s %8s %8s %8s %7s %7s %8s %7s %7s %8s\n", "B/tick",
              "without", "with", "ms", "ms", "/ base", "<=15%", "MB", "<=8 MB",
              "us", "/sub-t", "/sub");
  int mismatches = 0, checked_draws = 0;
  for (uint32_t budget : {0u, 1200u}) {
    const Outcome without = Run(budget, false, warmup, measured, 0);
    const Outcome with = Run(budget, true, warmup, measured, checked);
    mismatches += without.mismatches + with.mismatches;
    checked_draws += with.checked_draws;
    const double mb = static_cast<double>(with.max_memory_bytes) / 1e6;
    std::printf(
        "%-7u %8.3f %8.3f %8.3f %8.3f %7.1f%% %7s %7.2f %8s %7.1f %7.1f "
        "%8.1f\n",
        budget, without.tick_p50_ms, with.tick_p50_ms, with.base_p50_ms,
        with.history_p50_ms, 100 * with.history_share,
        with.history_share <= 0.15 ? "ok" : "--", mb, mb <= 8 ? "ok" : "--",
        with.draw_us, with.deferred_per_subscriber,
        with.visible_per_subscriber);
  }
  std::printf(
      "\ntick without / with: p50 of this thread's CPU time per tick (Apply, "
      "interest,\n300 Encodes; with the history also RecordWorld and 300 "
      "RecordSent) in the run\nwithout and the run with a history. base / "
      "history: p50 of the two parts of\nthe run with it; history / base: "
      "their sums over the measured ticks, the\nfigure held against the "
      "15%% target. memory: the largest memory_bytes() of\nthe run (MB = "
      "10^6 bytes). draw: one Draw 3 ticks back (wall clock).\n");
  std::printf(
      "\ncross-check against the reference model: %d draws, %d mismatching\n",
      checked_draws, mismatches);
  return mismatches == 0 ? 0 : 1;
}
