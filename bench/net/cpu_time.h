// CPU time of a process, for the bench's CPU-per-input figures.
#ifndef TESSERA_BENCH_NET_CPU_TIME_H_
#define TESSERA_BENCH_NET_CPU_TIME_H_

#include <sys/types.h>

#include <optional>

namespace tessera::bench {

// User + system CPU seconds `pid` has used (all its threads), from
// /proc/<pid>/stat; nullopt if it cannot be read (no such process, not
// Linux).
std::optional<double> ProcessCpuSeconds(pid_t pid);

// User + system CPU seconds of this process.
double SelfCpuSeconds();

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_NET_CPU_TIME_H_
