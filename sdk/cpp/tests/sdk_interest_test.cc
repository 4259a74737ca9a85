// Native tests of the interest and replication exports: drives small shards
// through tessera_interest_config, tessera_entities, tessera_interest_areas,
// tessera_filter, tessera_snapshot_visible, tessera_replication_config and
// tessera_replicated as the host does, and checks the exact bytes against
// the layouts of docs/guest-abi.md (written here independently of the SDK's
// writer).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "guest_calls.h"
#include "tessera/shard_sdk.h"

namespace interest_test {

using sdk_test::Bytes;

constexpr unsigned kNew = 1;
constexpr unsigned kPos = 2;

// ---------------------------------------------------------------------------
// A shard with its own entity list: interest, filter and per-subscriber
// snapshots.

struct Params {
  bool off = false;  // interest() returns nullopt
  bool shared = false;
};
TESSERA_FIELDS(Params, off, shared);

struct Noop {};
TESSERA_FIELDS(Noop);

struct VisibleSnapshot {
  std::string sid;
  std::vector<std::uint64_t> visible;
  std::vector<std::uint64_t> entered;
  std::vector<std::uint64_t> left;
};
TESSERA_FIELDS(VisibleSnapshot, sid, visible, entered, left);

class Lookout {
 public:
  static tessera::Result<Lookout> init(std::string_view, Params p) {
    Lookout l;
    l.params_ = p;
    return l;
  }
  tessera::Status apply_input(std::string_view, Noop) { return {}; }
  void tick(double) {}
  int snapshot() const { return 0; }

  std::optional<tessera::InterestConfig> interest() const {
    if (params_.off) return std::nullopt;
    return tessera::InterestConfig{150, 15, params_.shared};
  }
  void entities(std::vector<tessera::EntityPos>& out) const { out = list; }
  std::optional<tessera::InterestArea> interest_area(
      std::string_view sid) const {
    if (sid.empty() || sid == "nobody") return std::nullopt;
    return tessera::InterestArea{static_cast<float>(sid.size()), 2.5f, 300};
  }
  // Id 3 is stealthed: only scouts see it.
  bool can_see(std::string_view sid, std::uint64_t id) const {
    return id != 3 || sid.substr(0, 5) == "scout";
  }
  VisibleSnapshot snapshot_visible(std::string_view sid,
                                   const tessera::View& view) const {
    return VisibleSnapshot{
        std::string(sid),
        {view.visible.begin(), view.visible.end()},
        {view.entered.begin(), view.entered.end()},
        {view.left.begin(), view.left.end()},
    };
  }

  std::vector<tessera::EntityPos> list;

 private:
  Params params_;
};

// ---------------------------------------------------------------------------
// A shard whose entities live in a tessera::Replicated store (interest reads
// its positions from there).

struct StoreParams {
  bool y_up = false;
  bool off = false;  // replicated() returns nullptr
  std::uint32_t budget = 0;
};
TESSERA_FIELDS(StoreParams, y_up, off, budget);

class Warehouse {
 public:
  static tessera::Result<Warehouse> init(std::string_view, StoreParams p) {
    Warehouse w;
    w.params_ = p;
    // Set before the shard is moved into place: the store moves with it.
    w.store.set_pos(7, 1, 2, 3);
    return w;
  }
  tessera::Status apply_input(std::string_view, Noop) { return {}; }
  void tick(double) {}
  int snapshot() const { return 0; }

  std::optional<tessera::InterestConfig> interest() const {
    return tessera::InterestConfig{100, 0};
  }
  std::optional<tessera::InterestArea> interest_area(std::string_view) const {
    return std::nullopt;
  }
  tessera::Replicated* replicated() { return params_.off ? nullptr : &store; }
  tessera::ReplicationConfig replication_config() const {
    return tessera::ReplicationConfig{0.5, params_.budget, params_.y_up};
  }

  tessera::Replicated store;

 private:
  StoreParams params_;
};

// Replication without interest, with the default config.
class Plain {
 public:
  static tessera::Result<Plain> init(std::string_view, Params) {
    return Plain();
  }
  tessera::Status apply_input(std::string_view, Noop) { return {}; }
  void tick(double) {}
  int snapshot() const { return 0; }
  tessera::Replicated* replicated() { return &store; }

