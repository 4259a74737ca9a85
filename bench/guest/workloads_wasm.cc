// The wasm32 build of the workloads: the module runtime_bench loads with
// a bare CheckOptions (no ABI). It imports nothing and exports
//   sim(i32) -> i64, astar(i32) -> i64, nbody(i32) -> i64   (workloads.h)
//   nop()                                      (the empty-call measurement)
// plus `memory`. The link names them with `wasm-ld --export=<name>`.
//
// There is no libc: memcpy and memset, which clang emits for struct copies
// and clearing loops, are defined here (word at a time, so the guest is not
// handicapped against glibc's versions by a byte loop).
#include "guest/workloads.h"

using Size = decltype(sizeof(0));

extern "C" {

unsigned long long sim(unsigned ticks) { return tessera_bench_sim(ticks); }
unsigned long long astar(unsigned searches) {
  return tessera_bench_astar(searches);
}
unsigned long long nbody(unsigned steps) { return tessera_bench_nbody(steps); }

// An empty export: calling it measures the host's per-call overhead.
void nop() {}

__attribute__((no_builtin)) void* memcpy(void* dst, const void* src, Size n) {
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
  for (; n >= 8; n -= 8, d += 8, s += 8) {
    unsigned long long w;
    __builtin_memcpy(&w, s, 8);  // a single unaligned i64.load
    __builtin_memcpy(d, &w, 8);
  }
  for (; n > 0; --n) *d++ = *s++;
  return dst;
}

__attribute__((no_builtin)) void* memset(void* dst, int value, Size n) {
  auto* d = static_cast<unsigned char*>(dst);
  unsigned long long w =
      0x0101010101010101ull * static_cast<unsigned char>(value);
  for (; n >= 8; n -= 8, d += 8) __builtin_memcpy(d, &w, 8);
  for (; n > 0; --n) *d++ = static_cast<unsigned char>(value);
  return dst;
}

}  // extern "C"
