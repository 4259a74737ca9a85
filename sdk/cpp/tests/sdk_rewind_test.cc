// Native tests of lag compensation in the C++ SDK (tessera/rewind.h and the
// tessera_lag_compensation / tessera_apply_input_at exports): Rewind built
// by hand and parsed from the host's layout (docs/guest-abi.md, "Lag
// compensation"; the bytes are written here independently of the SDK), its
// queries, malformed rewinds, and the exports driven as the host does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "guest_calls.h"
#include "tessera/shard_sdk.h"

namespace rewind_test {

using tessera::Rewind;
using tessera::Vec3;
using Entity = Rewind::Entity;

using sdk_test::Bytes;

// ---------------------------------------------------------------------------
// Shards.

struct Params {
  bool off = false;  // lag_compensation() returns nullopt
  std::uint32_t history = 10;
  std::uint32_t delay = 0;
};
TESSERA_FIELDS(Params, off, history, delay);

struct Shoot {
  std::uint64_t target = 0;
};
TESSERA_FIELDS(Shoot, target);

// Lag compensation on a replicated shard; apply_input_at keeps what it got.
class Gallery {
 public:
  static tessera::Result<Gallery> init(std::string_view, Params p) {
    Gallery g;
    g.params_ = p;
    return g;
  }
  tessera::Status apply_input(std::string_view sid, Shoot in) {
    plain.push_back(std::string(sid) + ":" + std::to_string(in.target));
    return {};
  }
  void tick(double) {}
  int snapshot() const { return 0; }
  tessera::Replicated* replicated() { return &store; }

  std::optional<tessera::LagCompensation> lag_compensation() const {
    if (params_.off) return std::nullopt;
    return tessera::LagCompensation(params_.history, params_.delay);
  }
  tessera::Status apply_input_at(std::string_view sid, Shoot in,
                                 const Rewind& rewind) {
    if (!rewind.position_at(in.target)) {
      return tessera::Error("missed " + std::to_string(in.target));
    }
    at_sid = std::string(sid);
    at_target = in.target;
    last = rewind;
    return {};
  }

  tessera::Replicated store;
  std::vector<std::string> plain;
  std::string at_sid;
  std::uint64_t at_target = 0;
  std::optional<Rewind> last;

 private:
  Params params_;
};

// No lag compensation.
class Bare {
 public:
  static tessera::Result<Bare> init(std::string_view, Params) { return Bare(); }
  tessera::Status apply_input(std::string_view, Shoot) { return {}; }
  void tick(double) {}
  int snapshot() const { return 0; }
};

// Shapes TESSERA_SHARD refuses (checked through the concepts behind its
// static_asserts, not exported).
class OnlyLag {
 public:
  tessera::Status apply_input(std::string_view, Shoot) { return {}; }
  std::optional<tessera::LagCompensation> lag_compensation() const {
    return std::nullopt;
  }
};
class OnlyAt {
 public:
  tessera::Status apply_input(std::string_view, Shoot) { return {}; }
  tessera::Status apply_input_at(std::string_view, Shoot, const Rewind&) {
    return {};
  }
};
class OtherInput {
 public:
  tessera::Status apply_input(std::string_view, Shoot) { return {}; }
  std::optional<tessera::LagCompensation> lag_compensation() const {
    return std::nullopt;
  }
  tessera::Status apply_input_at(std::string_view, int, const Rewind&) {
    return {};
  }
};
class WrongLagType {
 public:
  std::uint32_t lag_compensation() const { return 10; }
};

}  // namespace rewind_test

TESSERA_SHARD(rewind_test::Gallery);
TESSERA_SHARD(rewind_test::Bare);