  tessera::Replicated store;
};

// None of the optional hooks.
class Bare {
 public:
  static tessera::Result<Bare> init(std::string_view, Params) { return Bare(); }
  tessera::Status apply_input(std::string_view, Noop) { return {}; }
  void tick(double) {}
  int snapshot() const { return 0; }
};

}  // namespace interest_test

TESSERA_SHARD(interest_test::Lookout);
TESSERA_SHARD(interest_test::Warehouse);
TESSERA_SHARD(interest_test::Plain);
TESSERA_SHARD(interest_test::Bare);

namespace interest_test {

using tessera::detail::Exports;
using tessera::detail::FilterExport;
using tessera::detail::GuestLen;
using tessera::detail::GuestPtr;
using tessera::detail::InterestExports;
using tessera::detail::ReplicationExports;
using tessera::detail::SnapshotVisibleExport;
namespace abi = tessera::abi;

constexpr int kJson = abi::kCodecJson;
constexpr int kMsgpack = abi::kCodecMsgpack;

using Arg = sdk_test::Arg<Bare>;
std::string Output() { return sdk_test::Output<Bare>(); }

template <class S>
int Init(int codec, std::string_view params) {
  return sdk_test::Init<S>(codec, "shard", params);
}

template <class S>
S& Shard() {
  return *tessera::detail::shard_instance<S>();
}

int Areas(const std::string& arg) {
  const Arg a(arg);
  return InterestExports<Lookout>::interest_areas(a.ptr, a.len);
}
int Filter(const std::string& arg) {
  const Arg a(arg);
  return FilterExport<Lookout>::filter(a.ptr, a.len);
}
int SnapshotVisible(const std::string& arg) {
  const Arg a(arg);
  return SnapshotVisibleExport<Lookout>::snapshot_visible(a.ptr, a.len);
}

// The change list since the previous call.
template <class S>
std::string Changes() {
  EXPECT_EQ(ReplicationExports<S>::replicated(), abi::kOk);
  return Output();
}
const std::string kNothing = Bytes().u8(0).u32(0).u32(0);

template <class S>
constexpr bool kHasInterestExports = requires {
  &InterestExports<S>::entities;
};
template <class S>
constexpr bool kHasFilter = requires {
  &FilterExport<S>::filter;
};
template <class S>
constexpr bool kHasSnapshotVisible = requires {
  &SnapshotVisibleExport<S>::snapshot_visible;
};
template <class S>
constexpr bool kHasReplication = requires {
  &ReplicationExports<S>::replicated;
};

class InterestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Exports<Lookout>::reset_for_testing();
    Exports<Warehouse>::reset_for_testing();
    Exports<Plain>::reset_for_testing();
    Exports<Bare>::reset_for_testing();
  }
};

TEST_F(InterestTest, ExportsOnlyWhatTheShardHas) {
  static_assert(kHasInterestExports<Lookout> && kHasFilter<Lookout> &&
                kHasSnapshotVisible<Lookout> && !kHasReplication<Lookout>);
  static_assert(kHasInterestExports<Warehouse> && !kHasFilter<Warehouse> &&
                !kHasSnapshotVisible<Warehouse> && kHasReplication<Warehouse>);
  static_assert(!kHasInterestExports<Plain> && kHasReplication<Plain>);
  static_assert(!kHasInterestExports<Bare> && !kHasFilter<Bare> &&
                !kHasSnapshotVisible<Bare> && !kHasReplication<Bare>);
}

TEST_F(InterestTest, InterestConfig) {
  ASSERT_EQ(Init<Lookout>(kJson, R"({"shared":true})"), abi::kOk);
  EXPECT_EQ(InterestExports<Lookout>::interest_config(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes().f64(150).f64(15).u8(1)));

  Exports<Lookout>::reset_for_testing();
  ASSERT_EQ(Init<Lookout>(kJson, ""), abi::kOk);
  EXPECT_EQ(InterestExports<Lookout>::interest_config(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes().f64(150).f64(15).u8(0)));

  Exports<Lookout>::reset_for_testing();
  ASSERT_EQ(Init<Lookout>(kJson, R"({"off":true})"), abi::kOk);
  EXPECT_EQ(InterestExports<Lookout>::interest_config(), abi::kNoState);
  EXPECT_EQ(Output(), "");
}

