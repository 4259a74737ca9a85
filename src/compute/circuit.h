// The failure circuit of one module (docs/compute.md "Limits and
// breakers"): `threshold` consecutive failed runs open it for `cooldown_ms`;
// the first run after the cooldown is a half-open probe; a successful run
// closes it, a failed probe opens it again for another cooldown. Re-enabling
// the module resets it. Pure; time passed in; not thread-safe.
#ifndef TESSERA_COMPUTE_CIRCUIT_H_
#define TESSERA_COMPUTE_CIRCUIT_H_

#include <cstdint>
#include <string>

#include "compute/compute_types.h"

namespace tessera::compute {

class Circuit {
 public:
  enum class Admit { kRun, kProbe, kRefused };

  Circuit(int64_t threshold, int64_t cooldown_ms);
  // Picks up a stored state (ModuleRecord's circuit fields).
  void Restore(CircuitState state, int consecutive_failures, int64_t opened_ms);
  void SetLimits(int64_t threshold, int64_t cooldown_ms);

  // Whether a run may start at `now_ms`: kRun (closed), kProbe (the one
  // half-open probe; the state becomes kHalfOpen until After), kRefused
  // (open and cooling down, or a probe already running).
  Admit Before(int64_t now_ms);
  // Records the run's outcome; returns what it did to the circuit for the
  // run row: "" (nothing), "opened", "closed" (a probe succeeded),
  // "reopened" (a probe failed).
  std::string After(bool success, int64_t now_ms);
  void Reset();

  CircuitState state() const { return state_; }
  int consecutive_failures() const { return failures_; }
  int64_t opened_ms() const { return opened_ms_; }
  // When an open circuit admits its probe (opened_ms + cooldown).
  int64_t probe_at_ms() const { return opened_ms_ + cooldown_ms_; }

 private:
  int64_t threshold_;
  int64_t cooldown_ms_;
  CircuitState state_ = CircuitState::kClosed;
  int failures_ = 0;
  int64_t opened_ms_ = 0;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_CIRCUIT_H_
