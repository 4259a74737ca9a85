/*
 * tessera's implementation of the wasm-rt API that wasm2c-generated code is
 * compiled against. It replaces wabt's libwasm-rt-impl, whose trap state is
 * process-global (see ARCHITECTURE.md §1).
 *
 * Invariants:
 *  - Trap state (unwind target, trap code, call depth) is per thread.
 *  - Linear memories are 8 GiB reservations with only the accessible pages
 *    readable/writable, so generated code needs no bounds checks; a fault
 *    inside a reservation while the thread runs guest code becomes an
 *    out-of-bounds trap; any other fault crashes the process as usual.
 *  - Call depth is counted (WASM_RT_USE_STACK_DEPTH_COUNT=1) against a
 *    per-thread limit sized from the thread's stack.
 *
 * This header is compiled both into the host (C++) and, embedded as text,
 * into every generated module (C).
 */
#ifndef TESSERA_WASM_RT_H_
#define TESSERA_WASM_RT_H_

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__TINYC__)
/*
 * Tiny C (quick development builds, wasm/loader.cc): it compiles a module
 * some thirty times faster than GCC at -O0 and does no optimisation at all,
 * so nothing is folded or reordered. It lacks a few GCC builtins and
 * thread-local storage; the shims below stand in, with the same results.
 */
#define UNLIKELY(x) (x)
#define LIKELY(x) (x)
#define wasm_rt_memcpy memcpy
#define wasm_rt_unreachable abort
static inline int tessera_clz32(uint32_t x) {
  int n = 0;
  while (!(x & 0x80000000u)) { x <<= 1; ++n; }
  return n;
}
static inline int tessera_clz64(uint64_t x) {
  int n = 0;
  while (!(x & 0x8000000000000000ull)) { x <<= 1; ++n; }
  return n;
}
static inline int tessera_ctz32(uint32_t x) {
  int n = 0;
  while (!(x & 1u)) { x >>= 1; ++n; }
  return n;
}
static inline int tessera_ctz64(uint64_t x) {
  int n = 0;
  while (!(x & 1ull)) { x >>= 1; ++n; }
  return n;
}
static inline int tessera_popcount64(uint64_t x) {
  int n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
}
/* Tiny C negates as -0.0 - x, which quiets a NaN and keeps its sign;
 * WebAssembly's neg flips the sign bit only. */
static inline float tessera_fneg32(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  b ^= 0x80000000u;
  memcpy(&x, &b, 4);
  return x;
}
static inline double tessera_fneg64(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  b ^= 0x8000000000000000ull;
  memcpy(&x, &b, 8);
  return x;
}
#define TESSERA_FNEG(x) \
  _Generic((x), float: tessera_fneg32, default: tessera_fneg64)(x)
/* wasm2c calls these only for nonzero arguments. */
#define __builtin_clz(x) tessera_clz32(x)
#define __builtin_clzll(x) tessera_clz64(x)
#define __builtin_ctz(x) tessera_ctz32(x)
#define __builtin_ctzll(x) tessera_ctz64(x)
#define __builtin_popcount(x) tessera_popcount64((uint32_t)(x))
#define __builtin_popcountll(x) tessera_popcount64(x)
#else
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define wasm_rt_memcpy __builtin_memcpy
#define wasm_rt_unreachable __builtin_unreachable
#define TESSERA_FNEG(x) (-(x))
#endif

#define WASM_RT_SKIP_SIGNAL_RECOVERY 0
#define WASM_RT_SIGNAL_RECOVERY_SUPPORTED 1
#define WASM_RT_MEMCHECK_SIGNAL_HANDLER 1
#define WASM_RT_USE_STACK_DEPTH_COUNT 1
#define WASM_RT_MERGED_OOB_AND_EXHAUSTION_TRAPS 0
#define WASM_RT_NO_RETURN __attribute__((noreturn))

