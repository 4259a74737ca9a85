// The scenarios of tests/fixtures/lagcomp (shared with the TypeScript
// client's tests): each is a short run of a mirror, one subscriber stream
// and a SentHistory, recorded as the connection's payloads plus what the
// history says the client drew at some view ticks. The client's
// EntityTimeline, fed the same payloads, must draw exactly that.
#ifndef TESSERA_REPLICATION_LAGCOMP_FIXTURES_H_
#define TESSERA_REPLICATION_LAGCOMP_FIXTURES_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "replication/fixture_scenarios.h"
#include "replication/sent_history.h"

namespace tessera::replication {

struct LagcompQuery {
  double view_tick = 0;  // inside the clamp range when it was drawn
  std::vector<DrawnEntity> entities;
};

struct LagcompScenario {
  FixtureScenario frames;  // name, description, payloads
  double precision = 0;
  std::vector<LagcompQuery> queries;  // ascending view ticks
};

// Runs every scenario; checks along the way that the reference decoder
// holds what the stream believes the client holds, and that each scenario
// shows what it is about (an error otherwise).
Result<std::vector<LagcompScenario>> BuildLagcompScenarios();

// `<name>.json` (see tests/fixtures/lagcomp/README.md): one query per line,
// doubles printed with %.17g (they read back exactly). Ends with a newline.
std::string LagcompJson(const LagcompScenario& s);

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_LAGCOMP_FIXTURES_H_
