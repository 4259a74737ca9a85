#include "compute/module_instance.h"

#include <cstring>
#include <utility>

#include "common/text.h"
#include "compute/compute_abi_host.h"
#include "guest/host_functions.h"
#include "tessera/compute_abi.h"
#include "wasm/compiled_module.h"

namespace tessera::compute {
namespace {

namespace abi = compute_abi;
using internal::BytesSig;
using internal::CallState;
using internal::InitSig;
using internal::TickSig;

constexpr int64_t kDefaultInstantiateFuel = 10'000'000;

// "fuel", "watchdog", ... from the sandbox's failure line.
std::string StopKind(std::string_view failure) {
  struct Prefix {
    const char* prefix;
    const char* kind;
  };
  static constexpr Prefix kPrefixes[] = {
      {"fuel exhausted:", "fuel"}, {"watchdog:", "watchdog"},
      {"memory:", "memory"},       {"panic:", "panic"},
      {"trap:", "trap"},
  };
  for (const Prefix& p : kPrefixes) {
    if (failure.substr(0, std::strlen(p.prefix)) == p.prefix) return p.kind;
  }
  return "abi";
}

}  // namespace

struct ComputeInstance::Impl {
  CallState state;  // declared first: the sandbox points at it
  std::unique_ptr<guest::Sandbox> sandbox;
  const Clock* clock = nullptr;
  const Clock* cpu_clock = nullptr;
  int init = -1, tick = -1, invoke = -1, event = -1;
  bool data = false;

