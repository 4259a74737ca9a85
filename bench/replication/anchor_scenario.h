// The anchor's replication scenario, reproduced exactly: players wandering
// in a square with a xorshift64 random walk of their heading.
#ifndef TESSERA_BENCH_REPLICATION_ANCHOR_SCENARIO_H_
#define TESSERA_BENCH_REPLICATION_ANCHOR_SCENARIO_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::bench {

struct AnchorParams {
  int players = 300;
  double size = 60;    // the area is size x size
  int tick_rate = 20;  // Hz
  double speed = 1.5;  // units per second
  double turn = 0.6;   // heading += (rand() - 0.5) * turn per tick
  uint64_t seed = 0x2545f4914f6cdd1d;
};

class AnchorScenario {
 public:
  explicit AnchorScenario(const AnchorParams& params);

  // One tick: every player, in id order, turns, steps and is clamped.
  void Step();

  int players() const { return static_cast<int>(x_.size()); }
  double x(int i) const { return x_[i]; }
  double y(int i) const { return y_[i]; }
  // Entity id of player i (1-based: ids 1..players).
  static uint64_t Id(int i) { return static_cast<uint64_t>(i) + 1; }

  // The guest's tessera_replicated() output for the current positions: a
  // FULL listing the first time, then every player's position.
  std::string Changes();

 private:
  double Rand();  // (s >> 40) / 2^24

  AnchorParams params_;
  uint64_t s_;
  bool first_ = true;
  std::vector<double> x_;
  std::vector<double> y_;
  std::vector<double> heading_;
};

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_REPLICATION_ANCHOR_SCENARIO_H_
