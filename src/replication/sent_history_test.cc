// SentHistory: what each subscriber was sent, drawn as the client draws it
// (clients/ts EntityTimeline.render), and the view-tick clamping.
// Compiled with -ffp-contract=off, like sent_history.cc: the expected
// positions are computed the client's way.
#include "replication/sent_history.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "replication/mirror.h"
#include "replication/subscriber_stream.h"
#include "replication/testing/guest_store.h"
#include "replication/testing/sent_model.h"

namespace tessera::replication {
namespace {

using testing::GuestStore;
using testing::Rng;

constexpr double kInf = std::numeric_limits<double>::infinity();

// One mirror, its history, and the streams of the test's subscribers.
class Rig {
 public:
  explicit Rig(uint32_t history, double precision = 0.5, uint32_t budget = 0)
      : mirror_(Config{precision, budget, false}), history_(history) {}

  GuestStore& store() { return store_; }
  const Mirror& mirror() const { return mirror_; }
  SentHistory& history() { return history_; }
  SubscriberStream& stream(const std::string& name) { return streams_[name]; }

  // Applies the store's changes as `tick` and records the world.
  void World(uint64_t tick) {
    ASSERT_TRUE(mirror_.Apply(store_.TakeChanges(), tick).ok());
    history_.RecordWorld(mirror_, tick);
  }
  // Encodes `name`'s payload (everything visible by default) and records it.
  void Send(const std::string& name, uint64_t tick,
            std::optional<std::vector<uint64_t>> visible = std::nullopt,
            std::optional<Focus> focus = std::nullopt) {
    SubscriberStream& s = streams_[name];
    std::vector<uint64_t> ids =
        visible
            ? *visible
            : std::vector<uint64_t>(mirror_.ids().begin(), mirror_.ids().end());
    s.Encode(mirror_, ids, focus, tick, payload_);
    history_.RecordSent(name, s, tick);
  }
  // World + Send for every named subscriber.
  void Tick(uint64_t tick, const std::vector<std::string>& names = {"a"}) {
    World(tick);
    for (const std::string& n : names) Send(n, tick);
  }
  std::string Draw(const std::string& name, double view,
                   std::optional<double> max_back = std::nullopt) {
    return testing::PictureText(history_.Draw(name, view, max_back));
  }
  double DrawnTick(const std::string& name, double view,
                   std::optional<double> max_back = std::nullopt) {
    std::optional<DrawnPicture> p = history_.Draw(name, view, max_back);
    return p ? p->view_tick : -1;
  }

