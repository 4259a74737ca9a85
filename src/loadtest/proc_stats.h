// CPU time and peak memory of processes, from /proc (Linux).
#ifndef TESSERA_LOADTEST_PROC_STATS_H_
#define TESSERA_LOADTEST_PROC_STATS_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace tessera::loadtest {

// User + system CPU seconds `pid` has used (all its threads), from
// /proc/<pid>/stat; nullopt if it cannot be read (no such process).
std::optional<double> ProcessCpuSeconds(pid_t pid);

// The peak resident set size of `pid` in KiB (VmHWM in
// /proc/<pid>/status); nullopt if it cannot be read.
std::optional<uint64_t> PeakRssKib(pid_t pid);

// User + system CPU seconds of this process.
double SelfCpuSeconds();

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_PROC_STATS_H_
