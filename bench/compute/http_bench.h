// compute_bench (a) over HTTP: the real binary (`tessera dev` of a scratch
// app whose manifest deploys the echo test module's source as compute
// module "echo" with an invoke trigger), `POST
// /api/compute/modules/echo/invoke/echo` on one keep-alive connection:
// round trip p50/p99 and server CPU per invoke (the server process's CPU
// from /proc/<pid>/stat over the run, divided by the invokes), against
// `GET /healthz` measured the same way in the same run.
#ifndef TESSERA_BENCH_COMPUTE_HTTP_BENCH_H_
#define TESSERA_BENCH_COMPUTE_HTTP_BENCH_H_

#include <filesystem>
#include <nlohmann/json.hpp>

namespace tessera::bench {

bool RunHttpInvoke(const std::filesystem::path& source_dir,
                   const std::filesystem::path& scratch, int requests,
                   nlohmann::json* out);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_COMPUTE_HTTP_BENCH_H_