TEST_F(InterestTest, EntitiesFromTheShard) {
  ASSERT_EQ(Init<Lookout>(kMsgpack, ""), abi::kOk);
  EXPECT_EQ(InterestExports<Lookout>::entities(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes().u32(0)));
  Shard<Lookout>().list = {{5, 1.5f, -2}, {(1ULL << 53) - 1, 0, 1e6f, 9}};
  EXPECT_EQ(InterestExports<Lookout>::entities(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes()
                                      .u32(2)
                                      .u64(5)
                                      .u32(0)
                                      .f32(1.5f)
                                      .f32(-2)
                                      .u64((1ULL << 53) - 1)
                                      .u32(9)
                                      .f32(0)
                                      .f32(1e6f)));
}

TEST_F(InterestTest, InterestAreasInSubscriberOrder) {
  ASSERT_EQ(Init<Lookout>(kMsgpack, ""), abi::kOk);
  EXPECT_EQ(Areas(Bytes().u32(3).str("ann").str("nobody").str("scout-7")),
            abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes()
                                      .u8(1)
                                      .f32(3)
                                      .f32(2.5f)
                                      .f32(300)
                                      .u8(0)
                                      .f32(0)
                                      .f32(0)
                                      .f32(0)
                                      .u8(1)
                                      .f32(7)
                                      .f32(2.5f)
                                      .f32(300)));
  EXPECT_EQ(Areas(Bytes().u32(0)), abi::kOk);
  EXPECT_EQ(Output(), "");
}

TEST_F(InterestTest, MalformedArgumentsAreErrors) {
  ASSERT_EQ(Init<Lookout>(kMsgpack, ""), abi::kOk);
  EXPECT_EQ(Areas(Bytes().u32(2).str("ann")), abi::kError);
  EXPECT_EQ(Output(),
            "tessera_interest_areas: malformed argument: count larger than "
            "the argument reading subscriber count at byte 4");
  EXPECT_EQ(Areas(Bytes().u32(1).str("ann").u8(0)), abi::kError);
  EXPECT_EQ(Output(),
            "tessera_interest_areas: malformed argument: trailing bytes at "
            "byte 11");
  EXPECT_EQ(Areas(Bytes().u32(1).u32(9).raw("ann")), abi::kError);
  EXPECT_EQ(Output(),
            "tessera_interest_areas: malformed argument: unexpected end "
            "reading subscriber id at byte 8");
  EXPECT_EQ(Filter(Bytes().u32(1).str("ann").u32(2).u64(1)), abi::kError);
  EXPECT_EQ(Output(),
            "tessera_filter: malformed argument: count larger than the "
            "argument reading ids at byte 15");
  EXPECT_EQ(SnapshotVisible(Bytes().str("ann").ids({1}).ids({})), abi::kError);
  EXPECT_EQ(Output(),
            "tessera_snapshot_visible: malformed argument: unexpected end "
            "reading left ids at byte 23");
  EXPECT_EQ(Areas(""), abi::kError);
}

TEST_F(InterestTest, FilterBitmapPerSubscriber) {
  ASSERT_EQ(Init<Lookout>(kMsgpack, ""), abi::kOk);
  // ann: 10 ids with the stealthed 3 at index 2 and 9: 2 bytes.
  // scout-1: sees everything. nobody: no ids, no bytes. bob: 3 at index 0.
  const std::string arg = Bytes()
                              .u32(4)
                              .str("ann")
                              .ids({1, 2, 3, 4, 5, 6, 7, 8, 9, 3})
                              .str("scout-1")
                              .ids({3, 4})
                              .str("nobody")
                              .ids({})
                              .str("bob")
                              .ids({3});
  EXPECT_EQ(Filter(arg), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes()
                                      .u8(0b11111011)
                                      .u8(0b01)
                                      .u8(0b11)  // scout-1
                                      .u8(0)));  // bob
  EXPECT_EQ(Filter(Bytes().u32(0)), abi::kOk);
  EXPECT_EQ(Output(), "");
}

TEST_F(InterestTest, SnapshotVisibleInTheShardCodec) {
  ASSERT_EQ(Init<Lookout>(kJson, ""), abi::kOk);
  EXPECT_EQ(
      SnapshotVisible(Bytes().str("ann").ids({1, 2, 9}).ids({9}).ids({4, 5})),
      abi::kOk);
  EXPECT_EQ(Output(),
            R"({"sid":"ann","visible":[1,2,9],"entered":[9],"left":[4,5]})");
  EXPECT_EQ(SnapshotVisible(Bytes().str("").ids({}).ids({}).ids({})), abi::kOk);
  EXPECT_EQ(Output(), R"({"sid":"","visible":[],"entered":[],"left":[]})");
}

