// Test compute module: "sleeps" in a long busy loop. tick loops
// 1,000,000,000,000 times (hours of CPU: with a huge fuel budget only the
// watchdog ends it); invoke loops params {"iterations": int} times
// (default the same) and returns {"spins": n}. init returns at once.
#include <tessera/compute.h>

#include <cstdint>
#include <string>

namespace {

namespace tc = tessera::compute;

constexpr std::int64_t kForAges = 1'000'000'000'000;

struct Params {
  std::int64_t iterations = kForAges;
};
TESSERA_FIELDS(Params, iterations);

struct Spins {
  std::int64_t spins = 0;
};
TESSERA_FIELDS(Spins, spins);

volatile std::int64_t g_spins = 0;

std::int64_t Spin(std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) g_spins = g_spins + 1;
  return n;
}

void Init() {}

void Tick(std::uint32_t) { Spin(kForAges); }

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  tessera::Result<Params> p = call.params<Params>();
  if (!p.ok()) return tessera::Error(p.error());
  return tc::to_json(Spins{Spin(p->iterations)});
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