 private:
  Mirror mirror_;
  GuestStore store_;
  SentHistory history_;
  std::map<std::string, SubscriberStream> streams_;
  std::string payload_;
};

// Entity 1 moves +2 in x per tick; one entity per tick, ticks 1..n.
void Walk(Rig& r, uint64_t first, uint64_t last) {
  for (uint64_t tick = first; tick <= last; ++tick) {
    if (tick == 1) r.store().Spawn(1);
    r.store().Move(1, 2.0 * tick, 0, 0);
    r.Tick(tick);
  }
}

TEST(SentHistoryTest, NothingRecordedDrawsNothing) {
  Rig r(10);
  EXPECT_EQ(r.history().history_ticks(), 10u);
  EXPECT_FALSE(r.history().Draw("a", 1, std::nullopt).has_value());
  r.store().Spawn(1);
  r.World(1);
  EXPECT_FALSE(r.history().Draw("a", 1, std::nullopt).has_value());
}

TEST(SentHistoryTest, ClampsTheViewTick) {
  Rig r(10);
  Walk(r, 1, 20);
  // Inside the range: as asked.
  EXPECT_EQ(r.DrawnTick("a", 15.5), 15.5);
  // Future -> the newest tick sent.
  EXPECT_EQ(r.DrawnTick("a", 25), 20);
  EXPECT_EQ(r.Draw("a", 25), "1:(40,0,0)");
  // Too old -> newest - history_ticks.
  EXPECT_EQ(r.DrawnTick("a", 3), 10);
  EXPECT_EQ(r.Draw("a", -1e300), "1:(20,0,0)");
  // The round trip bound: (100 ms + 250 ms) / 50 ms = 7 ticks back at most.
  EXPECT_EQ(r.DrawnTick("a", 3, (100.0 + 250.0) / 50.0), 13);
  EXPECT_EQ(r.DrawnTick("a", 12.75, 7.5), 12.75);
  EXPECT_EQ(r.DrawnTick("a", 12.25, 7.5), 12.5);
  // A bound looser than the history changes nothing; a negative one means
  // the newest; NaN is no bound.
  EXPECT_EQ(r.DrawnTick("a", 3, 50), 10);
  EXPECT_EQ(r.DrawnTick("a", 3, -2), 20);
  EXPECT_EQ(r.DrawnTick("a", 3, std::nan("")), 10);
  EXPECT_EQ(r.DrawnTick("a", 3, kInf), 10);
  // Non-finite -> newest.
  EXPECT_EQ(r.DrawnTick("a", kInf), 20);
  EXPECT_EQ(r.DrawnTick("a", -kInf), 20);
  EXPECT_EQ(r.DrawnTick("a", std::nan("")), 20);
  std::optional<DrawnPicture> p = r.history().Draw("a", 3, std::nullopt);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->now_tick, 20u);
}

TEST(SentHistoryTest, NeverBeforeTheOldestRecord) {
  Rig r(10);
  Walk(r, 1, 5);
  // Late join: b is first sent at tick 6.
  for (uint64_t tick = 6; tick <= 9; ++tick) {
    r.store().Move(1, 2.0 * tick, 0, 0);
    r.Tick(tick, {"a", "b"});
  }
  EXPECT_EQ(r.DrawnTick("a", 0.5), 1);
  EXPECT_EQ(r.DrawnTick("b", 2), 6);
  EXPECT_EQ(r.Draw("b", 2), "1:(12,0,0)");
  // Forgotten, then sent again from tick 11 (a new connection's BASELINE).
  r.history().Forget("b");
  EXPECT_FALSE(r.history().Draw("b", 9, std::nullopt).has_value());
  r.stream("b").Reset();
  for (uint64_t tick = 10; tick <= 12; ++tick) {
    r.store().Move(1, 2.0 * tick, 0, 0);
    r.World(tick);
    r.Send("a", tick);
    if (tick >= 11) r.Send("b", tick);
  }
  EXPECT_EQ(r.DrawnTick("b", 9.5), 11);
  EXPECT_EQ(r.DrawnTick("a", 9.5), 9.5);
  // A BASELINE alone starts the history again too.
  r.stream("a").Reset();
  r.store().Move(1, 26, 0, 0);
  r.Tick(13, {"a"});
  EXPECT_EQ(r.DrawnTick("a", 9.5), 13);
  EXPECT_EQ(r.Draw("a", 9.5), "1:(26,0,0)");
}

TEST(SentHistoryTest, InterpolatesBetweenTicks) {
  Rig r(10);
  r.store().Spawn(2);
  r.store().Move(2, 1, -1.5, 3);
  Walk(r, 1, 4);
  EXPECT_EQ(r.Draw("a", 2), "1:(4,0,0) 2:(1,-1.5,3)");
  EXPECT_EQ(r.Draw("a", 2.25), "1:(4.5,0,0) 2:(1,-1.5,3)");
  EXPECT_EQ(r.Draw("a", 3.75), "1:(7.5,0,0) 2:(1,-1.5,3)");
  EXPECT_EQ(r.Draw("a", 4), "1:(8,0,0) 2:(1,-1.5,3)");
  // Precision 0.01: q * precision in double, then from + (to - from) * t.
  Rig c(10, 0.01);
  c.store().Spawn(7);
  c.store().Move(7, 0.1, 0.2, -0.3);
  c.Tick(1);
  c.store().Move(7, 0.7, 0.2, -0.3);
  c.Tick(2);
  std::optional<DrawnPicture> p = c.history().Draw("a", 1.1, std::nullopt);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->entities.size(), 1u);
  const double t = (1.1 - 1.0) / (2.0 - 1.0);
  const double from = 10 * 0.01;
  const double to = 70 * 0.01;
  EXPECT_EQ(p->entities[0].x, from + (to - from) * t);
  EXPECT_EQ(p->entities[0].y, 20 * 0.01);
  EXPECT_EQ(p->entities[0].z, -30 * 0.01);
}

