// SubscriberStream + Decoder: random spawn/update/despawn sequences
// reconstruct exactly; id reuse; components; Reset and late joins.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
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
using testing::RandomOptions;
using testing::RandomTick;
using testing::RandomVisible;
using testing::Rng;

std::vector<uint64_t> Ids(const Mirror& m) {
  return std::vector<uint64_t>(m.ids().begin(), m.ids().end());
}

struct Client {
  SubscriberStream stream;
  Decoder decoder;
  std::string payload;
};

// Many random ticks, several clients with random visibility (one sees
// everything), no budget: every client's decoder equals the mirror's
// quantised state of what it sees after every frame.
TEST(StreamTest, RandomSequencesReconstructExactly) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Rng rng(seed * 7919);
    Config config;
    config.precision = seed % 3 == 0 ? 0.05 : 0.01;
    config.y_up = seed % 2 == 0;
    Mirror mirror(config);
    GuestStore store;
    RandomOptions options;
    options.max_id = seed % 4 == 0 ? 2000 : 40;
    std::vector<Client> clients(4);
    for (uint64_t tick = 1; tick <= 150; ++tick) {
      RandomTick(store, rng, options);
      ASSERT_TRUE(mirror.Apply(store.TakeChanges(), tick).ok());
      for (size_t c = 0; c < clients.size(); ++c) {
        Client& client = clients[c];
        const std::vector<uint64_t> visible =
            c == 0 ? Ids(mirror) : RandomVisible(mirror, rng, 0.5 + 0.1 * c);
        if (rng.Chance(0.01)) client.stream.Reset();
        client.stream.Encode(mirror, visible, std::nullopt, tick,
                             client.payload);
        Status s = client.decoder.Apply(client.payload);
        ASSERT_TRUE(s.ok())
            << s.ToString() << " seed " << seed << " tick " << tick;
        ASSERT_EQ(CompareWithMirror(client.decoder, mirror, visible), "")
            << "seed " << seed << " tick " << tick << " client " << c;
        ASSERT_EQ(client.stream.last().bytes, client.payload.size());
        ASSERT_EQ(client.stream.last().deferred, 0u);
      }
    }
  }
}

// The left/entered lists match what changed between two frames.
// Few entities come and go, so most ticks only look at the mirror's last
// changes (in_step): moves, component changes and ids reused in place must
// still reconstruct exactly, with and without a budget that defers.
TEST(StreamTest, InStepTicksReconstructExactly) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Rng rng(seed * 104729);
    Config config;
    config.precision = 0.01;
    config.max_bytes_per_tick = seed % 2 == 0 ? 120 : 0;
    Mirror mirror(config);
    GuestStore store;
    RandomOptions options;
    options.max_id = 60;
    options.spawn = 0.02;
    options.remove = 0.01;
    options.reuse = seed % 3 == 0 ? 0.05 : 0.0;
    options.move = 0.3;
    options.component = 0.05;
    std::vector<Client> clients(2);
    size_t in_step = 0;
    size_t encodes = 0;
    for (uint64_t tick = 1; tick <= 200; ++tick) {
      if (tick < 5) options.spawn = 0.9;  // fill the world first
      RandomTick(store, rng, options);
      options.spawn = 0.02;
      ASSERT_TRUE(mirror.Apply(store.TakeChanges(), tick).ok());
      for (size_t c = 0; c < clients.size(); ++c) {
        Client& client = clients[c];
        std::vector<uint64_t> visible = Ids(mirror);
        if (c == 1) std::erase_if(visible, [](uint64_t id) { return id % 2; });
        client.stream.Encode(mirror, visible, Focus{0, 0, 100}, tick,
                             client.payload);
        ++encodes;
        if (client.stream.last().in_step) ++in_step;
        Status s = client.decoder.Apply(client.payload);
        ASSERT_TRUE(s.ok()) << s.ToString() << " seed " << seed;
        if (config.max_bytes_per_tick == 0) {
          ASSERT_EQ(CompareWithMirror(client.decoder, mirror, visible), "")
              << "seed " << seed << " tick " << tick << " client " << c;
        } else {
          ASSERT_EQ(
              CompareWithHeld(client.decoder, client.stream.held(), mirror), "")
              << "seed " << seed << " tick " << tick << " client " << c;
        }
      }
    }
    // Without a budget most ticks are in step; with one, deferrals make
    // the next tick merge everything again.
    if (config.max_bytes_per_tick == 0) {
      EXPECT_GT(in_step, encodes / 2) << "seed " << seed;
    } else {
      EXPECT_GT(in_step, 0u) << "seed " << seed;
    }
  }
}