/* Per-thread call depth and its limit (set by the host per thread). */
#define WASM_RT_TLS __thread __attribute__((tls_model("initial-exec")))
#if defined(__TINYC__)
/* No __thread in Tiny C: reach this thread's counters through the host. */
uint32_t* wasm_rt_call_stack_depth_ptr(void);
uint32_t* wasm_rt_call_stack_limit_ptr(void);
#define wasm_rt_call_stack_depth (*wasm_rt_call_stack_depth_ptr())
#define WASM_RT_MAX_CALL_STACK_DEPTH (*wasm_rt_call_stack_limit_ptr())
#else
extern WASM_RT_TLS uint32_t wasm_rt_call_stack_depth;
extern WASM_RT_TLS uint32_t wasm_rt_call_stack_limit;
#define WASM_RT_MAX_CALL_STACK_DEPTH wasm_rt_call_stack_limit
#endif
uint32_t* wasm_rt_call_stack_depth_ptr(void);
uint32_t* wasm_rt_call_stack_limit_ptr(void);

typedef enum {
  WASM_RT_TRAP_NONE,
  WASM_RT_TRAP_OOB,
  WASM_RT_TRAP_INT_OVERFLOW,
  WASM_RT_TRAP_DIV_BY_ZERO,
  WASM_RT_TRAP_INVALID_CONVERSION,
  WASM_RT_TRAP_UNREACHABLE,
  WASM_RT_TRAP_CALL_INDIRECT,
  WASM_RT_TRAP_UNCAUGHT_EXCEPTION,
  WASM_RT_TRAP_EXHAUSTION,
  /* tessera: instantiation could not reserve guest memory. */
  WASM_RT_TRAP_OOM,
  /* tessera: the three ways call_indirect fails, told apart (codegen
   * rewrites wasm2c's CALL_INDIRECT, which raises only CALL_INDIRECT). */
  WASM_RT_TRAP_UNDEFINED_ELEMENT,     /* index past the table's end */
  WASM_RT_TRAP_UNINITIALIZED_ELEMENT, /* null table entry */
  WASM_RT_TRAP_INDIRECT_TYPE_MISMATCH,
  /* tessera: table access out of bounds (table.get/set/fill/copy/init and
   * element segments), apart from memory's OOB. */
  WASM_RT_TRAP_TABLE_OOB,
} wasm_rt_trap_t;

typedef enum {
  WASM_RT_I32,
  WASM_RT_I64,
  WASM_RT_F32,
  WASM_RT_F64,
  WASM_RT_FUNCREF,
  WASM_RT_EXTERNREF,
} wasm_rt_type_t;

typedef void (*wasm_rt_function_ptr_t)(void);

typedef struct {
  uint32_t func_type;
  wasm_rt_function_ptr_t func;
  void* module_instance;
} wasm_rt_funcref_t;

static const wasm_rt_funcref_t wasm_rt_funcref_null_value = {0, NULL, NULL};

typedef void* wasm_rt_externref_t;
static const wasm_rt_externref_t wasm_rt_externref_null_value = NULL;

typedef struct {
  uint8_t* data;
  uint32_t pages, max_pages;
  /* Bytes accessible. 64-bit: a memory of 65536 pages is 4 GiB. */
  uint64_t size;
} wasm_rt_memory_t;

typedef struct {
  wasm_rt_funcref_t* data;
  uint32_t max_size;
  uint32_t size;
} wasm_rt_funcref_table_t;

typedef struct {
  wasm_rt_externref_t* data;
  uint32_t max_size;
  uint32_t size;
} wasm_rt_externref_table_t;

void wasm_rt_init(void);
bool wasm_rt_is_initialized(void);
void wasm_rt_free(void);

/* Unwinds to the innermost guarded call on this thread. */
WASM_RT_NO_RETURN void wasm_rt_trap(wasm_rt_trap_t);
const char* wasm_rt_strerror(wasm_rt_trap_t trap);

