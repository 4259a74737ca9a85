// tessera's wasm-rt implementation (see wasm-rt.h for the invariants).
//
// Threading: trap state is thread-local (initial-exec TLS, safe to touch
// from the fault handler). The memory reservation table is a fixed array of
// atomics so the fault handler can scan it without locks. Function types
// are registered under a mutex (rare: once per module load).
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "wasm/rt/guard.h"
#include "wasm/rt/wasm-rt.h"

extern "C" {
WASM_RT_TLS uint32_t wasm_rt_call_stack_depth = 0;
WASM_RT_TLS uint32_t wasm_rt_call_stack_limit = 0;
// For modules built by a compiler without thread-local storage (Tiny C).
uint32_t* wasm_rt_call_stack_depth_ptr(void) {
  return &wasm_rt_call_stack_depth;
}
uint32_t* wasm_rt_call_stack_limit_ptr(void) {
  return &wasm_rt_call_stack_limit;
}
}

namespace tessera::wasm::rt {
namespace {

constexpr uint64_t kPageBytes = 65536;
// 4 GiB of addressable memory plus up to 4 GiB of static offset: any
// i32 address + offset lands inside the reservation.
constexpr uint64_t kReservationBytes = 8ull << 30;
constexpr size_t kMaxReservations = 1 << 15;
constexpr size_t kAltStackBytes = 256 * 1024;
// Host frames that may sit below the guest on the stack, and the average
// guest frame assumed when sizing the depth limit. Deeper real frames are
// still caught by the stack-guard check in the fault handler.
constexpr uintptr_t kStackReserveBytes = 256 * 1024;
constexpr uintptr_t kBytesPerFrame = 512;
constexpr uint32_t kMaxDepth = 100000;
// Tables are plain heap arrays (generated code bounds-checks every access);
// growth beyond this fails like any refused grow.
constexpr uint32_t kMaxTableElements = 10000000;

std::atomic<uintptr_t> g_reservations[kMaxReservations];
std::atomic<size_t> g_reservation_high{0};
std::atomic<uint64_t> g_live_memories{0};

struct ThreadState {
  jmp_buf* target;
  uint32_t guest_depth;  // nested guarded calls active on this thread
  bool prepared;
  uintptr_t stack_lo, stack_hi;
  void* alt_stack;
};
__thread __attribute__((tls_model("initial-exec"))) ThreadState t_state;
__thread __attribute__((tls_model("initial-exec"))) uint64_t t_failed_grows;

// Frees the alternate signal stack at thread exit.
struct AltStackOwner {
  ~AltStackOwner() {
    if (t_state.alt_stack) {
      stack_t ss{};
      ss.ss_flags = SS_DISABLE;
      sigaltstack(&ss, nullptr);
      munmap(t_state.alt_stack, kAltStackBytes);
      t_state.alt_stack = nullptr;
    }
  }
};
thread_local AltStackOwner t_alt_owner;

struct sigaction g_prev_segv, g_prev_bus;
std::once_flag g_init_once;
std::atomic<bool> g_initialized{false};

bool InReservation(uintptr_t addr) {
  size_t high = g_reservation_high.load(std::memory_order_acquire);
  for (size_t i = 0; i < high; ++i) {
    uintptr_t base = g_reservations[i].load(std::memory_order_acquire);
    if (base && addr >= base && addr < base + kReservationBytes) return true;
  }
  return false;
}

bool InStackGuard(uintptr_t addr) {
  const ThreadState& ts = t_state;
  if (!ts.stack_lo) return false;
  // Below the usable stack (the guard page and beyond, for large frames).
  return addr < ts.stack_lo + 4096 && addr + (1 << 20) >= ts.stack_lo;
}

void Chain(const struct sigaction& prev, int sig, siginfo_t* info, void* uctx) {
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) {
      prev.sa_sigaction(sig, info, uctx);
      return;
    }
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // Default action: restore it and return; the faulting instruction runs
  // again and the process dies with the original signal (and a core).
  signal(sig, SIG_DFL);
}

void OnFault(int sig, siginfo_t* info, void* uctx) {
  ThreadState& ts = t_state;
  if (ts.guest_depth > 0 && ts.target) {
    uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
    if (InReservation(addr)) {
      longjmp(*ts.target, WASM_RT_TRAP_OOB);
    }
    if (InStackGuard(addr)) {
      longjmp(*ts.target, WASM_RT_TRAP_EXHAUSTION);
    }
  }
  // Not a guest fault: a host bug must still crash loudly.
  Chain(sig == SIGBUS ? g_prev_bus : g_prev_segv, sig, info, uctx);
}

void InstallHandlers() {
  struct sigaction sa {};
  sa.sa_sigaction = OnFault;
  // SA_NODEFER: the handler leaves by longjmp, and setjmp saves no signal
  // mask, so SIGSEGV must not stay blocked after a trap.
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_prev_segv);
  sigaction(SIGBUS, &sa, &g_prev_bus);
  g_initialized.store(true);
}