namespace rewind_test {

using tessera::detail::Exports;
using tessera::detail::GuestLen;
using tessera::detail::GuestPtr;
using tessera::detail::LagCompensationExports;
namespace abi = tessera::abi;

template <class S>
constexpr bool kExportsLag = requires {
  &LagCompensationExports<S>::lag_compensation;
  &LagCompensationExports<S>::apply_input_at;
};

using Arg = sdk_test::Arg<Bare>;
std::string Output() { return sdk_test::Output<Bare>(); }

template <class S>
int Init(std::string_view params_json) {
  return sdk_test::Init<S>(abi::kCodecJson, "shard", params_json);
}

int ApplyAt(std::string_view sid, std::string_view input,
            std::string_view rewind) {
  const Arg s(sid), i(input), r(rewind);
  return LagCompensationExports<Gallery>::apply_input_at(s.ptr, s.len, i.ptr,
                                                         i.len, r.ptr, r.len);
}

Gallery& Shard() { return *tessera::detail::shard_instance<Gallery>(); }

class RewindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Exports<Gallery>::reset_for_testing();
    Exports<Bare>::reset_for_testing();
  }
};

// ---------------------------------------------------------------------------
// Rewind itself.

TEST(RewindValueTest, WithPositionsSortsByIdAndKeepsTheLastOfAnId) {
  const Rewind r = Rewind::with_positions(
      12.25, 14,
      {{30, {3, 0, 0}}, {10, {1, 0, 0}}, {20, {2, 0, 0}}, {10, {9, 9, 9}}});
  ASSERT_EQ(r.entities().size(), 3u);
  EXPECT_EQ(r.entities()[0].first, 10u);
  EXPECT_EQ(r.entities()[0].second, (Vec3{9, 9, 9}));
  EXPECT_EQ(r.entities()[1].first, 20u);
  EXPECT_EQ(r.entities()[2].first, 30u);
  EXPECT_EQ(r.tick(), 12.25);
  EXPECT_EQ(r.now_tick(), 14u);
  EXPECT_EQ(r.ticks_behind(), 1.75);
}

TEST(RewindValueTest, PositionAtFindsDrawnEntitiesOnly) {
  const Rewind r = Rewind::with_positions(
      5, 5, {{7, {1.5, -2, 0.25}}, {3, {0, 0, 0}}, {1000, {4, 5, 6}}});
  EXPECT_EQ(r.position_at(7), (Vec3{1.5, -2, 0.25}));
  EXPECT_EQ(r.position_at(3), (Vec3{0, 0, 0}));
  EXPECT_EQ(r.position_at(1000), (Vec3{4, 5, 6}));
  EXPECT_EQ(r.position_at(4), std::nullopt);
  EXPECT_EQ(r.position_at(0), std::nullopt);
  EXPECT_EQ(r.position_at(1001), std::nullopt);
  EXPECT_EQ(Rewind::with_positions(1, 1, {}).position_at(7), std::nullopt);
  EXPECT_EQ(r.ticks_behind(), 0);
}

TEST(RewindValueTest, EntitiesNearUsesThreeDimensionalDistance) {
  const Rewind r = Rewind::with_positions(0, 2,
                                          {
                                              {5, {3, 4, 0}},    // 5 away
                                              {1, {0, 0, 0}},    // 0 away
                                              {9, {0, 0, 6}},    // 6 away (z)
                                              {4, {3, 4, 0.1}},  // just over 5
                                              {2, {-1, 2, -2}},  // 3 away
                                          });
  std::vector<std::uint64_t> ids;
  for (const Entity& e : r.entities_near({0, 0, 0}, 5)) ids.push_back(e.first);
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 2, 5}));
  // Around another centre, with its positions.
  const std::vector<Entity> near = r.entities_near({3, 4, 1}, 1);
  ASSERT_EQ(near.size(), 2u);
  EXPECT_EQ(near[0].first, 4u);
  EXPECT_EQ(near[0].second, (Vec3{3, 4, 0.1}));
  EXPECT_EQ(near[1].first, 5u);
  EXPECT_TRUE(r.entities_near({0, 0, 0}, -1).empty());
  EXPECT_TRUE(
      r.entities_near({0, 0, 0}, std::numeric_limits<double>::quiet_NaN())
          .empty());
  EXPECT_EQ(r.entities_near({0, 0, 0}, 1e9).size(), 5u);
}

