// The scenarios of tests/fixtures/replication (shared with the TypeScript
// client's tests): each is a short run of a mirror and one subscriber
// stream, recorded as the payloads of one connection.
#ifndef TESSERA_REPLICATION_FIXTURE_SCENARIOS_H_
#define TESSERA_REPLICATION_FIXTURE_SCENARIOS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "replication/decoder.h"
#include "replication/mirror.h"
#include "replication/sent_history.h"
#include "replication/subscriber_stream.h"
#include "replication/testing/guest_store.h"

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

// One mirror, one connection; records the connection's payloads (and,
// given a history, what it was sent).
class FixtureRecorder {
 public:
  static constexpr std::string_view kSubscriber = "client";

  explicit FixtureRecorder(Config config, SentHistory* history = nullptr)
      : mirror_(config), history_(history) {}

  testing::GuestStore& store() { return store_; }
  SubscriberStream& stream() { return stream_; }
  const Mirror& mirror() const { return mirror_; }

  // Applies the store's changes and encodes the frame of `tick` for a
  // client seeing `visible` (everything when nullopt); with a history,
  // records the world and what kSubscriber was sent. The frame is kept
  // only when `record`. Checks that the reference decoder holds what the
  // stream says the client holds.
  Status Frame(uint64_t tick, std::optional<std::vector<uint64_t>> visible,
               std::optional<Focus> focus = std::nullopt, bool record = true);
  // The client holds the mirror's exact state.
  bool Converged() const;
  std::vector<FixtureFrame> TakeFrames() { return std::move(frames_); }

 private:
  Mirror mirror_;
  SentHistory* history_;
  testing::GuestStore store_;
  SubscriberStream stream_;
  Decoder check_;
  std::vector<FixtureFrame> frames_;
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
