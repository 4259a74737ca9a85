// Mirror: quantisation, bookkeeping, and refusal of malformed guest change
// lists (untrusted bytes); the config parser.
#include "replication/mirror.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "replication/bit_io.h"
#include "replication/change_list.h"
#include "replication/config.h"
#include "replication/testing/guest_store.h"

namespace tessera::replication {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string OneEntity(uint64_t id, bool is_new, double x, double y, double z) {
  ChangeListWriter w;
  w.Change(id, is_new);
  w.Position(x, y, z);
  return w.Finish();
}

TEST(MirrorTest, QuantisationErrorWithinHalfPrecision) {
  testing::Rng rng(17);
  for (double precision : {0.01, 0.05, 0.001, 0.3, 1.0 / 3}) {
    Config config;
    config.precision = precision;
    Mirror mirror(config);
    testing::GuestStore store;
    for (uint64_t id = 0; id < 500; ++id) {
      store.Spawn(id);
      store.Move(id, (rng.Uniform() * 2 - 1) * 1e4, rng.Uniform() * 100,
                 (rng.Uniform() * 2 - 1) * 1e-3);
    }
    ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
    for (size_t i = 0; i < mirror.size(); ++i) {
      const MirrorEntity& e = mirror.entity_at(i);
      for (int a = 0; a < 3; ++a) {
        const double back = static_cast<double>(e.q[a]) * precision;
        // Half a step, plus the rounding of the division and product.
        EXPECT_LE(std::fabs(back - e.position[a]),
                  precision / 2 * (1 + 1e-9) + 1e-12)
            << "precision " << precision << " value " << e.position[a];
        EXPECT_EQ(e.q[a], std::llround(e.position[a] / precision));
      }
    }
  }
}

TEST(MirrorTest, KeepsIdsIncarnationsVersionsAndGround) {
  Config config;
  config.y_up = true;
  Mirror mirror(config);
  testing::GuestStore store;
  for (uint64_t id : {30, 10, 20}) {
    store.Spawn(id);
    store.Move(id, 1, 2, 3);
  }
  store.SetComponent(10, 4, "a");
  ASSERT_TRUE(mirror.Apply(store.TakeChanges(), 5).ok());
  EXPECT_EQ(mirror.tick(), 5u);
  ASSERT_EQ(mirror.size(), 3u);
  EXPECT_EQ(std::vector<uint64_t>(mirror.ids().begin(), mirror.ids().end()),
            (std::vector<uint64_t>{10, 20, 30}));
  const MirrorEntity* e = mirror.Find(10);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(mirror.Ground(*e).x, 1);
  EXPECT_EQ(mirror.Ground(*e).y, 3);  // x, z when y is up
  EXPECT_EQ(e->changed_tick, 5u);
  const uint64_t incarnation = e->incarnation;
  const uint64_t version = e->components[0].version;

  store.SetComponent(10, 4, "b");
  store.Move(20, 1, 2, 3);  // unchanged: not a change
  store.Remove(30);
  store.Spawn(5);
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  EXPECT_EQ(mirror.tick(), 6u);
  e = mirror.Find(10);
  EXPECT_EQ(e->incarnation, incarnation);
  EXPECT_GT(e->components[0].version, version);
  EXPECT_EQ(e->components_version, e->components[0].version);
  EXPECT_EQ(e->changed_tick, 6u);
  EXPECT_EQ(mirror.Find(20)->changed_tick, 5u);
  EXPECT_EQ(mirror.Find(30), nullptr);
  EXPECT_EQ(std::vector<uint64_t>(mirror.ids().begin(), mirror.ids().end()),
            (std::vector<uint64_t>{5, 10, 20}));

  // Removed and reused in one list: a new incarnation, state reset.
  store.Remove(10);
  store.Spawn(10);
  ASSERT_TRUE(mirror.Apply(store.TakeChanges()).ok());
  e = mirror.Find(10);
  EXPECT_NE(e->incarnation, incarnation);
  EXPECT_TRUE(e->components.empty());
  EXPECT_EQ(e->q[0], 0);
  EXPECT_EQ(mirror.size(), 3u);
  EXPECT_EQ(mirror.LowerBound(10, 0), 1u);
  EXPECT_EQ(mirror.LowerBound(11, 1), 2u);
  EXPECT_EQ(mirror.LowerBound(99, 0), 3u);
}

TEST(MirrorTest, FullListingReplacesEverything) {
  Mirror mirror(Config{});
  ASSERT_TRUE(mirror.Apply(OneEntity(1, true, 0, 0, 0)).ok());
  ChangeListWriter full(true);
  full.Remove(77);        // ignored in a FULL listing
  full.Change(2, false);  // NEW is implied
  full.Position(1, 1, 1);
  ASSERT_TRUE(mirror.Apply(full.Finish()).ok());
  EXPECT_EQ(mirror.Find(1), nullptr);
  ASSERT_NE(mirror.Find(2), nullptr);
  EXPECT_EQ(mirror.Find(2)->q[0], 100);
}

struct BadCase {
  const char* name;
  std::string bytes;
  const char* message_start;
};

TEST(MirrorTest, RefusesMalformedChangeLists) {
  Mirror mirror(Config{});
  ASSERT_TRUE(mirror.Apply(OneEntity(1, true, 0, 0, 0)).ok());
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<BadCase> cases;
  cases.push_back({"empty", "", "truncated change list: flags"});
  std::string valid = OneEntity(1, false, 1, 2, 3);
  cases.push_back({"truncated", valid.substr(0, valid.size() - 1),
                   "truncated change list"});
  cases.push_back(
      {"trailing", valid + "x", "trailing bytes after the change list"});
  cases.push_back(
      {"flags", "\x02" + valid.substr(1), "unknown change list flag bits"});
  {
    std::string s = valid;
    s[1 + 4 + 4 + 8] = 4;  // what
    cases.push_back({"what", s, "unknown 'what' bits"});
  }
  cases.push_back({"nan", OneEntity(1, false, std::nan(""), 0, 0),
                   "non-finite coordinate x"});
  cases.push_back(
      {"inf", OneEntity(1, false, 0, 0, -inf), "non-finite coordinate z"});
  cases.push_back({"far", OneEntity(1, false, 0, 0.01 * 4503599627370496.0, 0),
                   "coordinate out of range: y"});
  cases.push_back(
      {"big id", OneEntity(uint64_t{1} << 53, true, 0, 0, 0),
       "entity id 9007199254740992 in the changed list is not below 2^53"});
  {
    ChangeListWriter w;
    w.Remove(uint64_t{1} << 60);
    cases.push_back({"big removed id", w.Finish(), "entity id"});
  }
  cases.push_back({"unknown id", OneEntity(2, false, 0, 0, 0),
                   "change for unknown entity id 2"});
  cases.push_back({"new held", OneEntity(1, true, 0, 0, 0),
                   "NEW for entity id 1, which the store holds"});
  {
    ChangeListWriter w;
    w.Remove(1);
    w.Change(1, false);
    cases.push_back(
        {"removed then changed", w.Finish(), "change for unknown entity id 1"});
  }
  {
    ChangeListWriter w;
    w.Remove(1);
    w.Remove(1);
    cases.push_back({"dup removed", w.Finish(),
                     "duplicate entity id 1 in the removed list"});
  }
  {
    ChangeListWriter w;
    w.Remove(9);
    cases.push_back(
        {"unknown removed", w.Finish(), "removal of unknown entity id 9"});
  }
  {
    ChangeListWriter w;
    w.Change(1, false);
    w.Change(1, false);
    cases.push_back({"dup changed", w.Finish(),
                     "duplicate entity id 1 in the changed list"});
  }
  {
    ChangeListWriter w;
    w.Change(1, false);
    w.SetComponent(3, "a");
    w.RemoveComponent(3);
    cases.push_back({"dup component", w.Finish(), "component 3 listed twice"});
  }
  {
    ChangeListWriter w;
    w.Change(1, false);
    w.SetComponent(3, "abc");
    std::string s = w.Finish();
    s.resize(s.size() - 1);
    cases.push_back({"short component", s, "truncated change list"});
  }
  {
    std::string s("\0", 1);
    PutU32(s, 0xffffffff);
    cases.push_back(
        {"huge removed count", s, "truncated change list: removed list"});
  }
  {
    std::string s("\0\0\0\0\0", 5);
    PutU32(s, 1000);
    cases.push_back(
        {"huge changed count", s, "truncated change list: changed list"});
  }
  for (const BadCase& c : cases) {
    const uint64_t version = mirror.version();
    Status s = mirror.Apply(c.bytes);
    EXPECT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(s.message(), StartsWith(c.message_start)) << c.name;
    // Nothing changed.
    EXPECT_EQ(mirror.size(), 1u) << c.name;
    EXPECT_EQ(mirror.Find(1)->q[0], 0) << c.name;
    EXPECT_EQ(mirror.version(), version) << c.name;
    EXPECT_EQ(mirror.tick(), 1u) << c.name;
  }
}

TEST(MirrorTest, RefusalLeavesTheMirrorUnchanged) {
  Mirror mirror(Config{});
  ASSERT_TRUE(mirror.Apply(OneEntity(1, true, 0, 0, 0)).ok());
  ChangeListWriter w;
  w.Remove(1);
  w.Change(2, true);
  w.Change(3, false);  // unknown: the whole list is refused
  EXPECT_FALSE(mirror.Apply(w.Finish()).ok());
  EXPECT_NE(mirror.Find(1), nullptr);
  EXPECT_EQ(mirror.Find(2), nullptr);
}

TEST(ConfigTest, ParsesAndRefuses) {
  Config c;
  c.precision = 0.05;
  c.max_bytes_per_tick = 900;
  c.y_up = true;
  Result<Config> back = ParseConfig(EncodeConfig(c));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->precision, 0.05);
  EXPECT_EQ(back->max_bytes_per_tick, 900u);
  EXPECT_TRUE(back->y_up);

  EXPECT_THAT(ParseConfig("abc").status().message(),
              StartsWith("replication config must be 13 bytes"));
  for (double bad :
       {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    c.precision = bad;
    EXPECT_THAT(ParseConfig(EncodeConfig(c)).status().message(),
                HasSubstr("precision must be a finite number > 0"));
  }
  c.precision = 0.01;
  std::string flags = EncodeConfig(c);
  flags.back() = 3;
  EXPECT_THAT(ParseConfig(flags).status().message(),
              HasSubstr("unknown flag bits"));
}

}  // namespace
}  // namespace tessera::replication