  CallOutcome Run(int func, const char* what, std::string_view input,
                  bool has_input, const uint64_t* extra_arg, HostCalls& calls,
                  const CallLimits& limits);
};

ComputeInstance::ComputeInstance() : impl_(std::make_unique<Impl>()) {}
ComputeInstance::~ComputeInstance() = default;

Result<std::unique_ptr<ComputeInstance>> ComputeInstance::Create(
    std::shared_ptr<const wasm::CompiledModule> module,
    const InstanceOptions& options, guest::SandboxEnv env) {
  if (module == nullptr) {
    return Status(StatusCode::kInvalidArgument, "no compiled module");
  }
  guest::SandboxOptions so;
  so.import_module = abi::kImportModule;
  so.alloc_export = abi::kExportAlloc;
  so.output_ptr_export = abi::kExportOutputPtr;
  so.output_len_export = abi::kExportOutputLen;
  so.max_run_ms = options.max_run_ms;
  so.memory_mb = options.memory_mb;
  so.panic_level = abi::kLogPanic;
  so.max_log_line_bytes = abi::kMaxErrorBytes;
  if (options.cpu_clock != nullptr) env.cpu_clock = options.cpu_clock;
  const Clock* cpu_clock =
      env.cpu_clock != nullptr ? env.cpu_clock : ThreadCpuClock::Get();
  const int64_t fuel = options.instantiate_fuel > 0 ? options.instantiate_fuel
                                                    : kDefaultInstantiateFuel;
  auto sandbox = guest::Sandbox::Create(
      module, internal::ComputeHostFunctions(), std::move(so), std::move(env),
      fuel, "instantiation");
  if (!sandbox.ok()) return sandbox.status();

  std::unique_ptr<ComputeInstance> instance(new ComputeInstance());
  Impl& impl = *instance->impl_;
  impl.data = ImportsData(*module);
  impl.sandbox = std::move(sandbox).value();
  impl.clock = options.clock != nullptr ? options.clock : RealClock::Get();
  impl.cpu_clock = cpu_clock;
  impl.sandbox->set_owner(&impl.state, &CallState::OnLog);
  guest::Sandbox& sb = *impl.sandbox;
  impl.init = sb.FindFunc(abi::kExportInit, InitSig());
  impl.tick = sb.FindFunc(abi::kExportTick, TickSig());
  impl.invoke = sb.FindFunc(abi::kExportInvoke, BytesSig());
  impl.event = sb.FindFunc(abi::kExportEvent, BytesSig());
  const std::pair<int, const char*> required[] = {
      {impl.init, abi::kExportInit},
      {impl.tick, abi::kExportTick},
      {impl.invoke, abi::kExportInvoke},
  };
  for (const auto& [index, name] : required) {
    if (index < 0) {
      return Status(StatusCode::kRefused,
                    std::string("abi: the module exports no ") + name +
                        " of the compute ABI (load it with "
                        "ComputeCheckOptions)");
    }
  }
  return instance;
}

CallOutcome ComputeInstance::Impl::Run(int func, const char* what,
                                       std::string_view input, bool has_input,
                                       const uint64_t* extra_arg,
                                       HostCalls& host,
                                       const CallLimits& limits) {
  CallOutcome out;
  guest::Sandbox& sb = *sandbox;
  if (sb.failed()) {
    out.instance_dead = true;
    out.stop_kind = StopKind(sb.failure());
    out.error = SafeUtf8(sb.failure(), abi::kMaxErrorBytes);
    return out;
  }
  const int64_t wall_start = clock->NowUs();
  const int64_t cpu_start = cpu_clock->NowUs();
  const int64_t fuel_start = sb.fuel_used();
  state.Begin(&host);
  sb.set_max_run_ms(limits.max_run_ms);
  sb.StartBudget(limits.fuel, std::string(what));

  Result<uint32_t> code = 0u;
  if (has_input) {
    Result<guest::GuestBytes> arg = sb.Pass(input, what);
    if (arg.ok()) {
      const uint64_t args[] = {arg->ptr, arg->len};
      code = sb.Call(func, args, what);
    } else {
      code = arg.status();
    }
  } else if (extra_arg != nullptr) {
    code = sb.Call(func, std::span<const uint64_t>(extra_arg, 1), what);
  } else {
    code = sb.Call(func, {}, what);
  }
  // The output holds an invoke's result or a failed entry's error text.
  Result<std::string> output = std::string();
  if (code.ok() && (*code != 0 || func == invoke)) {
    output = sb.ReadOutput(what, abi::kMaxResultBytes);
  }
  state.Begin(nullptr);
  out.fuel_used = sb.fuel_used() - fuel_start;
  out.duration_us = clock->NowUs() - wall_start;
  out.cpu_us = cpu_clock->NowUs() - cpu_start;

  if (sb.failed()) {
    out.instance_dead = true;
    out.stop_kind = StopKind(sb.failure());
    out.error = SafeUtf8(sb.failure(), abi::kMaxErrorBytes);
    return out;
  }
  if (!code.ok() || !output.ok()) {
    // Pass's refusal of an oversize argument: the instance lives on.
    out.error = SafeUtf8(
        !code.ok() ? code.status().message() : output.status().message(),
        abi::kMaxErrorBytes);
    return out;
  }
  if (*code == 0) {
    out.ok = true;
    if (func == invoke) out.output = std::move(output).value();
    return out;
  }
  out.error = SafeUtf8(*output, abi::kMaxErrorBytes);
  if (out.error.empty()) {
    out.error = std::string(what) + " failed with code " +
                std::to_string(static_cast<int32_t>(*code));
  }
  return out;
}

CallOutcome ComputeInstance::Init(HostCalls& calls, const CallLimits& limits) {
  return impl_->Run(impl_->init, abi::kExportInit, {}, false, nullptr, calls,
                    limits);
}

CallOutcome ComputeInstance::Tick(uint32_t dt_ms, HostCalls& calls,
                                  const CallLimits& limits) {
  const uint64_t arg = dt_ms;
  return impl_->Run(impl_->tick, abi::kExportTick, {}, false, &arg, calls,
                    limits);
}

CallOutcome ComputeInstance::Invoke(std::string_view input, HostCalls& calls,
                                    const CallLimits& limits) {
  if (input.size() > abi::kMaxInvokeInputBytes) {
    CallOutcome out;
    out.error = "the invoke input is " + std::to_string(input.size()) +
                " bytes, over the limit of " +
                std::to_string(abi::kMaxInvokeInputBytes);
    return out;
  }
  return impl_->Run(impl_->invoke, abi::kExportInvoke, input, true, nullptr,
                    calls, limits);
}

CallOutcome ComputeInstance::Event(std::string_view input, HostCalls& calls,
                                   const CallLimits& limits) {
  if (impl_->event < 0) {
    CallOutcome out;
    out.error = std::string("the module exports no ") + abi::kExportEvent;
    return out;
  }
  if (input.size() > abi::kMaxInvokeInputBytes) {
    CallOutcome out;
    out.error = "the event input is " + std::to_string(input.size()) +
                " bytes, over the limit of " +
                std::to_string(abi::kMaxInvokeInputBytes);
    return out;
  }
  return impl_->Run(impl_->event, abi::kExportEvent, input, true, nullptr,
                    calls, limits);
}

bool ComputeInstance::has_event() const { return impl_->event >= 0; }
bool ComputeInstance::imports_data() const { return impl_->data; }

bool ImportsData(const wasm::CompiledModule& module) {
  const std::string name =
      std::string(abi::kImportModule) + "." + abi::kImportData;
  for (const std::string& import : module.info.imports) {
    if (import == name) return true;
  }
  return false;
}
bool ComputeInstance::dead() const { return impl_->sandbox->failed(); }
size_t ComputeInstance::memory_bytes() const {
  return impl_->sandbox->memory_bytes();
}

}  // namespace tessera::compute