/* Thread-safe; equal signatures get equal indices. */
uint32_t wasm_rt_register_func_type(uint32_t params, uint32_t results, ...);

#define WASM_RT_UNWIND_TARGET jmp_buf
WASM_RT_UNWIND_TARGET* wasm_rt_get_unwind_target(void);
void wasm_rt_set_unwind_target(WASM_RT_UNWIND_TARGET* target);
/* No signal mask is saved: the fault handler runs with SA_NODEFER. */
#define WASM_RT_SETJMP(buf) setjmp(buf)
#define wasm_rt_try(target) WASM_RT_SETJMP(target)

void wasm_rt_allocate_memory(wasm_rt_memory_t*, uint32_t initial_pages,
                             uint32_t max_pages);
/* Returns the old page count, or (uint32_t)-1 when it cannot grow. */
uint32_t wasm_rt_grow_memory(wasm_rt_memory_t*, uint32_t pages);
void wasm_rt_free_memory(wasm_rt_memory_t*);

void wasm_rt_allocate_funcref_table(wasm_rt_funcref_table_t*,
                                    uint32_t elements, uint32_t max_elements);
void wasm_rt_free_funcref_table(wasm_rt_funcref_table_t*);
void wasm_rt_allocate_externref_table(wasm_rt_externref_table_t*,
                                      uint32_t elements,
                                      uint32_t max_elements);
void wasm_rt_free_externref_table(wasm_rt_externref_table_t*);
uint32_t wasm_rt_grow_funcref_table(wasm_rt_funcref_table_t*, uint32_t delta,
                                    wasm_rt_funcref_t init);
uint32_t wasm_rt_grow_externref_table(wasm_rt_externref_table_t*,
                                      uint32_t delta,
                                      wasm_rt_externref_t init);

/*
 * tessera linking (every module with imports). Such modules see all
 * their imports as the single import module `tessera_link`, import k named
 * `i<k>`; the glue implements each one from entries[k]: a function import
 * calls fn(ctx, args, results) with raw bits; a global, memory or table
 * import is the storage at ptr. `self` points at the struct itself: wasm2c
 * 1.0.32 hands an imported function placed in a table the address of the
 * instance field that holds this pointer rather than the pointer, and the
 * glue's `c->self` reads the right struct either way.
 */
typedef void (*tessera_host_fn_t)(void* ctx, const uint64_t* args,
                                  uint64_t* results);
typedef struct {
  tessera_host_fn_t fn;
  void* ctx;
  void* ptr;
} tessera_link_entry_t;
struct Z_tessera_link_instance_t {
  struct Z_tessera_link_instance_t* self;
  tessera_link_entry_t* entries;
};

#ifdef __cplusplus
}
#endif

#if !defined(__cplusplus) && (defined(__SUPPORT_SNAN__) || defined(__TINYC__))
/*
 * Generated modules are compiled with -fsignaling-nans (wasm/loader.cc), so
 * that the C compiler does not fold x*1.0 and the like to x and hand back a
 * signalling NaN unquieted. Under that flag GCC no longer inlines isnan()
 * (an unordered compare may signal) but calls libm's __isnan out of line,
 * which made wasm2c's sqrt/floor/min/... helpers several times slower. A
 * bit test is exact, raises nothing and stays inline. (wasm2c's code
 * includes <math.h> before this header.)
 */
#include <math.h>
static inline int tessera_isnan_f32(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  return (uint32_t)(bits << 1) > 0xFF000000u; /* exponent ones, mantissa != 0 */
}
static inline int tessera_isnan_f64(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return (uint64_t)(bits << 1) > 0xFFE0000000000000ull;
}
#undef isnan
#define isnan(x) \
  _Generic((x), float: tessera_isnan_f32, default: tessera_isnan_f64)(x)
#endif

#endif /* TESSERA_WASM_RT_H_ */
