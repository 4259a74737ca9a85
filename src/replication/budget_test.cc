// The byte budget: spawns and despawns always go, the first update always
// goes, nearer and longer-waiting updates first, nothing is lost.
#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "replication/decoder.h"
#include "replication/mirror.h"
#include "replication/subscriber_stream.h"
#include "replication/testing/guest_store.h"

namespace tessera::replication {
namespace {

using testing::CompareWithHeld;
using testing::CompareWithMirror;
using testing::GuestStore;

struct Rig {
  explicit Rig(uint32_t budget) : mirror(MakeConfig(budget)) {}
  static Config MakeConfig(uint32_t budget) {
    Config c;
    c.max_bytes_per_tick = budget;
    return c;
  }
  // Applies the store's changes and encodes one frame.
  void Frame(std::optional<Focus> focus = Focus{0, 0, 10}) {
    ++tick;
    ASSERT_TRUE(mirror.Apply(store.TakeChanges(), tick).ok());
    stream.Encode(mirror, mirror.ids(), focus, tick, payload);
    ASSERT_TRUE(decoder.Apply(payload).ok());
    ASSERT_EQ(CompareWithHeld(decoder, stream.held(), mirror), "");
  }
  // Ids whose position the last frame changed in the decoder.
  std::set<uint64_t> Moved(const std::vector<std::array<int64_t, 3>>& before) {
    std::set<uint64_t> out;
    for (const DecodedEntity& e : decoder.entities()) {
      if (e.id < before.size() &&
          (e.q[0] != before[e.id][0] || e.q[1] != before[e.id][1])) {
        out.insert(e.id);
      }
    }
    return out;
  }
  std::vector<std::array<int64_t, 3>> Snapshot() {
    std::vector<std::array<int64_t, 3>> out(64);
    for (const DecodedEntity& e : decoder.entities()) {
      if (e.id < out.size()) out[e.id] = {e.q[0], e.q[1], e.q[2]};
    }
    return out;
  }

