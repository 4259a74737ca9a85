// How a client draws an entity between two received ticks: the rule of the
// TypeScript client's EntityTimeline.render, shared by the server's rewind
// (sent_history.cc) and the load-test bot's picture (loadtest/picture.cc),
// so all three give the same doubles (tests/fixtures/lagcomp proves it).
// Callers compile with -ffp-contract=off: a fused multiply-add would round
// differently from JavaScript.
#ifndef TESSERA_REPLICATION_DRAW_RULE_H_
#define TESSERA_REPLICATION_DRAW_RULE_H_

#include <algorithm>

namespace tessera::replication {

// The fraction of the way from received tick `a` to the next received tick
// `b` at render tick `render`: clamp((render - a) / (b - a), 0, 1); 0 when
// there is no next tick (`has_b` false: the picture holds at A).
inline double DrawFraction(double render, double a, bool has_b, double b) {
  if (!has_b) return 0;
  return std::min(1.0, std::max(0.0, (render - a) / (b - a)));
}

// One coordinate drawn at fraction `t`, in this exact form.
inline double DrawBetween(double from, double to, double t) {
  return from + (to - from) * t;
}

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_DRAW_RULE_H_