TEST(StreamTest, EnteredAndLeftMatchTheVisibleSets) {
  Rng rng(42);
  Mirror mirror(Config{});
  GuestStore store;
  RandomOptions options;
  options.reuse = 0.3;
  Client client;
  std::vector<uint64_t> before;
  for (uint64_t tick = 1; tick <= 200; ++tick) {
    RandomTick(store, rng, options);
    std::set<uint64_t> reused;
    const std::string changes = store.TakeChanges();
    std::map<uint64_t, uint64_t> incarnation;
    for (uint64_t id : mirror.ids()) {
      incarnation[id] = mirror.Find(id)->incarnation;
    }
    ASSERT_TRUE(mirror.Apply(changes, tick).ok());
    const std::vector<uint64_t> visible = RandomVisible(mirror, rng, 0.7);
    client.stream.Encode(mirror, visible, std::nullopt, tick, client.payload);
    ASSERT_TRUE(client.decoder.Apply(client.payload).ok());
    std::vector<uint64_t> want_left;
    std::vector<uint64_t> want_entered;
    for (uint64_t id : before) {
      const MirrorEntity* m = mirror.Find(id);
      if (m == nullptr ||
          !std::binary_search(visible.begin(), visible.end(), id) ||
          m->incarnation != incarnation[id]) {
        want_left.push_back(id);
      }
    }
    for (uint64_t id : visible) {
      const bool was = std::binary_search(before.begin(), before.end(), id);
      if (!was || mirror.Find(id)->incarnation != incarnation[id]) {
        want_entered.push_back(id);
      }
    }
    EXPECT_EQ(client.decoder.left(), want_left) << "tick " << tick;
    EXPECT_EQ(client.decoder.entered(), want_entered) << "tick " << tick;
    before = visible;
  }
}

TEST(StreamTest, IdReusedInOneTickIsInBothLeftAndEntered) {
  Mirror mirror(Config{});
  GuestStore store;
  store.Spawn(5);
  store.Move(5, 1, 2, 3);
  store.SetComponent(5, 1, "old");
  store.Spawn(9);
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  Client client;
  client.stream.Encode(mirror, mirror.ids(), std::nullopt, 1, client.payload);
  ASSERT_TRUE(client.decoder.Apply(client.payload).ok());
  EXPECT_EQ(client.decoder.entered(), (std::vector<uint64_t>{5, 9}));

  store.Remove(5);
  store.Spawn(5);
  store.Move(5, 1, 2, 3);  // same place: still a new entity
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  client.stream.Encode(mirror, mirror.ids(), std::nullopt, 2, client.payload);
  ASSERT_TRUE(client.decoder.Apply(client.payload).ok());
  EXPECT_EQ(client.decoder.left(), std::vector<uint64_t>{5});
  EXPECT_EQ(client.decoder.entered(), std::vector<uint64_t>{5});
  ASSERT_NE(client.decoder.Find(5), nullptr);
  EXPECT_TRUE(client.decoder.Find(5)->components.empty());
  EXPECT_EQ(CompareWithMirror(client.decoder, mirror, mirror.ids()), "");
}

