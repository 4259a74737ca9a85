#include "guest/sandbox.h"

#include <cstdio>
#include <limits>
#include <utility>

#include "common/text.h"
#include "wasm/compiled_module.h"

namespace tessera::guest {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

std::string FormatMiB(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", static_cast<double>(bytes) / kMiB);
  return buf;
}

const wasm::FuncSig kLogSig{
    {wasm::ValType::kI32, wasm::ValType::kI32, wasm::ValType::kI32}, {}};

}  // namespace

HostFunction Sandbox::LogFunction(std::string name) {
  return HostFunction{std::move(name), kLogSig, &Sandbox::Log};
}

// No C++ object with a destructor is alive in this frame when it traps.
void Sandbox::Log(wasm::Instance& caller, void* user, const uint64_t* args,
                  uint64_t*) {
  const uint32_t level = static_cast<uint32_t>(args[0]);
  const uint32_t ptr = static_cast<uint32_t>(args[1]);
  const uint32_t len = static_cast<uint32_t>(args[2]);
  std::span<uint8_t> mem = caller.memory();
  if (uint64_t{ptr} + len > mem.size()) wasm::TrapOutOfBoundsFromHost();
  static_cast<Sandbox*>(user)->AddLog(
      static_cast<int>(level),
      std::string_view(reinterpret_cast<const char*>(mem.data()) + ptr, len));
}

void Sandbox::AddLog(int level, std::string_view text) {
  std::string line = SafeUtf8(text, options_.max_log_line_bytes);
  if (env_.forward_log) env_.forward_log(level, line);
  if (owner_log_ != nullptr) owner_log_(owner_, level, line);
  if (level >= options_.panic_level) {
    last_panic_ = line;
    panic_in_call_ = line;
  }
  if (env_.log_lines == 0) return;
  if (lines_.size() >= env_.log_lines) lines_.pop_front();
  lines_.push_back(LogLine{level, std::move(line)});
}

Sandbox::Sandbox(SandboxOptions options, SandboxEnv env)
    : options_(std::move(options)),
      env_(std::move(env)),
      max_run_ms_(options_.max_run_ms) {}

Sandbox::~Sandbox() = default;

Result<std::unique_ptr<Sandbox>> Sandbox::Create(
    std::shared_ptr<const wasm::CompiledModule> module,
    const HostFunctionTable& host_functions, SandboxOptions options,
    SandboxEnv env, int64_t fuel, std::string what) {
  std::unique_ptr<Sandbox> sb(new Sandbox(std::move(options), std::move(env)));
  sb->module_ = module;
  sb->info_ = &module->info;
  Result<std::vector<wasm::HostImport>> imports =
      host_functions.Bind(module->info, sb->options_.import_module, sb.get());
  if (!imports.ok()) return imports.status();
  sb->StartBudget(fuel, std::move(what));
  // `_initialize` runs before the instance exists for the watchdog to arm
  // against; fuel bounds it.
  auto instance = wasm::Instance::Create(std::move(module),
                                         std::move(imports).value(), fuel);
  if (!instance.ok()) {
    const Status& st = instance.status();
    std::string line;
    if (!sb->panic_in_call_.empty()) {
      line = "panic: " + sb->panic_in_call_;
    } else if (st.code() == StatusCode::kResourceExhausted) {
      line = "memory: " + st.message();
    } else if (st.code() == StatusCode::kTrap) {
      line = "trap: " + st.message() + " while instantiating";
    } else {
      line = st.message();
    }
    return Status(st.code(), line);
  }
  sb->instance_ = std::move(instance).value();
  // Without fuel instrumentation SetFuel/fuel() are no-ops returning 0.
  const int64_t left = sb->instance_->fuel();
  sb->instance_->SetFuel(12345);
  sb->fuel_metered_ = sb->instance_->fuel() == 12345;
  if (sb->fuel_metered_) {
    sb->fuel_used_ += fuel - left;
    sb->budget_left_ = left;
  }
  const wasm::FuncSig i32_of_i32{{wasm::ValType::kI32}, {wasm::ValType::kI32}};
  const wasm::FuncSig i32_of_none{{}, {wasm::ValType::kI32}};
  struct Buffer {
    const std::string& name;
    const wasm::FuncSig& sig;
    int* index;
  };
  const Buffer buffers[] = {
      {sb->options_.alloc_export, i32_of_i32, &sb->alloc_},
      {sb->options_.output_ptr_export, i32_of_none, &sb->output_ptr_},
      {sb->options_.output_len_export, i32_of_none, &sb->output_len_},
  };
  for (const Buffer& b : buffers) {
    *b.index = sb->FindFunc(b.name, b.sig);
    if (*b.index < 0) {
      return Status(StatusCode::kRefused, "abi: the module exports no " +
                                              b.name + " " +
                                              wasm::SigToString(b.sig));
    }
  }
  return sb;
}

void Sandbox::StartBudget(int64_t fuel, std::string what) {
  budget_ = fuel;
  budget_left_ = fuel;
  budget_what_ = std::move(what);
}

int Sandbox::FindFunc(std::string_view name, const wasm::FuncSig& sig) const {
  int index = info_->FindFunc(std::string(name));
  if (index < 0 || !(info_->funcs[static_cast<size_t>(index)].sig == sig)) {
    return -1;
  }
  return index;
}

