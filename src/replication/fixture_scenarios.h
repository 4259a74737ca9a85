// The scenarios of tests/fixtures/replication (shared with the TypeScript
// client's tests): each is a short run of a mirror and one subscriber
// stream, recorded as the payloads of one connection.
#ifndef TESSERA_REPLICATION_FIXTURE_SCENARIOS_H_
#define TESSERA_REPLICATION_FIXTURE_SCENARIOS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::replication {

struct FixtureFrame {
  uint64_t tick = 0;
  std::string payload;
};

struct FixtureScenario {
  std::string name;
  std::string description;
  std::vector<FixtureFrame> frames;
};

// Runs every scenario. Checks along the way that the reference decoder
// holds what the stream believes the client holds (an error otherwise).
Result<std::vector<FixtureScenario>> BuildFixtureScenarios();

// `<name>.frames.bin`: per frame, u64 LE tick, u32 LE length, payload.
std::string FramesBin(const FixtureScenario& s);
// `<name>.json`: the frames with the decoded state after each (see
// tests/fixtures/replication/README.md). Ends with a newline.
Result<std::string> FixtureJson(const FixtureScenario& s);

// Seeds for the fuzzers: valid change lists and valid payload sequences.
std::vector<std::pair<std::string, std::string>> ChangeListSeeds();
std::vector<std::pair<std::string, std::string>> PayloadSeeds();

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_FIXTURE_SCENARIOS_H_
