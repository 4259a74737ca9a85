// Test compute module: loops forever. tick and every invoke spin without
// end (a fuel budget stops them; with unlimited fuel, the watchdog). init
// returns at once.
#include <tessera/compute.h>

#include <cstdint>
#include <string>

namespace {

volatile std::uint64_t g_spins = 0;

void Init() {}

void Tick(std::uint32_t) {
  for (;;) g_spins = g_spins + 1;
}

tessera::Result<std::string> Invoke(std::string_view) {
  for (;;) g_spins = g_spins + 1;
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