TEST_F(InterestTest, ReplicationConfig) {
  ASSERT_EQ(Init<Warehouse>(kMsgpack, R"()"), abi::kOk);
  EXPECT_EQ(ReplicationExports<Warehouse>::replication_config(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes().f64(0.5).u32(0).u8(0)));

  Exports<Warehouse>::reset_for_testing();
  ASSERT_EQ(Init<Warehouse>(kJson, R"({"y_up":true,"budget":1200})"), abi::kOk);
  EXPECT_EQ(ReplicationExports<Warehouse>::replication_config(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes().f64(0.5).u32(1200).u8(1)));

  Exports<Warehouse>::reset_for_testing();
  ASSERT_EQ(Init<Warehouse>(kJson, R"({"off":true})"), abi::kOk);
  EXPECT_EQ(ReplicationExports<Warehouse>::replication_config(), abi::kNoState);

  // Without replication_config(): the defaults.
  ASSERT_EQ(Init<Plain>(kJson, ""), abi::kOk);
  EXPECT_EQ(ReplicationExports<Plain>::replication_config(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes().f64(0.01).u32(0).u8(0)));
}

TEST_F(InterestTest, FirstChangeListIsFullThenMinimalDiffs) {
  ASSERT_EQ(Init<Plain>(kMsgpack, ""), abi::kOk);
  tessera::Replicated& store = Shard<Plain>().store;
  store.set_pos(20, 1, 2, 3);
  store.set_component(20, 2, "bob");
  store.set_component(20, 1, "npc");
  store.set_component(4, 9, "");  // at the origin: no POS
  EXPECT_EQ(Changes<Plain>(), std::string(Bytes()
                                              .u8(1)  // FULL
                                              .u32(0)
                                              .u32(2)
                                              .u64(4)
                                              .u8(kNew)
                                              .u8(1)
                                              .set(9, "")
                                              .u64(20)
                                              .u8(kNew | kPos)
                                              .pos(1, 2, 3)
                                              .u8(2)
                                              .set(1, "npc")
                                              .set(2, "bob")));
  // Nothing changed; equal values change nothing.
  EXPECT_EQ(Changes<Plain>(), kNothing);
  store.set_pos(20, 1, 2, 3);
  store.set_pos(20, {1, 2, 3});
  store.set_component(20, 1, "npc");
  EXPECT_EQ(Changes<Plain>(), kNothing);

  // A move lists the entity's position only; a move back before the host
  // reads lists nothing.
  store.set_pos(20, 1, 2, 4);
  EXPECT_EQ(
      Changes<Plain>(),
      std::string(
          Bytes().u8(0).u32(0).u32(1).u64(20).u8(kPos).pos(1, 2, 4).u8(0)));
  store.set_pos(20, 9, 9, 9);
  store.set_pos(20, 1, 2, 4);
  EXPECT_EQ(Changes<Plain>(), kNothing);

  // Components: a change, a removal, an addition; unchanged ones unlisted.
  store.set_component(20, 1, "boss");
  store.remove_component(20, 2);
  store.set_component(20, 7, "x");
  store.remove_component(20, 99);  // absent: nothing
  EXPECT_EQ(Changes<Plain>(), std::string(Bytes()
                                              .u8(0)
                                              .u32(0)
                                              .u32(1)
                                              .u64(20)
                                              .u8(0)
                                              .u8(3)
                                              .set(1, "boss")
                                              .unset(2)
                                              .set(7, "x")));
  // Added and removed between two reads: the host never hears of it.
  store.set_component(20, 8, "tmp");
  store.remove_component(20, 8);
  EXPECT_EQ(Changes<Plain>(), kNothing);
  // Removed and set again: listed as set.
  store.remove_component(20, 7);
  store.set_component(20, 7, "y");
  EXPECT_EQ(
      Changes<Plain>(),
      std::string(Bytes().u8(0).u32(0).u32(1).u64(20).u8(0).u8(1).set(7, "y")));
  EXPECT_EQ(store.component(20, 7) != nullptr, true);
  EXPECT_EQ(*store.component(20, 7), "y");
  EXPECT_EQ(store.component(20, 2), nullptr);
}