Result<uint32_t> Sandbox::Call(int func, std::span<const uint64_t> args,
                               const char* what) {
  if (!instance_) return StoppedStatus();
  wasm::Instance& inst = *instance_;
  inst.ClearInterrupt();
  // A budget already overdrawn still lets the call start with nothing, so
  // its first instrumented block traps.
  const int64_t fuel = budget_left_ > 0 ? budget_left_ : 0;
  if (fuel_metered_) inst.SetFuel(fuel);
  panic_in_call_.clear();

  Watchdog::Token token = 0;
  if (env_.watchdog != nullptr) {
    int64_t deadline = env_.watchdog->clock()->NowUs() +
                       static_cast<int64_t>(max_run_ms_) * 1000;
    token = env_.watchdog->Arm(&inst, deadline);
  }
  uint64_t result = 0;
  Status st = inst.Call(func, args, std::span<uint64_t>(&result, 1));
  if (env_.watchdog != nullptr) env_.watchdog->Disarm(token);
  if (fuel_metered_) {
    fuel_used_ += fuel - inst.fuel();
    budget_left_ = inst.fuel();
  }
  if (st.ok()) return static_cast<uint32_t>(result);

  wasm::TrapKind kind = inst.last_trap();
  if (kind == wasm::TrapKind::kNone) {
    return Fail(StatusCode::kInternal, std::string("host: calling ") + what +
                                           " failed: " + st.ToString());
  }
  StatusCode code = StatusCode::kTrap;
  if (kind == wasm::TrapKind::kFuelExhausted ||
      kind == wasm::TrapKind::kOutOfMemory) {
    code = StatusCode::kResourceExhausted;
  } else if (kind == wasm::TrapKind::kInterrupted) {
    code = StatusCode::kDeadlineExceeded;
  }
  return Fail(code, DescribeTrap(kind, st, what));
}

std::string Sandbox::DescribeTrap(wasm::TrapKind kind,
                                  const Status& call_status,
                                  const char* what) const {
  switch (kind) {
    case wasm::TrapKind::kFuelExhausted:
      return "fuel exhausted: " + budget_what_ + " used more than " +
             std::to_string(budget_) + " fuel";
    case wasm::TrapKind::kInterrupted:
      return "watchdog: call ran longer than maxRunMs " +
             std::to_string(max_run_ms_) + " ms (" + what + ")";
    case wasm::TrapKind::kOutOfMemory:
      return "memory: " + call_status.message();
    default:
      break;
  }
  std::string line;
  if (!panic_in_call_.empty()) {
    line = "panic: " + panic_in_call_;
  } else {
    line = "trap: " + call_status.message() + " in " + what;
  }
  return MemoryNote() + line;
}

std::string Sandbox::MemoryNote() const {
  if (!instance_ || instance_->failed_grows() == 0) return "";
  return "memory: the module asked to grow its memory past memoryMb " +
         std::to_string(options_.memory_mb) + " (it had " +
         FormatMiB(instance_->memory().size()) + " MiB); ";
}

Status Sandbox::Fail(StatusCode code, std::string line) {
  if (failure_.empty()) failure_ = std::move(line);
  // A trapped instance is dead; release its memory now.
  instance_.reset();
  return Status(code, failure_);
}

Status Sandbox::StoppedStatus() const {
  return Status(StatusCode::kFailedPrecondition,
                failed() ? failure_ : "the sandbox is not running");
}

Result<GuestBytes> Sandbox::Pass(std::string_view bytes, const char* what) {
  if (bytes.empty()) return GuestBytes{};
  if (bytes.size() > std::numeric_limits<uint32_t>::max()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string("argument of ") + what + " is too large");
  }
  const uint64_t len = bytes.size();
  const uint64_t args[] = {len};
  const std::string& alloc_what = options_.alloc_export;
  Result<uint32_t> ptr = Call(alloc_, args, alloc_what.c_str());
  if (!ptr.ok()) return ptr.status();
  if (*ptr == 0) {
    return Fail(StatusCode::kResourceExhausted,
                MemoryNote() + "memory: " + alloc_what + "(" +
                    std::to_string(len) + ") returned null (for " + what + ")");
  }
  Status st = instance_->Write(
      *ptr, std::span<const uint8_t>(
                reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (!st.ok()) {
    return Fail(StatusCode::kFailedPrecondition,
                "abi: " + alloc_what + "(" + std::to_string(len) +
                    ") returned " + std::to_string(*ptr) +
                    ", outside guest memory of " +
                    std::to_string(instance_->memory().size()) + " bytes");
  }
  return GuestBytes{*ptr, static_cast<uint32_t>(len)};
}

Result<std::string> Sandbox::ReadOutput(const char* what, size_t max_bytes) {
  Result<uint32_t> ptr =
      Call(output_ptr_, {}, options_.output_ptr_export.c_str());
  if (!ptr.ok()) return ptr.status();
  Result<uint32_t> len =
      Call(output_len_, {}, options_.output_len_export.c_str());
  if (!len.ok()) return len.status();
  Result<std::string_view> bytes = instance_->Read(*ptr, *len);
  if (!bytes.ok()) {
    return Fail(StatusCode::kFailedPrecondition,
                std::string("abi: output of ") + what + " at (" +
                    std::to_string(*ptr) + ", " + std::to_string(*len) +
                    ") lies outside guest memory of " +
                    std::to_string(instance_->memory().size()) + " bytes");
  }
  if (bytes->size() > max_bytes) {
    return Fail(StatusCode::kResourceExhausted,
                std::string("limit: the output of ") + what + " is " +
                    std::to_string(bytes->size()) + " bytes, over the cap of " +
                    std::to_string(max_bytes) + " bytes");
  }
  return std::string(*bytes);
}

size_t Sandbox::memory_bytes() const {
  return instance_ ? instance_->memory().size() : 0;
}

std::vector<LogLine> Sandbox::recent_log() const {
  return std::vector<LogLine>(lines_.begin(), lines_.end());
}

}  // namespace tessera::guest