TEST(SentHistoryTest, InterpolatesAcrossTicksNotSent) {
  // Ticks 3 and 4 were not sent to a: the client goes from 2 to 5.
  Rig r(10);
  Walk(r, 1, 2);
  for (uint64_t tick = 3; tick <= 5; ++tick) {
    r.store().Move(1, 2.0 * tick, 0, 0);
    r.World(tick);
    if (tick == 5) r.Send("a", tick);
  }
  EXPECT_EQ(r.Draw("a", 3.5), "1:(7,0,0)");  // 4 + (10 - 4) * 0.5
}

TEST(SentHistoryTest, HoldsWhenTheNextTickLacksTheEntity) {
  Rig r(10);
  r.store().Spawn(1);
  r.store().Move(1, 2, 0, 0);
  r.store().Spawn(2);
  r.store().Move(2, 5, 5, 5);
  r.Tick(1);
  r.store().Move(1, 4, 0, 0);
  r.store().Move(2, 9, 9, 9);
  r.World(2);
  r.Send("a", 2, std::vector<uint64_t>{1});  // 2 left the interest area
  EXPECT_EQ(r.Draw("a", 1.5), "1:(3,0,0) 2:(5,5,5)");
  EXPECT_EQ(r.Draw("a", 2), "1:(4,0,0)");
}

TEST(SentHistoryTest, SpawnNotDrawnBeforeItsTickDespawnAfterItsTick) {
  Rig r(10);
  Walk(r, 1, 2);
  r.store().Spawn(3);
  r.store().Move(3, -4, 0, 0);
  r.store().Move(1, 6, 0, 0);
  r.Tick(3);
  r.store().Remove(1);
  r.Tick(4);
  EXPECT_EQ(r.Draw("a", 2.5), "1:(5,0,0)");
  EXPECT_EQ(r.Draw("a", 3), "1:(6,0,0) 3:(-4,0,0)");
  EXPECT_EQ(r.Draw("a", 3.5), "1:(6,0,0) 3:(-4,0,0)");  // held, not moved
  EXPECT_EQ(r.Draw("a", 4), "3:(-4,0,0)");
}

TEST(SentHistoryTest, ReusedIdIsNotInterpolatedFromTheOldEntity) {
  Rig r(10);
  Walk(r, 1, 2);
  r.store().Remove(1);  // removed and reused in one tick
  r.store().Spawn(1);
  r.store().Move(1, 100, 0, 0);
  r.Tick(3);
  r.store().Move(1, 102, 0, 0);
  r.Tick(4);
  EXPECT_EQ(r.Draw("a", 2.5), "1:(4,0,0)");  // the old one, held
  EXPECT_EQ(r.Draw("a", 3), "1:(100,0,0)");
  EXPECT_EQ(r.Draw("a", 3.5), "1:(101,0,0)");
}

TEST(SentHistoryTest, InterestEntryAndExit) {
  Rig r(10);
  const std::vector<uint64_t> with{1, 2};
  const std::vector<uint64_t> without{1};
  r.store().Spawn(1);
  r.store().Spawn(2);
  for (uint64_t tick = 1; tick <= 6; ++tick) {
    r.store().Move(2, 2.0 * tick, 1, 0);
    r.World(tick);
    r.Send("a", tick, tick <= 2 || tick >= 5 ? with : without);
  }
  EXPECT_EQ(r.Draw("a", 1.5), "1:(0,0,0) 2:(3,1,0)");
  EXPECT_EQ(r.Draw("a", 2.5), "1:(0,0,0) 2:(4,1,0)");  // held at its exit
  EXPECT_EQ(r.Draw("a", 3.5), "1:(0,0,0)");
  EXPECT_EQ(r.Draw("a", 4.5), "1:(0,0,0)");  // not drawn before it entered
  EXPECT_EQ(r.Draw("a", 5), "1:(0,0,0) 2:(10,1,0)");
  EXPECT_EQ(r.Draw("a", 5.5), "1:(0,0,0) 2:(11,1,0)");
}