TEST_F(InterestTest, RemovalAndReuseOfIds) {
  ASSERT_EQ(Init<Plain>(kMsgpack, ""), abi::kOk);
  tessera::Replicated& store = Shard<Plain>().store;
  for (std::uint64_t id : {1, 2, 3}) store.set_pos(id, 0, 0, 1);
  store.set_component(2, 1, "a");
  Changes<Plain>();

  store.remove(3);
  store.remove(42);  // absent: nothing
  // Created and removed between two reads: never listed.
  store.set_pos(50, 1, 1, 1);
  store.remove(50);
  // Removed and set again: a reused id (removed + NEW with its full state).
  store.remove(2);
  store.set_pos(2, 5, 5, 5);
  EXPECT_FALSE(store.contains(3));
  EXPECT_TRUE(store.contains(2));
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.component(2, 1), nullptr);  // the old one's are gone
  EXPECT_EQ(Changes<Plain>(), std::string(Bytes()
                                              .u8(0)
                                              .u32(2)
                                              .u64(2)
                                              .u64(3)
                                              .u32(1)
                                              .u64(2)
                                              .u8(kNew | kPos)
                                              .pos(5, 5, 5)
                                              .u8(0)));
  // Removed, set and removed again: just removed.
  store.remove(1);
  store.set_pos(1, 7, 7, 7);
  store.remove(1);
  // A brand-new id.
  store.set_component(60, 3, "new");
  EXPECT_EQ(
      Changes<Plain>(),
      std::string(Bytes().u8(0).u32(1).u64(1).u32(1).u64(60).u8(kNew).u8(1).set(
          3, "new")));
  // An id removed in an earlier read and set again is simply new.
  store.set_pos(3, 1, 0, 0);
  EXPECT_EQ(Changes<Plain>(), std::string(Bytes()
                                              .u8(0)
                                              .u32(0)
                                              .u32(1)
                                              .u64(3)
                                              .u8(kNew | kPos)
                                              .pos(1, 0, 0)
                                              .u8(0)));
  EXPECT_EQ(Changes<Plain>(), kNothing);
}

TEST_F(InterestTest, StoreSurvivesMovesAndRestarts) {
  tessera::Replicated a;
  a.set_pos(1, 1, 1, 1);
  tessera::Replicated b = std::move(a);
  tessera::Replicated c;
  c = std::move(b);
  ASSERT_NE(c.pos(1), nullptr);
  EXPECT_EQ(*c.pos(1), (std::array<double, 3>{1, 1, 1}));

  // Warehouse::init set entity 7 before the shard was moved into place.
  ASSERT_EQ(Init<Warehouse>(kMsgpack, ""), abi::kOk);
  EXPECT_EQ(Changes<Warehouse>(), std::string(Bytes()
                                                  .u8(1)
                                                  .u32(0)
                                                  .u32(1)
                                                  .u64(7)
                                                  .u8(kNew | kPos)
                                                  .pos(1, 2, 3)
                                                  .u8(0)));
  EXPECT_EQ(Changes<Warehouse>(), kNothing);
  // A restart (init again) starts with a FULL listing.
  Exports<Warehouse>::reset_for_testing();
  ASSERT_EQ(Init<Warehouse>(kMsgpack, ""), abi::kOk);
  EXPECT_EQ(Changes<Warehouse>().substr(0, 1), "\x01");
  // A FULL listing of an empty store.
  ASSERT_EQ(Init<Plain>(kMsgpack, ""), abi::kOk);
  EXPECT_EQ(Changes<Plain>(), std::string(Bytes().u8(1).u32(0).u32(0)));
}