TEST(RewindValueTest, ParsesTheHostLayout) {
  const std::string bytes = Bytes()
                                .f64(17.5)
                                .u64(20)
                                .u32(2)
                                .entity(4, 1.25, -3, 0)
                                .entity(1ull << 52, 0.5, 0.5, 9);
  tessera::Result<Rewind> r = Rewind::parse(bytes);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->tick(), 17.5);
  EXPECT_EQ(r->now_tick(), 20u);
  EXPECT_EQ(r->ticks_behind(), 2.5);
  EXPECT_EQ(r->position_at(4), (Vec3{1.25, -3, 0}));
  EXPECT_EQ(r->position_at(1ull << 52), (Vec3{0.5, 0.5, 9}));
  EXPECT_EQ(r->entities().size(), 2u);

  // No history yet: the current tick and nobody.
  tessera::Result<Rewind> empty =
      Rewind::parse(std::string(Bytes().f64(3).u64(3).u32(0)));
  ASSERT_TRUE(empty.ok()) << empty.error();
  EXPECT_EQ(empty->ticks_behind(), 0);
  EXPECT_TRUE(empty->entities().empty());
}

// Parses `bytes`, expecting an error containing `problem`.
void ExpectMalformed(const std::string& bytes, std::string_view problem) {
  tessera::Result<Rewind> r = Rewind::parse(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("malformed rewind: "), std::string::npos)
      << r.error();
  EXPECT_NE(r.error().find(problem), std::string::npos) << r.error();
}

TEST(RewindValueTest, MalformedBytesAreErrors) {
  const std::string head = Bytes().f64(2).u64(3);
  ExpectMalformed("", "unexpected end reading view_tick at byte 0");
  ExpectMalformed(Bytes().f64(2).u64(3), "unexpected end reading entity count");
  // A count the bytes cannot hold (no huge allocation).
  ExpectMalformed(Bytes().raw(head).u32(0xffffffff),
                  "count larger than the argument");
  // One entity cut short.
  ExpectMalformed(Bytes().raw(head).u32(1).u64(1).f64(0).f64(0),
                  "count larger than the argument");
  ExpectMalformed(Bytes().raw(head).u32(1).entity(1, 0, 0, 0).raw("x"),
                  "trailing bytes");
  ExpectMalformed(
      Bytes().raw(head).u32(2).entity(5, 0, 0, 0).entity(5, 1, 1, 1),
      "not strictly ascending");
  ExpectMalformed(
      Bytes().raw(head).u32(2).entity(5, 0, 0, 0).entity(4, 1, 1, 1),
      "not strictly ascending");
  ExpectMalformed(
      Bytes().f64(std::numeric_limits<double>::infinity()).u64(3).u32(0),
      "view_tick that is not finite");
  ExpectMalformed(Bytes().raw(head).u32(1).entity(
                      1, 0, std::numeric_limits<double>::quiet_NaN(), 0),
                  "position that is not finite");
}

// ---------------------------------------------------------------------------
// The exports.

TEST_F(RewindTest, ExportsOnlyForShardsWithLagCompensation) {
  static_assert(kExportsLag<Gallery>);
  static_assert(!kExportsLag<Bare>);
  // What TESSERA_SHARD's static_asserts check.
  static_assert(tessera::LagCompensationComplete<Gallery>);
  static_assert(tessera::LagCompensationComplete<Bare>);
  static_assert(!tessera::LagCompensationComplete<OnlyLag>);
  static_assert(!tessera::LagCompensationComplete<OnlyAt>);
  static_assert(tessera::ApplyInputAtMatches<Gallery>);
  static_assert(!tessera::ApplyInputAtMatches<OtherInput>);
  static_assert(tessera::DeclaresLagCompensation<WrongLagType> &&
                !tessera::HasLagCompensation<WrongLagType>);
  ASSERT_EQ(Init<Bare>("{}"), abi::kOk);
}