TEST(SentHistoryTest, BudgetDeferralDrawsTheOldHeldPosition) {
  // A budget that sends few updates per tick: the client keeps the old
  // position of what was deferred, and so does the history.
  Rig r(10, 0.5, 14);
  for (uint64_t id = 1; id <= 20; ++id) {
    r.store().Spawn(id);
    r.store().Move(id, static_cast<double>(id), 0, 0);
  }
  const Focus focus{0, 0, 10};
  r.World(1);
  r.Send("a", 1, std::nullopt, focus);
  for (uint64_t id = 1; id <= 20; ++id) {
    r.store().Move(id, static_cast<double>(id), 10, 0);
  }
  r.World(2);
  r.Send("a", 2, std::nullopt, focus);
  const EncodeStats& last = r.stream("a").last();
  ASSERT_GT(last.deferred, 0u);
  ASSERT_GT(last.updates, 0u);
  std::optional<DrawnPicture> p = r.history().Draw("a", 2, std::nullopt);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->entities.size(), 20u);
  size_t old = 0;
  for (const DrawnEntity& e : p->entities) {
    const MirrorEntity* m = r.mirror().Find(e.id);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(e.x, static_cast<double>(e.id));
    if (e.y == 0) {
      ++old;  // deferred: the position of tick 1
    } else {
      EXPECT_EQ(e.y, 10);
    }
  }
  EXPECT_EQ(old, last.deferred);
  // Halfway to tick 2, a deferred entity has not moved at all.
  p = r.history().Draw("a", 1.5, std::nullopt);
  ASSERT_TRUE(p.has_value());
  for (const DrawnEntity& e : p->entities) {
    EXPECT_TRUE(e.y == 0 || e.y == 5) << e.id << " y " << e.y;
  }
  // Caught up tick by tick, each drawn position is the one the client holds.
  for (uint64_t tick = 3; tick <= 20; ++tick) {
    r.World(tick);
    r.Send("a", tick, std::nullopt, focus);
    p = r.history().Draw("a", static_cast<double>(tick), std::nullopt);
    ASSERT_TRUE(p.has_value());
    std::span<const HeldEntity> held = r.stream("a").held();
    ASSERT_EQ(p->entities.size(), held.size());
    for (size_t i = 0; i < held.size(); ++i) {
      EXPECT_EQ(p->entities[i].id, held[i].id);
      EXPECT_EQ(p->entities[i].y, held[i].q[1] * 0.5);
    }
  }
  EXPECT_EQ(r.stream("a").last().deferred, 0u);
  EXPECT_EQ(r.Draw("a", 20).find(":(1,0,0)"), std::string::npos);
}

TEST(SentHistoryTest, IgnoresASendOfAnotherTick) {
  Rig r(10);
  Walk(r, 1, 3);
  r.World(4);
  SubscriberStream& s = r.stream("a");
  std::string payload;
  std::vector<uint64_t> ids(r.mirror().ids().begin(), r.mirror().ids().end());
  s.Encode(r.mirror(), ids, std::nullopt, 4, payload);
  r.history().RecordSent("a", s, 3);  // not the last RecordWorld's tick
  EXPECT_EQ(r.DrawnTick("a", 10), 3);
}

TEST(SentHistoryTest, TicksGoingBackStartAgain) {
  Rig r(10);
  Walk(r, 1, 5);
  r.store().Move(1, 50, 0, 0);
  r.World(3);  // e.g. a restore to an earlier tick
  EXPECT_FALSE(r.history().Draw("a", 3, std::nullopt).has_value());
  r.Send("a", 3);
  EXPECT_EQ(r.Draw("a", 1), "1:(50,0,0)");
}

