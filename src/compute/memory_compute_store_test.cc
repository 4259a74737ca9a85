#include "compute/memory_compute_store.h"

#include <gtest/gtest.h>

#include <memory>

#include "compute/compute_store_conformance.h"

namespace tessera::compute {
namespace {

INSTANTIATE_TEST_SUITE_P(
    Memory, ComputeStoreConformanceTest,
    ::testing::Values(ComputeStoreBackend{
        "memory",
        [](const WallClock* clock) -> std::unique_ptr<ComputeStore> {
          return std::make_unique<MemoryComputeStore>(clock);
        }}),
    ComputeStoreBackendName);

// Records handed out are copies: changing one changes nothing stored.
TEST(MemoryComputeStoreTest, ReturnedRecordsAreCopies) {
  FakeWallClock clock(1'000'000);
  MemoryComputeStore store(&clock);
  Result<ModuleRecord> m = store.UpsertModule("m", "d", false);
  ASSERT_TRUE(m.ok());
  m->enabled = true;
  m->description = "changed";
  Result<ModuleRecord> again = store.GetModule("m");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->enabled);
  EXPECT_EQ(again->description, "d");
}

TEST(MemoryComputeStoreTest, NullClockUsesTheWallClock) {
  MemoryComputeStore store;
  Result<ModuleRecord> m = store.UpsertModule("m", "", false);
  ASSERT_TRUE(m.ok());
  // Any date after 2020-01-01 is the real clock, not a zero.
  EXPECT_GT(m->created_ms, 1'577'836'800'000);
}

}  // namespace
}  // namespace tessera::compute
