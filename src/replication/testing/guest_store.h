// Test support: a guest-side replicated store that records changes and
// produces tessera_replicated() change lists, random operations on it, and
// a comparison of a Decoder with what it should hold.
#ifndef TESSERA_REPLICATION_TESTING_GUEST_STORE_H_
#define TESSERA_REPLICATION_TESTING_GUEST_STORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "replication/decoder.h"
#include "replication/mirror.h"
#include "replication/subscriber_stream.h"

namespace tessera::replication::testing {

class GuestStore {
 public:
  struct Entity {
    double position[3] = {0, 0, 0};
    std::map<uint8_t, std::string> components;
  };

  void Spawn(uint64_t id);   // must not hold it (may have removed it)
  void Remove(uint64_t id);  // must hold it
  void Move(uint64_t id, double x, double y, double z);
  void SetComponent(uint64_t id, uint8_t component, std::string bytes);
  void RemoveComponent(uint64_t id, uint8_t component);

  bool Holds(uint64_t id) const { return entities_.contains(id); }
  const std::map<uint64_t, Entity>& entities() const { return entities_; }

  // The changes since the previous call (a FULL listing the first time).
  std::string TakeChanges();

 private:
  struct Pending {
    bool is_new = false;
    bool position = false;
    std::set<uint8_t> components;
  };
  std::map<uint64_t, Entity> entities_;
  std::set<uint64_t> host_holds_;  // as of the last TakeChanges
  std::set<uint64_t> removed_;
  std::map<uint64_t, Pending> pending_;
  bool first_ = true;
};

// xorshift64 (s ^= s << 13; s ^= s >> 7; s ^= s << 17).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed == 0 ? 0x9e3779b97f4a7c15 : seed) {}
  uint64_t Next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return s_;
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-53; }
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : Next() % n; }
  bool Chance(double p) { return Uniform() < p; }

 private:
  uint64_t s_;
};

struct RandomOptions {
  uint64_t max_id = 64;    // ids are drawn from [0, max_id)
  double spawn = 0.3;      // per tick: chance of each kind of event,
  double remove = 0.1;     // repeated `events` times
  double reuse = 0.05;     // remove and spawn again the same id
  double move = 0.8;       // per entity
  double component = 0.1;  // per entity: set or remove one
  int events = 4;
  double extent = 100;  // positions in [-extent, extent]
  double step = 2;      // largest move per tick per axis
};

// One tick of random operations.
void RandomTick(GuestStore& store, Rng& rng, const RandomOptions& options);

// Ids of `mirror` kept with probability `keep` (ascending).
std::vector<uint64_t> RandomVisible(const Mirror& mirror, Rng& rng,
                                    double keep);

// "" when `decoder` holds exactly `held` (ids, q, and the components'
// bytes as in `mirror`); otherwise what differs.
std::string CompareWithHeld(const Decoder& decoder,
                            std::span<const HeldEntity> held,
                            const Mirror& mirror);
// "" when `decoder` holds exactly the mirror's quantised state of the
// `visible` ids that the mirror holds.
std::string CompareWithMirror(const Decoder& decoder, const Mirror& mirror,
                              std::span<const uint64_t> visible);

}  // namespace tessera::replication::testing

#endif  // TESSERA_REPLICATION_TESTING_GUEST_STORE_H_
