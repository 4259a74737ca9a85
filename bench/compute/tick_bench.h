// compute_bench (c): N compute modules (1,000; --quick: 50) ticking at 10
// Hz in one ComputeEngine in-process (MemoryComputeStore, a real worker
// pool of one thread per core, the echo test module's empty tick and the
// counter module's state read+write tick), their CPU share (process CPU
// time over wall time) and their tick cadence (ticks run over ticks due),
// against a baseline in the same run: the same pool running N empty tasks
// at 10 Hz (the scheduling alone, no sandbox, no engine).
#ifndef TESSERA_BENCH_COMPUTE_TICK_BENCH_H_
#define TESSERA_BENCH_COMPUTE_TICK_BENCH_H_

#include <filesystem>
#include <nlohmann/json.hpp>

namespace tessera::bench {

bool RunTicking(int modules, double seconds,
                const std::filesystem::path& scratch, nlohmann::json* out);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_COMPUTE_TICK_BENCH_H_
