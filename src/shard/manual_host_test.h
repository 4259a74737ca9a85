// Test-only fixture for the host-level tests (lag_compensation_host_test.cc,
// subscriber_frames_test.cc): a manual ShardHost (no workers) on a
// FakeClock, with test guests registered as kinds and frames going to a
// sink of the test's own (`Sink`), stepped one 20 Hz tick at a time.
#ifndef TESSERA_SHARD_MANUAL_HOST_TEST_H_
#define TESSERA_SHARD_MANUAL_HOST_TEST_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::shard::testing {

inline constexpr int64_t kManualTickUs = 50'000;  // 20 Hz

template <class Sink>
class ManualHostTest : public ::testing::Test {
 protected:
  // Registers each {kind name, test guest} and creates the host; fails the
  // test when a guest is missing.
  void StartHost(
      const std::vector<std::pair<std::string, std::string>>& kinds) {
    for (const auto& [name, guest] : kinds) {
      KindConfig kind;
      kind.name = name;
      auto module = LoadGuest(guest, kind.memory_mb);
      ASSERT_TRUE(module.ok()) << module.status().ToString();
      ASSERT_TRUE(kinds_.Add(kind, *module).ok());
    }
    HostOptions options;
    options.workers = 0;
    options.clock = &clock_;
    host_ = std::make_unique<ShardHost>(&kinds_, &sink_, nullptr, options);
  }

  // Runs `ticks` ticks, the clock advancing one tick before each.
  void Step(int ticks = 1) {
    for (int i = 0; i < ticks; ++i) {
      now_ += kManualTickUs;
      clock_.Set(now_);
      host_->StepForTest(now_);
    }
  }

  FakeClock clock_{0};
  KindRegistry kinds_;
  Sink sink_;
  std::unique_ptr<ShardHost> host_;
  int64_t now_ = 0;
  uint64_t seq_ = 0;
};

}  // namespace tessera::shard::testing

#endif  // TESSERA_SHARD_MANUAL_HOST_TEST_H_
