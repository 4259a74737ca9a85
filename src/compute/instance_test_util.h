// Test-only helpers of compute_instance_test: a recording HostCalls double
// (the seam the engine implements), limits and instance construction over
// the compute test modules (compute_test_guests.h).
#ifndef TESSERA_COMPUTE_INSTANCE_TEST_UTIL_H_
#define TESSERA_COMPUTE_INSTANCE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compute/compute_test_guests.h"
#include "compute/module_instance.h"
#include "tessera/compute_abi.h"

namespace tessera::compute::test {

namespace abi = compute_abi;
using json = nlohmann::json;

// Records every host call; answers from its fields.
class RecordingCalls : public HostCalls {
 public:
  struct Emit {
    std::string kind;  // "event", "channel", "spatial"
    std::string target;
    std::string payload;
    float x = 0, y = 0, radius = 0;
  };

  int64_t NowMs() override { return now_ms; }
  void FillRandom(std::span<uint8_t> out) override {
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<uint8_t>(i + 1);
    }
    ++random_calls;
  }
  HostCallResult GetState(std::string* bytes) override {
    ++state_gets;
    if (!state) {
      return HostCallResult::Error(abi::kErrNoState, "no state blob yet");
    }
    *bytes = *state;
    return HostCallResult::Ok();
  }
  HostCallResult SetState(std::string_view bytes) override {
    ++state_sets;
    if (set_result.code < 0) return set_result;
    state = std::string(bytes);
    return HostCallResult::Ok();
  }
  HostCallResult EmitEvent(std::string_view name,
                           std::string_view payload) override {
    emits.push_back({"event", std::string(name), std::string(payload)});
    return emit_result;
  }
  HostCallResult EmitChannel(std::string_view channel,
                             std::string_view payload) override {
    emits.push_back({"channel", std::string(channel), std::string(payload)});
    return emit_result;
  }
  HostCallResult EmitSpatial(std::string_view shard, float x, float y,
                             float radius, std::string_view payload) override {
    emits.push_back(
        {"spatial", std::string(shard), std::string(payload), x, y, radius});
    return emit_result;
  }
  void Log(int level, std::string_view text) override {
    logs.push_back(std::to_string(level) + " " + std::string(text));
  }

  int64_t now_ms = 1'700'000'000'123;
  std::optional<std::string> state;
  HostCallResult set_result = HostCallResult::Ok();
  HostCallResult emit_result = HostCallResult::Ok(3);
  int state_gets = 0, state_sets = 0, random_calls = 0;
  std::vector<Emit> emits;
  std::vector<std::string> logs;
};

inline constexpr CallLimits kLimits{100'000'000, 5'000};

inline std::unique_ptr<ComputeInstance> NewInstance(
    std::string_view name, InstanceOptions options = {},
    guest::SandboxEnv env = {}) {
  auto module = testing::LoadComputeGuest(name, options.memory_mb);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  auto instance = ComputeInstance::Create(*module, options, std::move(env));
  EXPECT_TRUE(instance.ok()) << instance.status().ToString();
  return instance.ok() ? std::move(*instance) : nullptr;
}

inline std::string InvokeInput(std::string_view export_name,
                               json params = json(),
                               std::string_view caller = "") {
  return json{{"export", export_name},
              {"params", params.is_null() ? json::object() : params},
              {"callerUserId", caller}}
      .dump();
}

// Runs invoke `export_name` of the emit module and parses its JSON report.
inline json EmitCall(ComputeInstance& inst, RecordingCalls& calls,
                     std::string_view export_name, json params = json()) {
  CallOutcome r = inst.Invoke(InvokeInput(export_name, params), calls, kLimits);
  EXPECT_TRUE(r.ok) << r.error;
  return r.ok ? json::parse(r.output) : json();
}

}  // namespace tessera::compute::test

#endif  // TESSERA_COMPUTE_INSTANCE_TEST_UTIL_H_