void PrepareThread() {
  ThreadState& ts = t_state;
  if (ts.prepared) return;
  ts.prepared = true;
  (void)t_alt_owner;  // instantiate the thread-exit hook
  void* alt = mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (alt != MAP_FAILED) {
    stack_t ss{};
    ss.ss_sp = alt;
    ss.ss_size = kAltStackBytes;
    if (sigaltstack(&ss, nullptr) == 0) {
      ts.alt_stack = alt;
    } else {
      munmap(alt, kAltStackBytes);
    }
  }
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      ts.stack_lo = reinterpret_cast<uintptr_t>(addr);
      ts.stack_hi = ts.stack_lo + size;
    }
    pthread_attr_destroy(&attr);
  }
}

uint32_t DepthLimitHere() {
  const ThreadState& ts = t_state;
  uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (!ts.stack_lo || sp <= ts.stack_lo + kStackReserveBytes) {
    return 1000;  // unknown stack: stay conservative
  }
  uintptr_t frames = (sp - ts.stack_lo - kStackReserveBytes) / kBytesPerFrame;
  return frames > kMaxDepth ? kMaxDepth : static_cast<uint32_t>(frames);
}

struct FuncType {
  std::vector<wasm_rt_type_t> params, results;
  bool operator==(const FuncType&) const = default;
};
std::mutex g_types_mu;
std::vector<FuncType>* g_types = new std::vector<FuncType>();  // never freed

template <typename Table, typename Elem>
uint32_t GrowTable(Table* t, uint32_t delta, Elem init) {
  uint32_t old = t->size;
  uint64_t want = uint64_t{old} + delta;
  if (want > t->max_size || want > kMaxTableElements) return UINT32_MAX;
  if (delta == 0) return old;
  auto* data = static_cast<Elem*>(realloc(t->data, want * sizeof(Elem)));
  if (!data) return UINT32_MAX;
  for (uint64_t i = old; i < want; ++i) data[i] = init;
  t->data = data;
  t->size = static_cast<uint32_t>(want);
  return old;
}

}  // namespace

void InitRuntime() { std::call_once(g_init_once, InstallHandlers); }

int GuardedCall(void (*fn)(void*), void* arg) {
  InitRuntime();
  PrepareThread();
  ThreadState& ts = t_state;
  jmp_buf buf;
  jmp_buf* const prev = ts.target;
  const uint32_t depth = wasm_rt_call_stack_depth;
  const uint32_t limit = wasm_rt_call_stack_limit;
  if (ts.guest_depth == 0) wasm_rt_call_stack_limit = depth + DepthLimitHere();
  ts.target = &buf;
  ++ts.guest_depth;
  int code = setjmp(buf);
  if (code == 0) fn(arg);
  --ts.guest_depth;
  ts.target = prev;
  wasm_rt_call_stack_depth = depth;
  wasm_rt_call_stack_limit = limit;
  return code;
}

uint64_t LiveMemoryCount() { return g_live_memories.load(); }

uint64_t FailedGrowsOnThisThread() { return t_failed_grows; }

}  // namespace tessera::wasm::rt