TEST(StreamTest, ComponentsSetChangeRemove) {
  Mirror mirror(Config{});
  GuestStore store;
  store.Spawn(1);
  store.SetComponent(1, 3, "abc");
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  Client client;
  auto step = [&](uint64_t tick) {
    client.stream.Encode(mirror, mirror.ids(), std::nullopt, tick,
                         client.payload);
    ASSERT_TRUE(client.decoder.Apply(client.payload).ok());
    ASSERT_EQ(CompareWithMirror(client.decoder, mirror, mirror.ids()), "");
  };
  step(1);
  store.SetComponent(1, 3, "abcd");
  store.SetComponent(1, 0, "");
  store.SetComponent(1, 255, std::string(300, 'x'));
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  step(2);
  EXPECT_EQ(client.decoder.Find(1)->components.size(), 3u);
  store.RemoveComponent(1, 3);
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  step(3);
  EXPECT_EQ(client.decoder.Find(1)->components.size(), 2u);
  // Set to the same bytes: nothing to send.
  store.SetComponent(1, 0, "");
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  step(4);
  EXPECT_EQ(client.stream.last().updates, 0u);
  // Set and removed between two frames: nothing to send either.
  store.SetComponent(1, 7, "x");
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  store.RemoveComponent(1, 7);
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  step(5);
  EXPECT_EQ(client.stream.last().updates, 0u);
}

TEST(StreamTest, UnchangedStateSendsAnAlmostEmptyPayload) {
  Mirror mirror(Config{});
  GuestStore store;
  for (uint64_t id = 0; id < 100; ++id) {
    store.Spawn(id);
    store.Move(id, id * 0.5, 1, 0);
  }
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  Client client;
  client.stream.Encode(mirror, mirror.ids(), std::nullopt, 1, client.payload);
  EXPECT_TRUE(client.stream.last().baseline);
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  client.stream.Encode(mirror, mirror.ids(), std::nullopt, 2, client.payload);
  EXPECT_FALSE(client.stream.last().baseline);
  EXPECT_EQ(client.payload, std::string("\0\0\0\0", 4));
  // A move below precision / 2 changes nothing either.
  store.Move(3, 1.5 + 0.004, 1, 0);
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  client.stream.Encode(mirror, mirror.ids(), std::nullopt, 3, client.payload);
  EXPECT_EQ(client.payload.size(), 4u);
}

TEST(StreamTest, ResetGivesABaseline) {
  Rng rng(7);
  Mirror mirror(Config{});
  GuestStore store;
  RandomOptions options;
  Client client;
  for (uint64_t tick = 1; tick <= 30; ++tick) {
    RandomTick(store, rng, options);
    ASSERT_TRUE(mirror.Apply(store.TakeChanges(), tick).ok());
    if (tick == 20) client.stream.Reset();
    client.stream.Encode(mirror, mirror.ids(), std::nullopt, tick,
                         client.payload);
    EXPECT_EQ(client.stream.last().baseline, tick == 1 || tick == 20);
    EXPECT_EQ(client.payload[0] & 1, client.stream.last().baseline ? 1 : 0);
    ASSERT_TRUE(client.decoder.Apply(client.payload).ok());
    ASSERT_EQ(CompareWithMirror(client.decoder, mirror, mirror.ids()), "");
  }
}

TEST(StreamTest, LateDecoderIgnoresFramesUntilABaseline) {
  Rng rng(9);
  Mirror mirror(Config{});
  GuestStore store;
  RandomOptions options;
  SubscriberStream stream;
  Decoder late;
  std::string payload;
  for (uint64_t tick = 1; tick <= 40; ++tick) {
    RandomTick(store, rng, options);
    ASSERT_TRUE(mirror.Apply(store.TakeChanges(), tick).ok());
    if (tick == 25) stream.Reset();
    stream.Encode(mirror, mirror.ids(), std::nullopt, tick, payload);
    if (tick < 10) continue;  // the decoder starts listening at tick 10
    Status s = late.Apply(payload);
    if (tick < 25) {
      EXPECT_TRUE(Decoder::Ignored(s)) << s.ToString();
      EXPECT_FALSE(late.has_baseline());
      EXPECT_TRUE(late.entities().empty());
    } else {
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_EQ(CompareWithMirror(late, mirror, mirror.ids()), "");
    }
  }
}