TEST(SentHistoryTest, SharedGroupDrawsTheSameWithOneRecord) {
  Rig shared(10);
  Rig separate(10);
  const std::vector<std::string> names{"a", "b", "c"};
  for (Rig* r : {&shared, &separate}) {
    for (uint64_t id = 1; id <= 200; ++id) r->store().Spawn(id);
  }
  for (uint64_t tick = 1; tick <= 4; ++tick) {
    for (Rig* r : {&shared, &separate}) {
      for (uint64_t id = 1; id <= 200; ++id) {
        r->store().Move(id, static_cast<double>(id + tick), 0, 0);
      }
      r->World(tick);
    }
    SubscriberStream& group = shared.stream("group");
    std::string payload;
    group.Encode(shared.mirror(), shared.mirror().ids(), std::nullopt, tick,
                 payload);
    shared.history().RecordShared(names, group, tick);
    for (const std::string& n : names) separate.Send(n, tick);
  }
  for (const std::string& n : names) {
    EXPECT_EQ(shared.Draw(n, 2.5), separate.Draw(n, 2.5));
    EXPECT_EQ(shared.Draw(n, 2.5), shared.Draw("a", 2.5));
  }
  EXPECT_NE(shared.Draw("a", 2.5).find("1:(3.5,0,0)"), std::string::npos);
  // One record for the group instead of one per member: two records of
  // 200 bits fewer.
  EXPECT_LT(shared.history().memory_bytes() + 2 * 25,
            separate.history().memory_bytes());
}

TEST(SentHistoryTest, TicksWithTheSameEntitiesReuseTheRecord) {
  // 300 entities. "still": nothing moves; "moving": entity 1 moves every
  // tick (sent, nothing deferred); "churn": entity 300 enters and leaves
  // the view every other tick.
  Rig still(4);
  Rig moving(4);
  Rig churn(4);
  std::vector<uint64_t> all;
  for (uint64_t id = 1; id <= 300; ++id) all.push_back(id);
  const std::vector<uint64_t> fewer(all.begin(), all.end() - 1);
  for (Rig* r : {&still, &moving, &churn}) {
    for (uint64_t id = 1; id <= 300; ++id) r->store().Spawn(id);
  }
  for (uint64_t tick = 1; tick <= 8; ++tick) {
    moving.store().Move(1, static_cast<double>(tick), 0, 0);
    still.Tick(tick);
    moving.Tick(tick);
    churn.World(tick);
    churn.Send("a", tick, tick % 2 == 0 ? all : fewer);
    EXPECT_EQ(still.stream("a").last().in_step, tick > 1);
  }
  EXPECT_EQ(still.Draw("a", 6.5).substr(0, 10), "1:(0,0,0) ");
  EXPECT_EQ(moving.Draw("a", 6.5).substr(0, 12), "1:(6.5,0,0) ");
  // One record (300 bits) for the five ticks kept, against five.
  EXPECT_EQ(still.history().memory_bytes(), moving.history().memory_bytes());
  EXPECT_LE(still.history().memory_bytes() + 4 * 5 * 8,
            churn.history().memory_bytes());
}

TEST(SentHistoryTest, MemoryGrowsThenIsBoundedByTheRing) {
  // "a" has a budget that defers; "b" sees everything move, nothing
  // deferred.
  Rig r(4, 0.5, 60);
  Rig b(4);
  for (Rig* x : {&r, &b}) {
    for (uint64_t id = 1; id <= 100; ++id) x->store().Spawn(id);
  }
  const size_t empty = r.history().memory_bytes();
  std::vector<size_t> bytes;
  std::vector<size_t> steady;
  Rng rng(5);
  for (uint64_t tick = 1; tick <= 40; ++tick) {
    for (uint64_t id = 1; id <= 100; ++id) {
      const double x = rng.Uniform() * 10;
      const double y = rng.Uniform() * 10;
      r.store().Move(id, x, y, 0);
      b.store().Move(id, x, y, 0);
    }
    r.World(tick);
    r.Send("a", tick, std::nullopt, Focus{0, 0, 10});
    b.Tick(tick, {"b"});
    bytes.push_back(r.history().memory_bytes());
    steady.push_back(b.history().memory_bytes());
    if (tick > 1) {
      ASSERT_GT(r.stream("a").last().deferred, 0u) << "tick " << tick;
    }
  }
  EXPECT_GT(bytes[0], empty);
  EXPECT_GT(bytes[4], bytes[0]);
  EXPECT_GT(steady[4], steady[0]);
  // Without deferral: the five ticks of the ring, plus, once the first
  // one went, its positions' buffer kept for the next tick's.
  EXPECT_LE(steady[5], steady[4] + 100 * 3 * sizeof(int64_t) + 64);
  for (size_t i = 5; i < bytes.size(); ++i) {
    EXPECT_EQ(steady[i], steady[5]) << "tick " << i + 1;
    // Deferred positions refer to older world records (at most 2 * 4 + 1
    // in all) or are copied: more, but bounded.
    EXPECT_LT(bytes[i], 2 * bytes[4]) << "tick " << i + 1;
  }
}

