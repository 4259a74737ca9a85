// The runtime benchmark's workloads: one source (workloads.cc), built twice.
//
//  - natively, into the runtime_bench executable (g++ -O2 -ffp-contract=off);
//  - to wasm32 (clang++ --target=wasm32 -O2, freestanding: no libc, no
//    imports), run through tessera's runtime; workloads_wasm.cc exports the
//    entry points under short names.
//
// Each entry point rebuilds all of its state from a fixed seed, runs `n`
// units of work and returns a 64-bit checksum of the final state, so a
// native run and a wasm run with the same `n` must return the same value
// (bit for bit: the code uses no fast-math, no FMA contraction, and only
// IEEE operations that wasm defines exactly: + - * / sqrt).
//
// Freestanding: this header and workloads.cc include nothing, not even
// <stdint.h>, because the wasm32 build has no sysroot.
//
// Threading: the workloads keep their state in static arrays (that is the
// point: a guest owns its linear memory). Natively, call them from one
// thread at a time.
#ifndef TESSERA_BENCH_GUEST_WORKLOADS_H_
#define TESSERA_BENCH_GUEST_WORKLOADS_H_

static_assert(sizeof(unsigned) == 4, "u32");
static_assert(sizeof(unsigned long long) == 8, "u64");

extern "C" {

// 1,000 entities on a wrapping 500x500 world: each tick moves them, rebuilds
// a uniform grid (cell = neighbour radius, counting sort) and steers every
// entity from the neighbours within the radius it finds in the 3x3 cells
// around it. Runs `ticks` ticks.
unsigned long long tessera_bench_sim(unsigned ticks);

// A* on a 256x256 8-connected grid with ~30% pseudo-random walls (fixed
// seed), octile heuristic, hand-written binary heap. Runs `searches`
// searches between pseudo-random open cells.
unsigned long long tessera_bench_astar(unsigned searches);

// The classic 5-body (Sun, Jupiter, Saturn, Uranus, Neptune) simulation of
// the Computer Language Benchmarks Game, dt = 0.01, `steps` steps. Returns
// the bits of the final energy (-0.169075164 at 0 steps, -0.169087605 after
// 1,000 steps).
unsigned long long tessera_bench_nbody(unsigned steps);

}  // extern "C"

#endif  // TESSERA_BENCH_GUEST_WORKLOADS_H_
