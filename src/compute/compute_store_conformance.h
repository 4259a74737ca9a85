// The ComputeStore contract as a test suite, run against every backend:
// each backend's test instantiates it with a factory of fresh, empty
// stores, e.g.
//
//   INSTANTIATE_TEST_SUITE_P(
//       Memory, ComputeStoreConformanceTest,
//       ::testing::Values(ComputeStoreBackend{
//           "memory", [](const WallClock* clock) {
//             return std::make_unique<MemoryComputeStore>(clock);
//           }}),
//       ComputeStoreBackendName);
//
// It covers every method of compute_store.h with the shared rules of
// compute_store_rules.h. Not covered here, because they are not the
// store's: the 256 KiB state limit (the store accepts any size; the
// instance refuses a bigger state_set with kErrTooLarge before the store
// sees it) and durability (each durable backend has its own reopen and
// kill -9 tests).
#ifndef TESSERA_COMPUTE_COMPUTE_STORE_CONFORMANCE_H_
#define TESSERA_COMPUTE_COMPUTE_STORE_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "common/clock.h"
#include "compute/compute_store.h"
#include "compute/compute_types.h"

namespace tessera::compute {

struct ComputeStoreBackend {
  std::string name;  // a gtest name: letters, digits, '_'
  // A fresh, empty store dated by `clock` (not owned; outlives the store).
  std::function<std::unique_ptr<ComputeStore>(const WallClock* clock)> make;
};

// gtest prints a parameter by its name (not its bytes).
void PrintTo(const ComputeStoreBackend& backend, std::ostream* os);

// For INSTANTIATE_TEST_SUITE_P's name generator.
std::string ComputeStoreBackendName(
    const ::testing::TestParamInfo<ComputeStoreBackend>& info);

class ComputeStoreConformanceTest
    : public ::testing::TestWithParam<ComputeStoreBackend> {
 public:
  // The fake clock's start (unix microseconds).
  static constexpr int64_t kStartUs = 1'800'000'000'000'000;

 protected:
  void SetUp() override;

  // A module named `name`, created through the store (fails the test if
  // the store refuses).
  ModuleRecord MakeModule(const std::string& name);

  FakeWallClock clock_{kStartUs};
  std::unique_ptr<ComputeStore> store_;
};

// Helpers of the suite's tests.
namespace conformance {

inline constexpr int64_t kStartMs =
    ComputeStoreConformanceTest::kStartUs / 1000;

// A C++ version of `module_id` with two files (one with NUL and 0xff
// bytes) and this source hash.
VersionRecord MakeVersion(int64_t module_id, const std::string& hash);
// A run of an invoke of "buy"; module_name "m<module_id>".
RunRecord MakeRun(int64_t module_id, int64_t started_ms, bool success,
                  const std::string& flow_id);
// A level-2 tick log line whose flow id is "f-<message>".
LogRecord MakeLog(int64_t module_id, int64_t ts_ms, const std::string& message);
TriggerRecord MakeTrigger(int64_t module_id, TriggerType type);

void ExpectNotFound(const Status& s);
template <typename T>
void ExpectNotFound(const Result<T>& r) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().ToString();
}

}  // namespace conformance
}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_COMPUTE_STORE_CONFORMANCE_H_