// Random worlds (spawns, removals, ids reused, moves, components), with
// and without a budget, sticky random interest, resets, a shared group and
// ticks not sent: every draw equals the reference model's.
TEST(SentHistoryTest, RandomRunsMatchTheReferenceModel) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    Rng rng(seed * 6151);
    const uint32_t history = 1 + static_cast<uint32_t>(seed % 5);
    const uint32_t budget = seed % 3 == 0 ? 0 : 40 + 30 * (seed % 4);
    const double precision = seed % 2 == 0 ? 0.01 : 0.25;
    Mirror mirror(Config{precision, budget, false});
    SentHistory h(history);
    testing::SentModel model(history, precision);
    GuestStore store;
    testing::RandomOptions options;
    options.max_id = seed % 4 == 0 ? 300 : 40;
    options.events = 6;
    options.step = 3;
    const std::vector<std::string> names{"p0", "p1", "p2"};
    const std::vector<std::string> group{"g0", "g1"};
    std::map<std::string, SubscriberStream> streams;
    std::map<std::string, std::vector<uint64_t>> visible;
    std::string payload;
    for (uint64_t tick = 1; tick <= 120; ++tick) {
      if (rng.Chance(0.03)) tick += 1 + rng.Below(3);  // ticks skipped
      testing::RandomTick(store, rng, options);
      ASSERT_TRUE(mirror.Apply(store.TakeChanges(), tick).ok());
      h.RecordWorld(mirror, tick);
      model.World(tick);
      for (const std::string& n : names) {
        if (rng.Chance(0.05)) continue;  // not sent this tick
        if (rng.Chance(0.02)) {
          streams[n].Reset();
          if (rng.Chance(0.5)) {
            h.Forget(n);
            model.Forget(n);
          }
        }
        // Sticky interest: most ids stay, some come and go.
        std::vector<uint64_t> v;
        const std::vector<uint64_t>& before = visible[n];
        for (uint64_t id : mirror.ids()) {
          const bool was = std::binary_search(before.begin(), before.end(), id);
          if (rng.Chance(was ? 0.95 : 0.1)) v.push_back(id);
        }
        visible[n] = v;
        streams[n].Encode(mirror, v, Focus{0, 0, 50}, tick, payload);
        h.RecordSent(n, streams[n], tick);
        model.Sent(n, streams[n], tick);
      }
      SubscriberStream& g = streams["group"];
      g.Encode(mirror, mirror.ids(), std::nullopt, tick, payload);
      h.RecordShared(group, g, tick);
      for (const std::string& n : group) model.Sent(n, g, tick);
      for (int q = 0; q < 6; ++q) {
        const std::string& n =
            q < 4 ? names[rng.Below(names.size())] : group[q - 4];
        double view =
            static_cast<double>(tick) - rng.Uniform() * (history + 3) + 0.5;
        if (q == 5) view = std::floor(view);
        std::optional<double> back;
        if (rng.Chance(0.3)) back = rng.Uniform() * history;
        ASSERT_EQ(testing::PictureText(h.Draw(n, view, back)),
                  testing::PictureText(model.Draw(n, view, back)))
            << "seed " << seed << " tick " << tick << " " << n << " view "
            << view;
      }
    }
    EXPECT_GT(h.memory_bytes(), 0u);
  }
}

}  // namespace
}  // namespace tessera::replication
