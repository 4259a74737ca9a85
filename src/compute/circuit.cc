// The failure circuit's state machine (circuit.h):
//
//   closed --(threshold consecutive failures)--> open
//   open --(Before at or after opened + cooldown)--> half_open (the probe)
//   half_open --(After success)--> closed
//   half_open --(After failure)--> open (opened again at that time)
//
// While half-open every other run is refused, so exactly one probe runs.
// A run admitted while closed that ends after the circuit opened (runs of
// one module may overlap: an invoke during a tick) changes nothing but the
// failure count: only the probe's outcome closes an open circuit.
#include "compute/circuit.h"

#include <algorithm>
#include <limits>

namespace tessera::compute {
namespace {

void AddFailure(int* failures) {
  if (*failures < std::numeric_limits<int>::max()) ++*failures;
}

}  // namespace

Circuit::Circuit(int64_t threshold, int64_t cooldown_ms) {
  SetLimits(threshold, cooldown_ms);
}

void Circuit::Restore(CircuitState state, int consecutive_failures,
                      int64_t opened_ms) {
  // A stored half-open state is a probe that never reported (the process
  // stopped during it): the circuit is open again, and since the probe ran
  // after the cooldown, the next run is a new probe.
  state_ = state == CircuitState::kHalfOpen ? CircuitState::kOpen : state;
  failures_ = std::max(0, consecutive_failures);
  opened_ms_ = opened_ms;
}

void Circuit::SetLimits(int64_t threshold, int64_t cooldown_ms) {
  threshold_ = std::max<int64_t>(1, threshold);
  cooldown_ms_ = std::max<int64_t>(0, cooldown_ms);
}

Circuit::Admit Circuit::Before(int64_t now_ms) {
  switch (state_) {
    case CircuitState::kClosed:
      return Admit::kRun;
    case CircuitState::kOpen:
      if (now_ms >= probe_at_ms()) {
        state_ = CircuitState::kHalfOpen;
        return Admit::kProbe;
      }
      return Admit::kRefused;
    case CircuitState::kHalfOpen:
      return Admit::kRefused;  // the probe is still running
  }
  return Admit::kRefused;
}

std::string Circuit::After(bool success, int64_t now_ms) {
  switch (state_) {
    case CircuitState::kHalfOpen:
      if (success) {
        state_ = CircuitState::kClosed;
        failures_ = 0;
        return "closed";
      }
      state_ = CircuitState::kOpen;
      AddFailure(&failures_);
      opened_ms_ = now_ms;
      return "reopened";
    case CircuitState::kClosed:
      if (success) {
        failures_ = 0;
        return "";
      }
      AddFailure(&failures_);
      if (failures_ >= threshold_) {
        state_ = CircuitState::kOpen;
        opened_ms_ = now_ms;
        return "opened";
      }
      return "";
    case CircuitState::kOpen:
      if (!success) AddFailure(&failures_);
      return "";
  }
  return "";
}

void Circuit::Reset() {
  state_ = CircuitState::kClosed;
  failures_ = 0;
  opened_ms_ = 0;
}

}  // namespace tessera::compute