using tessera::wasm::rt::t_state;
namespace rtns = tessera::wasm::rt;

extern "C" {

void wasm_rt_init(void) { rtns::InitRuntime(); }
bool wasm_rt_is_initialized(void) { return rtns::g_initialized.load(); }
void wasm_rt_free(void) {}

void wasm_rt_trap(wasm_rt_trap_t code) {
  if (!t_state.target) {
    fprintf(stderr, "tessera: guest trap (%s) outside a guarded call\n",
            wasm_rt_strerror(code));
    abort();
  }
  longjmp(*t_state.target, code == WASM_RT_TRAP_NONE ? -1 : code);
}

const char* wasm_rt_strerror(wasm_rt_trap_t trap) {
  switch (trap) {
    case WASM_RT_TRAP_NONE:
      return "no error";
    case WASM_RT_TRAP_OOB:
      return "out of bounds memory access";
    case WASM_RT_TRAP_INT_OVERFLOW:
      return "integer overflow";
    case WASM_RT_TRAP_DIV_BY_ZERO:
      return "integer divide by zero";
    case WASM_RT_TRAP_INVALID_CONVERSION:
      return "invalid conversion to integer";
    case WASM_RT_TRAP_UNREACHABLE:
      return "unreachable executed";
    case WASM_RT_TRAP_CALL_INDIRECT:
      return "indirect call to a null or mistyped function";
    case WASM_RT_TRAP_UNCAUGHT_EXCEPTION:
      return "uncaught exception";
    case WASM_RT_TRAP_EXHAUSTION:
      return "call stack exhausted";
    case WASM_RT_TRAP_OOM:
      return "out of memory: could not reserve guest memory";
    case WASM_RT_TRAP_UNDEFINED_ELEMENT:
      return "undefined element";
    case WASM_RT_TRAP_UNINITIALIZED_ELEMENT:
      return "uninitialized element";
    case WASM_RT_TRAP_INDIRECT_TYPE_MISMATCH:
      return "indirect call type mismatch";
    case WASM_RT_TRAP_TABLE_OOB:
      return "out of bounds table access";
  }
  return "unknown trap";
}

uint32_t wasm_rt_register_func_type(uint32_t params, uint32_t results, ...) {
  rtns::FuncType t;
  va_list ap;
  va_start(ap, results);
  for (uint32_t i = 0; i < params; ++i) {
    t.params.push_back(static_cast<wasm_rt_type_t>(va_arg(ap, int)));
  }
  for (uint32_t i = 0; i < results; ++i) {
    t.results.push_back(static_cast<wasm_rt_type_t>(va_arg(ap, int)));
  }
  va_end(ap);
  std::lock_guard<std::mutex> lock(rtns::g_types_mu);
  for (size_t i = 0; i < rtns::g_types->size(); ++i) {
    if ((*rtns::g_types)[i] == t) return static_cast<uint32_t>(i + 1);
  }
  rtns::g_types->push_back(std::move(t));
  return static_cast<uint32_t>(rtns::g_types->size());  // 0 is "null"
}

WASM_RT_UNWIND_TARGET* wasm_rt_get_unwind_target(void) {
  return t_state.target;
}
void wasm_rt_set_unwind_target(WASM_RT_UNWIND_TARGET* target) {
  t_state.target = target;
}

void wasm_rt_allocate_memory(wasm_rt_memory_t* mem, uint32_t initial_pages,
                             uint32_t max_pages) {
  mem->data = nullptr;
  mem->pages = 0;
  mem->size = 0;
  mem->max_pages = max_pages;
  void* base = mmap(nullptr, rtns::kReservationBytes, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) wasm_rt_trap(WASM_RT_TRAP_OOM);
  uint64_t bytes = uint64_t{initial_pages} * rtns::kPageBytes;
  if (bytes && mprotect(base, bytes, PROT_READ | PROT_WRITE) != 0) {
    munmap(base, rtns::kReservationBytes);
    wasm_rt_trap(WASM_RT_TRAP_OOM);
  }
  // Register the reservation so faults inside it become traps.
  uintptr_t b = reinterpret_cast<uintptr_t>(base);
  bool registered = false;
  for (size_t i = 0; i < rtns::kMaxReservations && !registered; ++i) {
    uintptr_t expected = 0;
    if (rtns::g_reservations[i].compare_exchange_strong(expected, b)) {
      size_t high = rtns::g_reservation_high.load();
      while (high < i + 1 &&
             !rtns::g_reservation_high.compare_exchange_weak(high, i + 1)) {
      }
      registered = true;
    }
  }
  if (!registered) {
    munmap(base, rtns::kReservationBytes);
    wasm_rt_trap(WASM_RT_TRAP_OOM);
  }
  rtns::g_live_memories.fetch_add(1);
  mem->data = static_cast<uint8_t*>(base);
  mem->pages = initial_pages;
  mem->size = bytes;
}

uint32_t wasm_rt_grow_memory(wasm_rt_memory_t* mem, uint32_t delta) {
  uint32_t old = mem->pages;
  uint64_t want = uint64_t{old} + delta;
  if (want > mem->max_pages || want > 65536) {
    ++rtns::t_failed_grows;
    return UINT32_MAX;
  }
  if (delta == 0) return old;
  uint64_t old_bytes = uint64_t{old} * rtns::kPageBytes;
  uint64_t new_bytes = want * rtns::kPageBytes;
  if (mprotect(mem->data + old_bytes, new_bytes - old_bytes,
               PROT_READ | PROT_WRITE) != 0) {
    ++rtns::t_failed_grows;
    return UINT32_MAX;
  }
  mem->pages = static_cast<uint32_t>(want);
  mem->size = new_bytes;
  return old;
}

void wasm_rt_free_memory(wasm_rt_memory_t* mem) {
  if (!mem->data) return;
  uintptr_t b = reinterpret_cast<uintptr_t>(mem->data);
  size_t high = rtns::g_reservation_high.load();
  for (size_t i = 0; i < high; ++i) {
    uintptr_t expected = b;
    if (rtns::g_reservations[i].compare_exchange_strong(expected, 0)) break;
  }
  munmap(mem->data, rtns::kReservationBytes);
  rtns::g_live_memories.fetch_sub(1);
  mem->data = nullptr;
  mem->pages = 0;
  mem->size = 0;
}

void wasm_rt_allocate_funcref_table(wasm_rt_funcref_table_t* t,
                                    uint32_t elements, uint32_t max) {
  t->size = elements;
  t->max_size = max;
  t->data = static_cast<wasm_rt_funcref_t*>(
      calloc(elements ? elements : 1, sizeof(wasm_rt_funcref_t)));
  if (!t->data) wasm_rt_trap(WASM_RT_TRAP_OOM);
}
void wasm_rt_free_funcref_table(wasm_rt_funcref_table_t* t) {
  free(t->data);
  t->data = nullptr;
  t->size = 0;
}
void wasm_rt_allocate_externref_table(wasm_rt_externref_table_t* t,
                                      uint32_t elements, uint32_t max) {
  t->size = elements;
  t->max_size = max;
  t->data = static_cast<wasm_rt_externref_t*>(
      calloc(elements ? elements : 1, sizeof(wasm_rt_externref_t)));
  if (!t->data) wasm_rt_trap(WASM_RT_TRAP_OOM);
}
void wasm_rt_free_externref_table(wasm_rt_externref_table_t* t) {
  free(t->data);
  t->data = nullptr;
  t->size = 0;
}

uint32_t wasm_rt_grow_funcref_table(wasm_rt_funcref_table_t* t, uint32_t delta,
                                    wasm_rt_funcref_t init) {
  return rtns::GrowTable(t, delta, init);
}
uint32_t wasm_rt_grow_externref_table(wasm_rt_externref_table_t* t,
                                      uint32_t delta,
                                      wasm_rt_externref_t init) {
  return rtns::GrowTable(t, delta, init);
}

}  // extern "C"
