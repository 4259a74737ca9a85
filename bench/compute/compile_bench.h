// compute_bench (b): cold compiles of the compute example modules (the C++
// shop, the Rust world-sim) through the real compiler (compute::
// MakeToolchainCompiler, fresh work directories) against the cold build of
// the shard examples of the same languages (examples/arena, arena-rust:
// app::BuildKinds, forced, in a scratch copy), measured in the same run.
#ifndef TESSERA_BENCH_COMPUTE_COMPILE_BENCH_H_
#define TESSERA_BENCH_COMPUTE_COMPILE_BENCH_H_

#include <filesystem>
#include <nlohmann/json.hpp>

namespace tessera::bench {

// `rust`: also the Rust pair (tens of seconds). False when a compile fails.
bool RunColdCompiles(const std::filesystem::path& source_dir,
                     const std::filesystem::path& scratch, bool rust,
                     nlohmann::json* out);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_COMPUTE_COMPILE_BENCH_H_