  Mirror mirror;
  GuestStore store;
  SubscriberStream stream;
  Decoder decoder;
  std::string payload;
  uint64_t tick = 0;
};

// Entities 1..10 on the x axis, 10 units apart; focus at the origin.
void SpawnRow(Rig& s, int count = 10) {
  for (int id = 1; id <= count; ++id) {
    s.store.Spawn(id);
    s.store.Move(id, 10.0 * id, 0, 0);
  }
}

void MoveAll(Rig& s, double dy, int count = 10) {
  for (int id = 1; id <= count; ++id) {
    const auto& e = s.store.entities().at(id);
    s.store.Move(id, e.position[0], e.position[1] + dy, 0);
  }
}

TEST(BudgetTest, SpawnsAlwaysGoAndTheFirstUpdateAlwaysGoes) {
  Rig s(5);  // far below one record
  SpawnRow(s, 40);
  s.Frame();
  EXPECT_EQ(s.stream.last().spawns, 40u);
  EXPECT_EQ(s.decoder.entities().size(), 40u);
  EXPECT_GT(s.payload.size(), 5u);
  MoveAll(s, 1, 40);
  s.Frame();
  EXPECT_EQ(s.stream.last().updates, 1u);
  EXPECT_EQ(s.stream.last().deferred, 39u);
  // Despawns go too, with the one update.
  for (int id = 1; id <= 20; ++id) s.store.Remove(id);
  s.Frame();
  EXPECT_EQ(s.stream.last().despawns, 20u);
  EXPECT_EQ(s.decoder.entities().size(), 20u);
  EXPECT_EQ(s.stream.last().updates, 1u);
}

TEST(BudgetTest, NearerFirst) {
  Rig s(11);  // one update record fits, not two
  SpawnRow(s);
  s.Frame();
  MoveAll(s, 1);
  auto before = s.Snapshot();
  s.Frame();
  EXPECT_EQ(s.stream.last().updates, 1u);
  EXPECT_EQ(s.Moved(before), std::set<uint64_t>{1});  // the nearest
  EXPECT_LE(s.payload.size(), 11u);
  // Centred elsewhere: the nearest to the new centre goes.
  s.stream.Reset();
  s.Frame(Focus{70, 0, 10});
  MoveAll(s, 1);
  before = s.Snapshot();
  s.Frame(Focus{70, 0, 10});
  EXPECT_EQ(s.Moved(before), std::set<uint64_t>{7});
}

TEST(BudgetTest, LongerWaitingFirst) {
  Rig s(11);
  SpawnRow(s, 2);
  s.store.Move(2, 10, 0, 0);  // both at the same distance
  s.Frame();
  MoveAll(s, 1, 2);
  auto before = s.Snapshot();
  s.Frame();
  EXPECT_EQ(s.Moved(before), std::set<uint64_t>{1});  // tie: lower id
  MoveAll(s, 1, 2);
  before = s.Snapshot();
  s.Frame();
  EXPECT_EQ(s.Moved(before), std::set<uint64_t>{2});  // waited one tick
}

TEST(BudgetTest, NobodyStarves) {
  Rig s(11);
  SpawnRow(s);
  s.Frame();
  std::set<uint64_t> sent;
  for (int i = 0; i < 40; ++i) {
    MoveAll(s, 1);
    auto before = s.Snapshot();
    s.Frame();
    for (uint64_t id : s.Moved(before)) sent.insert(id);
  }
  EXPECT_EQ(sent.size(), 10u);  // even the farthest, thanks to its wait
}

TEST(BudgetTest, ConvergesWhenChangesStop) {
  testing::Rng rng(23);
  Rig s(40);
  testing::RandomOptions options;
  options.max_id = 60;
  options.events = 8;
  for (int i = 0; i < 100; ++i) {
    testing::RandomTick(s.store, rng, options);
    s.Frame(Focus{0, 0, 30});
  }
  // Stop changing: at least one pending update goes per frame, so the
  // client holds the exact state after at most (entities) frames.
  const size_t bound = s.mirror.size() + 1;
  size_t frames = 0;
  while (CompareWithMirror(s.decoder, s.mirror, s.mirror.ids()) != "") {
    ASSERT_LT(frames, bound) << "did not converge";
    s.Frame(Focus{0, 0, 30});
    ++frames;
  }
  EXPECT_GT(frames, 0u);  // the budget did defer something
  s.Frame();
  EXPECT_EQ(s.stream.last().updates, 0u);
}

TEST(BudgetTest, PayloadStaysWithinTheBudgetUnlessOnlyOneUpdate) {
  testing::Rng rng(29);
  for (uint32_t budget : {20u, 64u, 200u}) {
    Rig s(budget);
    testing::RandomOptions options;
    options.max_id = 300;
    options.events = 10;
    for (int i = 0; i < 150; ++i) {
      testing::RandomTick(s.store, rng, options);
      s.Frame(Focus{0, 0, 50});
      const EncodeStats& st = s.stream.last();
      if (st.updates > 1) {
        EXPECT_LE(s.payload.size(), budget) << "budget " << budget;
      }
      if (st.deferred > 0) {
        EXPECT_GE(st.updates, 1u);
      }
    }
  }
}

TEST(BudgetTest, DeferredUpdateIsOneDifferenceToTheNewestState) {
  Rig s(11);
  SpawnRow(s, 2);
  s.Frame();
  for (int i = 0; i < 5; ++i) {  // id 2 keeps waiting while id 1 moves
    s.store.Move(1, 10, s.store.entities().at(1).position[1] + 1, 0);
    s.Frame(Focus{10, 0, 1});
  }
  s.store.Move(2, 20, 7, 0);
  s.Frame(Focus{20, 0, 1});
  EXPECT_EQ(s.decoder.Find(2)->q[1], 700);
  EXPECT_EQ(CompareWithMirror(s.decoder, s.mirror, s.mirror.ids()), "");
}

}  // namespace
}  // namespace tessera::replication
