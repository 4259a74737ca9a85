// Test guest "membomb": each tick allocates 1 MiB chunks and writes to every
// page of them, keeping them all, until memory runs out. When malloc fails it
// panics with "out of memory after N MiB"; the host's memory cap usually
// stops it first (memory.grow fails, then malloc does).
//   params   {"chunks_per_tick": int}  0 (default): never stop within a tick
//   inputs   {"noop": {}}
//   snapshot {"mib": int}
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tessera/shard_sdk.h"

struct Params {
  std::int64_t chunks_per_tick = 0;
};
TESSERA_FIELDS(Params, chunks_per_tick);

struct Noop {};
TESSERA_FIELDS(Noop);

using Input = std::variant<Noop>;

struct Snapshot {
  std::int64_t mib = 0;
};
TESSERA_FIELDS(Snapshot, mib);

class MemBomb {
 public:
  static constexpr std::size_t kChunkBytes = 1 << 20;
  static constexpr std::size_t kPageBytes = 4096;

  static tessera::Result<MemBomb> init(std::string_view, Params params) {
    return MemBomb(params.chunks_per_tick);
  }

  tessera::Status apply_input(std::string_view, Input) {
    return tessera::Status();
  }

  void tick(double) {
    for (std::int64_t n = 0; chunks_per_tick_ == 0 || n < chunks_per_tick_;
         ++n) {
      auto* chunk = static_cast<volatile char*>(std::malloc(kChunkBytes));
      if (chunk == nullptr) {
        tessera::panic("out of memory after " + std::to_string(chunks_.size()) +
                       " MiB");
      }
      for (std::size_t i = 0; i < kChunkBytes; i += kPageBytes) chunk[i] = 1;
      chunks_.push_back(chunk);
    }
  }

  Snapshot snapshot() const {
    return Snapshot{static_cast<std::int64_t>(chunks_.size())};
  }

 private:
  explicit MemBomb(std::int64_t chunks_per_tick)
      : chunks_per_tick_(chunks_per_tick) {}

  std::int64_t chunks_per_tick_;
  std::vector<volatile char*> chunks_;
};

TESSERA_SHARD(MemBomb);
