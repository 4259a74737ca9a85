// Test compute module: grows memory past the cap. tick allocates 1 MiB
// chunks, touching every page and keeping them, until allocation fails
// (operator new then panics "out of memory: cannot allocate N bytes").
// invoke "size" returns {"mib": chunks kept}. init returns at once.
#include <tessera/compute.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

namespace tc = tessera::compute;

std::vector<std::vector<char>>* g_chunks = new std::vector<std::vector<char>>;

struct Size {
  std::int64_t mib = 0;
};
TESSERA_FIELDS(Size, mib);

void Init() {}

void Tick(std::uint32_t) {
  for (;;) {
    g_chunks->emplace_back(1 << 20, '\1');
  }
}

tessera::Result<std::string> Invoke(std::string_view) {
  return tc::to_json(Size{static_cast<std::int64_t>(g_chunks->size())});
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
