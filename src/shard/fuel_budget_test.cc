// fuelPerTick is one budget per tick, shared by the tick's inputs, the tick
// and the snapshot (GuestShard::Step), so work spread over many inputs is
// stopped like work in one call.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shard/guest_shard.h"
#include "shard/test_guests.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::Msgpack;

constexpr int64_t kIterations = 200000;

KindConfig SpinKind(uint64_t fuel_per_tick) {
  KindConfig kind;
  kind.name = "spin";
  kind.fuel_per_tick = fuel_per_tick;
  kind.max_run_ms = 60000;       // fuel, not the watchdog, must stop it
  kind.tick_budget_ms = 600000;  // nor the CPU budget
  return kind;
}

std::vector<PendingInput> WorkInputs(int n) {
  std::vector<PendingInput> inputs;
  for (int k = 0; k < n; ++k) {
    inputs.push_back(
        PendingInput{"alice",
                     static_cast<uint64_t>(k + 1),
                     Msgpack({{"work", {{"iterations", kIterations}}}}),
                     {},
                     {}});
  }
  return inputs;
}

// Fuel of one step with `inputs` work inputs, with fuel to spare.
int64_t StepFuel(const std::shared_ptr<const wasm::CompiledModule>& module,
                 int inputs) {
  auto shard = GuestShard::Create(module, SpinKind(uint64_t{1} << 50), "s",
                                  Msgpack({{"mode", "normal"}}));
  EXPECT_TRUE(shard.ok()) << shard.status().ToString();
  if (!shard.ok()) return 0;
  const int64_t before = (*shard)->fuel_used();
  StepResult r = (*shard)->Step(WorkInputs(inputs), 50000);
  EXPECT_TRUE(r.outcome.running()) << r.outcome.message;
  return (*shard)->fuel_used() - before;
}

TEST(FuelBudgetTest, InputsTickAndSnapshotShareOneBudget) {
  TESSERA_LOAD_GUEST(module, "spin", 64);
  const int64_t base = StepFuel(module, 0);
  const int64_t per_input = StepFuel(module, 1) - base;
  ASSERT_GT(per_input, kIterations);  // each iteration costs fuel
  // Room for three inputs and a half: every single call fits easily.
  const uint64_t budget = static_cast<uint64_t>(base + per_input * 7 / 2);

  auto shard = GuestShard::Create(module, SpinKind(budget), "s",
                                  Msgpack({{"mode", "normal"}}));
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  StepResult three = (*shard)->Step(WorkInputs(3), 50000);
  ASSERT_TRUE(three.outcome.running()) << three.outcome.message;
  for (const InputResult& in : three.inputs) EXPECT_TRUE(in.accepted);

  // The next tick starts with a whole budget again; eight inputs overdraw it
  // at the fourth, although each one alone uses a quarter of it.
  StepResult eight = (*shard)->Step(WorkInputs(8), 50000);
  EXPECT_EQ(eight.outcome.stop, StopReason::kFailed);
  EXPECT_EQ(eight.outcome.message, "fuel exhausted: the tick used more than " +
                                       std::to_string(budget) + " fuel");
  ASSERT_EQ(eight.inputs.size(), 4u);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(eight.inputs[k].accepted) << k;
  EXPECT_FALSE(eight.inputs[3].accepted);
  EXPECT_EQ(eight.inputs[3].rejection, "shard failed");
  EXPECT_TRUE(eight.snapshot.empty());
}

TEST(FuelBudgetTest, EachTickHasItsOwnBudget) {
  TESSERA_LOAD_GUEST(module, "spin", 64);
  const int64_t base = StepFuel(module, 0);
  const int64_t per_input = StepFuel(module, 1) - base;
  const uint64_t budget = static_cast<uint64_t>(base + per_input * 3 / 2);
  auto shard = GuestShard::Create(module, SpinKind(budget), "s",
                                  Msgpack({{"mode", "normal"}}));
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  // One input a tick for many ticks: more than the budget in total, never
  // in one tick.
  for (int t = 0; t < 10; ++t) {
    StepResult r = (*shard)->Step(WorkInputs(1), 50000);
    ASSERT_TRUE(r.outcome.running())
        << "tick " << t << ": " << r.outcome.message;
  }
  EXPECT_GT((*shard)->fuel_used(), static_cast<int64_t>(budget) * 5);
}

}  // namespace
}  // namespace tessera::shard