TEST_F(InterestTest, EntitiesDerivedFromTheStore) {
  ASSERT_EQ(Init<Warehouse>(kMsgpack, ""), abi::kOk);
  tessera::Replicated& store = Shard<Warehouse>().store;
  store.set_pos(9, -4, 5, 6);
  EXPECT_EQ(InterestExports<Warehouse>::entities(), abi::kOk);
  EXPECT_EQ(
      Output(),
      std::string(
          Bytes().u32(2).u64(7).u32(0).f32(1).f32(2).u64(9).u32(0).f32(-4).f32(
              5)));
  Changes<Warehouse>();
  // Reusing an id bumps its generation (once per reuse, kept afterwards).
  store.remove(9);
  store.set_pos(9, 1, 1, 1);
  EXPECT_EQ(InterestExports<Warehouse>::entities(), abi::kOk);
  EXPECT_EQ(
      Output(),
      std::string(
          Bytes().u32(2).u64(7).u32(0).f32(1).f32(2).u64(9).u32(1).f32(1).f32(
              1)));
  store.remove(9);
  store.set_pos(9, 1, 1, 1);
  Changes<Warehouse>();
  store.set_pos(9, 2, 1, 1);
  EXPECT_EQ(InterestExports<Warehouse>::entities(), abi::kOk);
  EXPECT_EQ(Output().substr(24),
            std::string(Bytes().u64(9).u32(2).f32(2).f32(1)));

  // y up: the ground plane is (x, z).
  Exports<Warehouse>::reset_for_testing();
  ASSERT_EQ(Init<Warehouse>(kJson, R"({"y_up":true})"), abi::kOk);
  EXPECT_EQ(InterestExports<Warehouse>::entities(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes().u32(1).u64(7).u32(0).f32(1).f32(3)));

  // No store (replication off): no entities.
  Exports<Warehouse>::reset_for_testing();
  ASSERT_EQ(Init<Warehouse>(kJson, R"({"off":true})"), abi::kOk);
  EXPECT_EQ(InterestExports<Warehouse>::entities(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes().u32(0)));
}

TEST_F(InterestTest, ComponentValuesUseTheShardCodec) {
  ASSERT_EQ(Init<Plain>(kJson, ""), abi::kOk);
  tessera::Replicated& store = Shard<Plain>().store;
  store.set_component_value(1, 1, std::string("npc"));
  store.set_component_value(1, 3, 100);
  EXPECT_EQ(*store.component(1, 1), "\"npc\"");
  EXPECT_EQ(*store.component(1, 3), "100");

  Exports<Plain>::reset_for_testing();
  ASSERT_EQ(Init<Plain>(kMsgpack, ""), abi::kOk);
  Shard<Plain>().store.set_component_value(1, 1, std::string("npc"));
  EXPECT_EQ(*Shard<Plain>().store.component(1, 1), "\xa3npc");
}

TEST_F(InterestTest, ForEachVisitsInIdOrder) {
  tessera::Replicated store;
  store.set_pos(3, 3, 0, 0);
  store.set_pos(1, 1, 0, 0);
  std::vector<std::uint64_t> ids;
  store.for_each([&](std::uint64_t id, const std::array<double, 3>& p) {
    EXPECT_EQ(p[0], static_cast<double>(id));
    ids.push_back(id);
  });
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(store.pos(2), nullptr);
}

using InterestDeathTest = InterestTest;

TEST_F(InterestDeathTest, BadValuesPanicWithTheirReason) {
  tessera::Replicated store;
  EXPECT_DEATH(store.set_pos(1ULL << 53, 0, 0, 0),
               "set_pos: entity id 9007199254740992 is too large");
  EXPECT_DEATH(store.set_component(1ULL << 60, 1, "x"),
               "set_component: entity id 1152921504606846976 is too large");
  EXPECT_DEATH(store.set_pos(1, 0, 1.0 / 0.0, 0),
               "entity 1: coordinates must be finite");
  EXPECT_DEATH(
      {
        for (int c = 0; c < 256; ++c) {
          store.set_component(1, static_cast<std::uint8_t>(c), "x");
        }
      },
      "entity 1 already holds 255 components");

  ASSERT_EQ(Init<Lookout>(kMsgpack, ""), abi::kOk);
  Shard<Lookout>().list = {{4, 0, 0}, {4, 1, 1}};
  EXPECT_DEATH(InterestExports<Lookout>::entities(),
               "entities\\(\\): entity id 4 is listed twice");
  Shard<Lookout>().list = {{1ULL << 53, 0, 0}};
  EXPECT_DEATH(InterestExports<Lookout>::entities(),
               "entity id 9007199254740992 is too large");

  ASSERT_EQ(Init<Plain>(kMsgpack, ""), abi::kOk);
  Shard<Plain>().store.set_pos(1, 1e300, 0, 0);
  EXPECT_DEATH(ReplicationExports<Plain>::replicated(),
               "coordinate .* is too large for precision 0.01");
}

}  // namespace interest_test
