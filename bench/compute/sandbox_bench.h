// compute_bench's in-process parts (bench/compute/README.md): the sandbox
// call alone, the fuel calibration, and many modules ticking on a worker
// pool. Each prints its figures with the baseline measured in the same run
// and returns false only when a correctness check fails.
#ifndef TESSERA_BENCH_COMPUTE_SANDBOX_BENCH_H_
#define TESSERA_BENCH_COMPUTE_SANDBOX_BENCH_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tessera::bench {

// Percentiles of samples (sorted in place).
struct Summary {
  double p50 = 0, p99 = 0, mean = 0;
  size_t n = 0;
};
Summary Summarize(std::vector<double>& samples);

// (a) ComputeInstance::Invoke of a trivial export (the echo test module),
// a Tick of an empty tick (the entry call's floor) and, as the baseline,
// a bare virtual host-function call; per call wall p50/p99 and CPU.
bool RunSandboxCall(int calls, nlohmann::json* out);

// Fuel per ms of thread CPU (the compute-unit calibration): the busy
// module's invoke loop, several sizes.
bool RunFuelCalibration(bool quick, nlohmann::json* out);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_COMPUTE_SANDBOX_BENCH_H_
