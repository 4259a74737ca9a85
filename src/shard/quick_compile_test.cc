// A module's generated C compiled by Tiny C (hot reload's quick build,
// wasm/loader.h) runs exactly as the optimised build: every tick's
// snapshot, saved state and fuel are bit for bit the same. (The whole
// WebAssembly spec suite also runs under Tiny C: ctest spec_tcc.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "shard/guest_shard.h"
#include "shard/shard_abi.h"
#include "shard/test_guests.h"
#include "wasm/compiled_module.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::Msgpack;

TEST(QuickCompileTest, TinyCRunsTheSameTicksAsTheOptimisedBuild) {
  const std::string tcc = wasm::QuickCompiler();
  ASSERT_FALSE(tcc.empty())
      << "Tiny C is not installed (Debian package tcc; scripts/install-deps)";
  const char* path = testing::GuestPath("zone_mini");
  ASSERT_NE(path, nullptr);
  TESSERA_LOAD_GUEST(optimised, "zone_mini", 64);
  auto quick = testing::LoadGuestWith("zone_mini", 64, tcc, "-O0");
  ASSERT_TRUE(quick.ok()) << quick.status().ToString();
  ASSERT_NE(optimised->so_path, (*quick)->so_path);

  KindConfig kind;
  kind.name = "zone";
  const std::string params = Msgpack({{"mode", "interest"}, {"movers", 40}});
  auto a = GuestShard::Create(optimised, kind, "z", params);
  auto b = GuestShard::Create(*quick, kind, "z", params);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();

  uint64_t seq = 0;
  for (int tick = 0; tick < 120; ++tick) {
    std::vector<PendingInput> inputs;
    if (tick == 0) {
      for (const char* who : {"ann", "bob", "cy"}) {
        inputs.push_back({who, ++seq, Msgpack({{"join", nullptr}}), {}, {}});
      }
    } else {
      // Fractional, negative and irrational-looking coordinates: the float
      // paths (conversions, rounding) must agree to the last bit.
      const double x = std::sin(tick * 0.37) * 333.3 + tick / 7.0;
      const double y = std::cos(tick * 0.11) * -91.25 + 1e-3 * tick;
      inputs.push_back({tick % 2 ? "ann" : "bob",
                        ++seq,
                        Msgpack({{"move_to", {{"x", x}, {"y", y}}}}),
                        {},
                        {}});
    }
    StepResult ra = (*a)->Step(inputs, 50000);
    StepResult rb = (*b)->Step(inputs, 50000);
    ASSERT_TRUE(ra.outcome.running()) << ra.outcome.message;
    ASSERT_TRUE(rb.outcome.running()) << rb.outcome.message;
    ASSERT_EQ(ra.inputs.size(), rb.inputs.size());
    for (size_t i = 0; i < ra.inputs.size(); ++i) {
      EXPECT_EQ(ra.inputs[i].accepted, rb.inputs[i].accepted) << tick;
    }
    ASSERT_EQ(ra.snapshot, rb.snapshot) << "tick " << tick;
    ASSERT_EQ((*a)->fuel_used(), (*b)->fuel_used()) << "tick " << tick;
    if (tick % 10 == 9) {
      auto sa = (*a)->Save();
      auto sb = (*b)->Save();
      ASSERT_TRUE(sa.ok() && sb.ok());
      ASSERT_TRUE(sa->has_value());
      ASSERT_EQ(**sa, **sb) << "saved state after tick " << tick;
    }
  }
}

}  // namespace
}  // namespace tessera::shard
