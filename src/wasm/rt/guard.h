// Host side of the runtime: guarded calls into generated code.
#ifndef TESSERA_WASM_RT_GUARD_H_
#define TESSERA_WASM_RT_GUARD_H_

#include <cstdint>

namespace tessera::wasm::rt {

// Installs the fault handlers once per process. Idempotent, thread-safe.
void InitRuntime();

// Runs fn(arg) with this thread's trap target set. Returns 0 when fn
// returned, or the wasm_rt_trap_t code of the trap that unwound it. Sets up
// the thread's signal stack and call-depth limit on first use. Nested calls
// are allowed (the innermost guard catches).
//
// fn must not hold objects with non-trivial destructors across a point
// where the guest may trap: a trap unwinds with longjmp.
int GuardedCall(void (*fn)(void*), void* arg);

// memory.grow requests refused on this thread so far (past the maximum,
// which the loader sets to the kind's memory cap). Monotonic.
uint64_t FailedGrowsOnThisThread();

// Number of guest memories currently reserved (for tests and metrics).
uint64_t LiveMemoryCount();

}  // namespace tessera::wasm::rt

#endif  // TESSERA_WASM_RT_GUARD_H_
