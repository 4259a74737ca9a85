// A loaded compute module: the tessera_compute_v1 ABI as data
// (ComputeAbiSpec, the loader's checks) and ComputeInstance, one sandboxed
// instance (guest::Sandbox: fuel, watchdog, memory cap, logs) whose entry
// calls mean init / tick / invoke / event. docs/compute-abi.md.
//
// Threading: one thread at a time per instance (the engine serialises a
// module's calls); the watchdog alone touches it from another thread.
#ifndef TESSERA_COMPUTE_MODULE_INSTANCE_H_
#define TESSERA_COMPUTE_MODULE_INSTANCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "compute/host_calls.h"
#include "guest/sandbox.h"
#include "wasm/abi_spec.h"
#include "wasm/loader.h"

namespace tessera::compute {

// Imports: tessera_compute_v1.* (compute_abi.h). Exports: the marker
// tessera_compute_abi_v1, memory, alloc/output, init/tick/invoke, optional
// event and _initialize. Process-wide, never destroyed.
const wasm::AbiSpec& ComputeAbiSpec();
// The loader's checks for a compute module with `memory_mb` of memory.
wasm::CheckOptions ComputeCheckOptions(uint32_t memory_mb);
// Whether `module` imports tessera_compute_v1.data (its entry calls then
// run in a data transaction: docs/compute-engine.md).
bool ImportsData(const wasm::CompiledModule& module);

// Limits of one entry call.
struct CallLimits {
  int64_t fuel = 0;           // budget for this call alone
  uint32_t max_run_ms = 200;  // watchdog deadline
};

// What one entry call did.
struct CallOutcome {
  // The entry returned 0. False: `error` says why (the guest's error text,
  // or the sandbox's failure line when the instance died).
  bool ok = false;
  std::string output;  // invoke: the result bytes; others: empty
  std::string error;   // cut to kMaxErrorBytes as valid UTF-8
  // The instance can no longer be called (trap, fuel, watchdog, memory,
  // ABI violation): the engine drops it; a fresh instance runs init.
  bool instance_dead = false;
  // Why it died, when it did: "fuel", "watchdog", "trap", "memory", "panic",
  // "abi" (the engine adds "load": the code could not be loaded, and
  // "commit": the run's data transaction failed to commit).
  std::string stop_kind;
  int64_t fuel_used = 0;
  int64_t duration_us = 0;  // wall time of the call
  int64_t cpu_us = 0;       // thread CPU time of the call
};

struct InstanceOptions {
  uint32_t memory_mb = 64;
  // Fuel of the module's _initialize (instantiation); 0: 10,000,000.
  int64_t instantiate_fuel = 0;
  uint32_t max_run_ms = 200;
  // The wall clock for duration_us and the CPU clock for cpu_us; null: the
  // real ones.
  const Clock* clock = nullptr;
  const Clock* cpu_clock = nullptr;
};

class ComputeInstance {
 public:
  // Instantiates `module` (loaded with ComputeCheckOptions). `env` as for
  // guest::Sandbox (watchdog, log forwarding). Errors: the sandbox's.
  static Result<std::unique_ptr<ComputeInstance>> Create(
      std::shared_ptr<const wasm::CompiledModule> module,
      const InstanceOptions& options, guest::SandboxEnv env);
  ~ComputeInstance();

  // Each runs one entry call with `calls` serving its host functions.
  CallOutcome Init(HostCalls& calls, const CallLimits& limits);
  CallOutcome Tick(uint32_t dt_ms, HostCalls& calls, const CallLimits& limits);
  // `input` is the invoke JSON {"export","params","callerUserId"}.
  CallOutcome Invoke(std::string_view input, HostCalls& calls,
                     const CallLimits& limits);
  // Fails (ok false, instance alive) when the module has no event export.
  CallOutcome Event(std::string_view input, HostCalls& calls,
                    const CallLimits& limits);
  bool has_event() const;
  // Whether the module imports tessera_compute_v1.data (ImportsData).
  bool imports_data() const;
  bool dead() const;
  size_t memory_bytes() const;

 private:
  ComputeInstance();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_MODULE_INSTANCE_H_