TEST_F(RewindTest, LagCompensationConfigLayout) {
  ASSERT_EQ(Init<Gallery>(R"({"history": 12, "delay": 300})"), abi::kOk);
  EXPECT_EQ(LagCompensationExports<Gallery>::lag_compensation(), abi::kOk);
  EXPECT_EQ(Output(), std::string(Bytes().u32(12).u32(300)));
}

TEST_F(RewindTest, DefaultDelayIsTheAbiDefault) {
  const tessera::LagCompensation lag(5);
  EXPECT_EQ(lag.history_ticks, 5u);
  EXPECT_EQ(lag.max_view_delay_ms, abi::kDefaultMaxViewDelayMs);
}

TEST_F(RewindTest, LagCompensationOffIsNoState) {
  ASSERT_EQ(Init<Gallery>(R"({"off": true})"), abi::kOk);
  EXPECT_EQ(LagCompensationExports<Gallery>::lag_compensation(), abi::kNoState);
}

TEST(RewindDeathTest, HistoryOutOfRangePanics) {
  Exports<Gallery>::reset_for_testing();
  ASSERT_EQ(Init<Gallery>(R"({"history": 0})"), abi::kOk);
  EXPECT_DEATH(LagCompensationExports<Gallery>::lag_compensation(),
               "history_ticks must be 1..256 \\(got 0\\)");
  Exports<Gallery>::reset_for_testing();
  ASSERT_EQ(Init<Gallery>(R"({"history": 257})"), abi::kOk);
  EXPECT_DEATH(LagCompensationExports<Gallery>::lag_compensation(),
               "history_ticks must be 1..256 \\(got 257\\)");
}

TEST_F(RewindTest, ApplyInputAtGetsTheInputAndTheRewind) {
  ASSERT_EQ(Init<Gallery>("{}"), abi::kOk);
  const std::string rewind =
      Bytes().f64(8.5).u64(10).u32(2).entity(3, 1, 2, 3).entity(7, 4, 5, 6);
  ASSERT_EQ(ApplyAt("alice", R"({"target": 7})", rewind), abi::kOk) << Output();
  EXPECT_EQ(Shard().at_sid, "alice");
  EXPECT_EQ(Shard().at_target, 7u);
  ASSERT_TRUE(Shard().last.has_value());
  EXPECT_EQ(Shard().last->tick(), 8.5);
  EXPECT_EQ(Shard().last->ticks_behind(), 1.5);
  EXPECT_EQ(Shard().last->position_at(3), (Vec3{1, 2, 3}));
  EXPECT_TRUE(Shard().plain.empty());
  // The shard's refusal comes back as the error text.
  EXPECT_EQ(ApplyAt("alice", R"({"target": 4})", rewind), abi::kError);
  EXPECT_EQ(Output(), "missed 4");
  // apply_input is still there for inputs without a view tick.
  const Arg s("bob"), i(R"({"target": 2})");
  EXPECT_EQ(Exports<Gallery>::apply_input(s.ptr, s.len, i.ptr, i.len),
            abi::kOk);
  EXPECT_EQ(Shard().plain, (std::vector<std::string>{"bob:2"}));
}

TEST_F(RewindTest, MalformedRewindIsAnAbiError) {
  ASSERT_EQ(Init<Gallery>("{}"), abi::kOk);
  const std::string cut = Bytes().f64(1).u64(2).u32(1).u64(7);
  EXPECT_EQ(ApplyAt("alice", R"({"target": 7})", cut), abi::kError);
  EXPECT_EQ(Output().rfind("abi: malformed rewind: ", 0), 0u) << Output();
  EXPECT_FALSE(Shard().last.has_value());
  EXPECT_EQ(ApplyAt("alice", R"({"target": 7})", ""), abi::kError);
  EXPECT_EQ(Output(),
            "abi: malformed rewind: unexpected end reading view_tick at byte "
            "0");
  // A bad input is reported as for apply_input.
  EXPECT_EQ(ApplyAt("alice", "[", std::string(Bytes().f64(1).u64(1).u32(0))),
            abi::kError);
  EXPECT_EQ(Output().rfind("invalid input: ", 0), 0u) << Output();
}

}  // namespace rewind_test