TEST(StreamTest, DecoderMatchesTheStreamsHeldState) {
  // With a budget the decoder must equal what the stream thinks it holds.
  Rng rng(11);
  Config config;
  config.max_bytes_per_tick = 60;
  Mirror mirror(config);
  GuestStore store;
  RandomOptions options;
  options.max_id = 200;
  options.events = 10;
  Client client;
  for (uint64_t tick = 1; tick <= 300; ++tick) {
    RandomTick(store, rng, options);
    ASSERT_TRUE(mirror.Apply(store.TakeChanges(), tick).ok());
    const std::vector<uint64_t> visible = RandomVisible(mirror, rng, 0.9);
    client.stream.Encode(mirror, visible, Focus{0, 0, 50}, tick,
                         client.payload);
    ASSERT_TRUE(client.decoder.Apply(client.payload).ok());
    ASSERT_EQ(CompareWithHeld(client.decoder, client.stream.held(), mirror), "")
        << "tick " << tick;
  }
}

// despawned(), spawned() and deferred() say exactly what the last Encode
// changed in held() and what it held back (random worlds with ids reused,
// random visibility, in-step ticks, with and without a budget).
TEST(StreamTest, LastChangesDescribeTheEncode) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Rng rng(seed * 31337);
    Config config;
    config.max_bytes_per_tick = seed % 2 == 0 ? 90 : 0;
    Mirror mirror(config);
    GuestStore store;
    RandomOptions options;
    options.max_id = 50;
    options.reuse = 0.1;
    options.move = 0.4;
    SubscriberStream stream;
    std::string payload;
    std::map<uint64_t, uint64_t> before;  // id -> incarnation held
    size_t deferred = 0;
    for (uint64_t tick = 1; tick <= 150; ++tick) {
      RandomTick(store, rng, options);
      ASSERT_TRUE(mirror.Apply(store.TakeChanges(), tick).ok());
      if (rng.Chance(0.03)) {
        stream.Reset();
        EXPECT_TRUE(stream.despawned().empty());
        EXPECT_TRUE(stream.spawned().empty());
        EXPECT_TRUE(stream.deferred().empty());
        before.clear();
      }
      std::vector<uint64_t> visible =
          rng.Chance(0.5) ? Ids(mirror) : RandomVisible(mirror, rng, 0.8);
      stream.Encode(mirror, visible, Focus{0, 0, 50}, tick, payload);
      std::vector<uint64_t> despawned;
      std::vector<uint64_t> spawned;
      std::map<uint64_t, uint64_t> after;
      for (const HeldEntity& h : stream.held()) {
        after[h.id] = h.incarnation;
        auto it = before.find(h.id);
        if (it == before.end() || it->second != h.incarnation) {
          spawned.push_back(h.id);
        }
      }
      for (const auto& [id, incarnation] : before) {
        auto it = after.find(id);
        if (it == after.end() || it->second != incarnation) {
          despawned.push_back(id);
        }
      }
      std::vector<uint64_t> got_spawned;
      for (const MirrorEntity* e : stream.spawned()) {
        got_spawned.push_back(e->id);
      }
      const std::span<const uint64_t> d = stream.despawned();
      ASSERT_EQ(std::vector<uint64_t>(d.begin(), d.end()), despawned)
          << "seed " << seed << " tick " << tick;
      ASSERT_EQ(got_spawned, spawned) << "seed " << seed << " tick " << tick;
      ASSERT_EQ(stream.deferred().size(), stream.last().deferred);
      std::set<uint32_t> held_back(stream.deferred().begin(),
                                   stream.deferred().end());
      ASSERT_TRUE(
          std::is_sorted(stream.deferred().begin(), stream.deferred().end()));
      for (size_t i = 0; i < stream.held().size(); ++i) {
        const HeldEntity& h = stream.held()[i];
        const MirrorEntity* e = mirror.Find(h.id);
        ASSERT_NE(e, nullptr);
        const bool same = h.q[0] == e->q[0] && h.q[1] == e->q[1] &&
                          h.q[2] == e->q[2] &&
                          h.components_version == e->components_version;
        EXPECT_EQ(same, !held_back.contains(static_cast<uint32_t>(i)))
            << "seed " << seed << " tick " << tick << " id " << h.id;
      }
      deferred += held_back.size();
      before = std::move(after);
    }
    if (config.max_bytes_per_tick > 0) {
      EXPECT_GT(deferred, 0u);
    }
  }
}

}  // namespace
}  // namespace tessera::replication
