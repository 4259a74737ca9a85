// A live instance of a compiled module, and guarded calls into it.
//
// Threading: an Instance is used by one thread at a time (the shard's owning
// worker). RequestInterrupt() alone may be called from any thread (the
// watchdog). A call that traps leaves the instance dead: every later call
// fails with the same trap.
#ifndef TESSERA_WASM_INSTANCE_H_
#define TESSERA_WASM_INSTANCE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "wasm/link.h"
#include "wasm/module_info.h"

namespace tessera::wasm {

class CompiledModule;

enum class TrapKind : uint8_t {
  kNone,
  kOutOfBounds,
  kIntOverflow,
  kDivByZero,
  kInvalidConversion,
  kUnreachable,
  kIndirectCall,
  kStackExhausted,
  kFuelExhausted,  // the fuel global went negative
  kInterrupted,    // RequestInterrupt() stopped it (watchdog)
  kOutOfMemory,    // instantiation could not reserve memory
};
const char* TrapKindName(TrapKind kind);

class Instance;

// A host function bound to a function import of an instance: it gets the
// calling instance (to read and write its memory) and the `user` pointer it
// was bound with; arguments and results are raw bits as in Instance::Call.
// Runs on the calling thread inside the guest call. It may trap
// (TrapFromHost), but must then hold no object with a destructor.
using HostCallFn = void (*)(Instance& caller, void* user, const uint64_t* args,
                            uint64_t* results);
struct HostImport {
  HostCallFn fn = nullptr;
  void* user = nullptr;
};

// Ends the running guest call with an out-of-bounds trap (a host function
// handed a pointer outside the caller's memory). Only from inside a
// HostCallFn.
[[noreturn]] void TrapOutOfBoundsFromHost();

// Fuel a new instance starts with unless told otherwise: effectively none.
inline constexpr int64_t kUnlimitedFuel = int64_t{1} << 62;

class Instance {
 public:
  // Instantiates: binds `imports[k]` to function import k (a module loaded
  // for an ABI imports only functions, whose signatures the loader has
  // checked), allocates memory and tables, runs data/elem segments and (if
  // exported) `_initialize` with `initial_fuel`. The `user` pointers must
  // outlive the instance. Errors: kInvalidArgument when the imports do not
  // match the module's (count or kind); kTrap if instantiation or
  // `_initialize` trapped.
  static Result<std::unique_ptr<Instance>> Create(
      std::shared_ptr<const CompiledModule> module,
      std::vector<HostImport> imports = {},
      int64_t initial_fuel = kUnlimitedFuel);
  // Test-only, for modules loaded with CheckOptions::link_any_imports: binds
  // imports[k] to import k (info().import_types), then instantiates and
  // runs the start function, if any, without a fuel limit. Errors: kRefused
  // "incompatible import type" when a binding does not match (nothing ran).
  // When instantiation traps (a data or element segment out of bounds, a
  // trapping start function) the instance is still returned, dead, with
  // last_trap() and last_trap_message() set: element segments applied
  // before the trap may have put its functions into an imported table, so
  // the caller keeps it alive as long as that table.
  static Result<std::unique_ptr<Instance>> CreateLinked(
      std::shared_ptr<const CompiledModule> module,
      std::vector<Extern> imports);

  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  const ModuleInfo& info() const;

  // Calls exported function `func_index` (an index into info().funcs).
  // Arguments and results are raw bit patterns (i32 zero-extended, floats
  // by bits). Returns kTrap with the trap's description if it trapped.
  Status Call(int func_index, std::span<const uint64_t> args,
              std::span<uint64_t> results);
  // Convenience for the common (i32...) -> i32 case.
  Result<uint32_t> CallI32(int func_index, std::span<const uint64_t> args);

  // What the instance keeps of its own state for host functions.
  struct HostContext;
  // A host function bound to one import (the link entry's context).
  struct HostBinding;

  // The export `name` as something another instance can import. Valid
  // while this instance lives. Errors: kNotFound; kInvalidArgument for a
  // function the host cannot call (funcref parameters).
  Result<Extern> Export(const std::string& name) const;

  TrapKind last_trap() const { return last_trap_; }
  // The last trap's message: TrapKindName(last_trap()), or finer for
  // call_indirect ("undefined element", "uninitialized element",
  // "indirect call type mismatch") and tables ("out of bounds table access").
  const std::string& last_trap_message() const { return last_trap_message_; }
  // Test-only: makes a trapped instance callable again, as the WebAssembly
  // spec has it. Shards never do this: a trap leaves a compiled guest's own
  // stack pointer (in linear memory) corrupt.
  void ClearTrap();
  // memory.grow requests this instance made that were refused (it asked
  // for more than its memory cap).
  uint64_t failed_grows() const { return failed_grows_; }
  bool dead() const { return last_trap_ != TrapKind::kNone; }

  // Fuel: the instrumented module traps once it goes negative. Without fuel
  // instrumentation these are no-ops returning 0.
  void SetFuel(int64_t fuel);
  int64_t fuel() const;

  // Makes the running (or next) call trap with kInterrupted at its next
  // function entry or loop header. Any thread.
  void RequestInterrupt();
  void ClearInterrupt();

  // Guest linear memory (empty if the module has none). Valid until the
  // next call into the guest (memory.grow may move nothing, but the size
  // changes).
  std::span<uint8_t> memory();
  // Bounds-checked view of guest bytes [ptr, ptr+len).
  Result<std::string_view> Read(uint32_t ptr, uint32_t len);
  // Bounds-checked write.
  Status Write(uint32_t ptr, std::span<const uint8_t> bytes);

 private:
  struct LinkState;

  Instance();
  // Fills link_ with `imports` (one entry each) and instantiates into
  // raw_; returns the wasm-rt trap code (0: none).
  int Link(std::vector<Extern> imports);
  // Allocates the zeroed wasm2c instance struct.
  Status AllocateRaw();
  // Records the trap with wasm-rt code `code` and returns it as a status.
  Status Trapped(int code);

  std::shared_ptr<const CompiledModule> module_;
  void* raw_ = nullptr;  // the wasm2c instance struct
  std::unique_ptr<HostContext> host_;
  std::unique_ptr<LinkState> link_;                     // modules with imports
  std::vector<std::unique_ptr<HostBinding>> bindings_;  // Create's imports
  TrapKind last_trap_ = TrapKind::kNone;
  std::string last_trap_message_;
  uint64_t failed_grows_ = 0;
};

}  // namespace tessera::wasm

#endif  // TESSERA_WASM_INSTANCE_H_
