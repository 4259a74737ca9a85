// Picture and TickClock: hand-built payloads drawn as the TS client draws
// them, and the shared lag-compensation fixtures (tests/fixtures/lagcomp:
// the shard's rewind must equal this picture exactly).
#include "loadtest/picture.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "replication/bit_io.h"

namespace tessera::loadtest {
namespace {

namespace fs = std::filesystem;
using replication::PutF64;
using replication::PutVarint;
using replication::ZigZag;

struct Spawn {
  uint64_t id;
  int64_t qx, qy, qz;
};

// An entities payload without updates (docs/protocol.md): a BASELINE with
// `precision` when `baseline`, else a delta.
std::string Payload(bool baseline, double precision,
                    const std::vector<uint64_t>& despawns,
                    const std::vector<Spawn>& spawns) {
  std::string p(1, baseline ? '\x01' : '\x00');
  if (baseline) PutF64(p, precision);
  PutVarint(p, despawns.size());
  for (size_t i = 0; i < despawns.size(); ++i) {
    PutVarint(p, i == 0 ? despawns[i] : despawns[i] - despawns[i - 1] - 1);
  }
  PutVarint(p, spawns.size());
  for (size_t i = 0; i < spawns.size(); ++i) {
    const Spawn& s = spawns[i];
    PutVarint(p, i == 0 ? s.id : s.id - spawns[i - 1].id - 1);
    PutVarint(p, ZigZag(s.qx));
    PutVarint(p, ZigZag(s.qy));
    PutVarint(p, ZigZag(s.qz));
    PutVarint(p, 0);  // components
  }
  PutVarint(p, 0);  // updates
  return p;
}

std::string Baseline(const std::vector<Spawn>& spawns) {
  return Payload(true, 0.5, {}, spawns);
}

TEST(PictureTest, InterpolatesBetweenReceivedTicksAndHoldsAfterTheLast) {
  Picture p;
  EXPECT_EQ(p.Render(3), std::nullopt);
  ASSERT_TRUE(p.Push(10, Baseline({{1, 0, 0, 0}, {4, 2, 4, 6}})).ok());
  ASSERT_TRUE(p.Push(11, Baseline({{1, 10, -2, 0}, {4, 2, 4, 6}})).ok());

  EXPECT_EQ(p.Render(10.5), 10.5);
  ASSERT_EQ(p.drawn().size(), 2u);
  EXPECT_EQ(p.drawn()[0].id, 1u);
  EXPECT_EQ(p.drawn()[0].x, 2.5);
  EXPECT_EQ(p.drawn()[0].y, -0.5);
  EXPECT_EQ(p.Find(4)->z, 3.0);
  EXPECT_FALSE(p.Find(2).has_value());

  // Before every state: the oldest, unmoved; the tick drawn is its tick.
  Picture early;
  ASSERT_TRUE(early.Push(10, Baseline({{1, 0, 0, 0}})).ok());
  ASSERT_TRUE(early.Push(11, Baseline({{1, 10, 0, 0}})).ok());
  EXPECT_EQ(early.Render(8.75), 10.0);
  EXPECT_EQ(early.Find(1)->x, 0.0);

  // After the newest: held there, no extrapolation.
  EXPECT_EQ(p.Render(13.2), 11.0);
  EXPECT_EQ(p.Find(1)->x, 5.0);
}

TEST(PictureTest, SpawnsAndDespawnsShowAtTheirTick) {
  Picture p;
  ASSERT_TRUE(p.Push(10, Baseline({{1, 0, 0, 0}, {2, 8, 0, 0}})).ok());
  ASSERT_TRUE(p.Push(11, Payload(false, 0, {2}, {{3, 4, 0, 0}})).ok());
  p.Render(10.9);
  ASSERT_EQ(p.drawn().size(), 2u);  // 1 and 2: A's entities
  EXPECT_EQ(p.drawn()[1].id, 2u);
  EXPECT_EQ(p.drawn()[1].x, 4.0);  // not moving toward a despawn
  p.Render(11);
  ASSERT_EQ(p.drawn().size(), 2u);
  EXPECT_EQ(p.drawn()[0].id, 1u);
  EXPECT_EQ(p.drawn()[1].id, 3u);
}

TEST(PictureTest, AReusedIdIsANewIncarnationAndIsNotInterpolated) {
  Picture p;
  ASSERT_TRUE(p.Push(10, Baseline({{1, 0, 0, 0}})).ok());
  ASSERT_TRUE(p.Push(11, Payload(false, 0, {1}, {{1, 100, 0, 0}})).ok());
  p.Render(10.5);
  EXPECT_EQ(p.Find(1)->x, 0.0);
  p.Render(11);
  EXPECT_EQ(p.Find(1)->x, 50.0);

  // A baseline that lists an id again continues it.
  Picture q;
  ASSERT_TRUE(q.Push(10, Baseline({{1, 0, 0, 0}})).ok());
  ASSERT_TRUE(q.Push(12, Baseline({{1, 8, 0, 0}})).ok());
  q.Render(11);
  EXPECT_EQ(q.Find(1)->x, 2.0);
}

TEST(PictureTest, RenderPrunesStatesBeforeTheOneDrawn) {
  Picture p;
  for (uint64_t t = 1; t <= 5; ++t) {
    ASSERT_TRUE(p.Push(t, Baseline({{1, static_cast<int64_t>(t), 0, 0}})).ok());
  }
  EXPECT_EQ(p.states(), 5u);
  p.Render(3.5);
  EXPECT_EQ(p.states(), 3u);  // 3, 4, 5
  // Going back is no longer possible: the oldest kept is drawn.
  EXPECT_EQ(p.Render(1), 3.0);
  EXPECT_EQ(p.Find(1)->x, 1.5);
}

TEST(PictureTest, OlderTicksStartANewHistory) {
  Picture p;
  ASSERT_TRUE(p.Push(50, Baseline({{1, 0, 0, 0}})).ok());
  ASSERT_TRUE(p.Push(3, Baseline({{1, 4, 0, 0}})).ok());
  EXPECT_EQ(p.states(), 1u);
  EXPECT_EQ(p.Render(40), 3.0);
  EXPECT_EQ(p.Find(1)->x, 2.0);
}

TEST(PictureTest, IgnoresDeltasBeforeABaselineAndRefusesMalformedPayloads) {
  Picture p;
  ASSERT_TRUE(p.Push(1, Payload(false, 0, {}, {{1, 0, 0, 0}})).ok());
  EXPECT_EQ(p.states(), 0u);
  ASSERT_TRUE(p.Push(2, Baseline({{1, 0, 0, 0}})).ok());
  const Status bad = p.Push(3, std::string("\x01\x00", 2));
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.ToString();
  EXPECT_EQ(p.states(), 0u);
  // Waits for a baseline again.
  ASSERT_TRUE(p.Push(4, Payload(false, 0, {}, {{2, 0, 0, 0}})).ok());
  EXPECT_EQ(p.states(), 0u);
}

TEST(TickClockTest, AnchorsOnTheLeastDelayedFrame) {
  TickClock clock(50);
  EXPECT_EQ(clock.TickAt(0), std::nullopt);
  clock.Observe(0, 30);   // 30 ms late
  clock.Observe(1, 60);   // 10 ms late: the best
  clock.Observe(2, 150);  // 50 ms late
  EXPECT_EQ(clock.TickAt(110), 2.0);
  EXPECT_EQ(clock.TickAt(135), 2.5);
  clock.Observe(2, 100);  // a repeated tick changes nothing
  EXPECT_EQ(clock.TickAt(110), 2.0);
  // A restarted shard: ticks went back.
  clock.Observe(0, 1000);
  EXPECT_EQ(clock.TickAt(1025), 0.5);
}

TEST(TickClockTest, FollowsALaterAnchorSlowlyOnceTheWindowSlides) {
  TickClock clock(50);
  // 10 ms of delay for 5 s of frames, then every frame 60 ms late.
  uint64_t tick = 0;
  for (; tick < 100; ++tick) clock.Observe(tick, tick * 50.0 + 10);
  for (; tick < 190; ++tick) clock.Observe(tick, tick * 50.0 + 60);
  // The last 10 ms frame (tick 99) left the 4 s window at tick 179; from
  // there the anchor moves 5% of the elapsed time (2.5 ms a frame) toward
  // 60 ms late: 11 steps, 27.5 ms, so tick 189's frame arrives 22.5 ms
  // after the anchor says tick 189 began.
  EXPECT_NEAR(*clock.TickAt(189 * 50.0 + 60), 189 + 22.5 / 50, 1e-9);
}

// --- tests/fixtures/lagcomp ---------------------------------------------

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::tuple<uint64_t, std::string>> ReadFrames(
    const std::string& bin) {
  std::vector<std::tuple<uint64_t, std::string>> frames;
  replication::ByteReader r(bin);
  while (r.remaining() > 0) {
    uint64_t tick = 0;
    uint32_t size = 0;
    std::string_view payload;
    if (!r.U64(&tick) || !r.U32(&size) || !r.Bytes(size, &payload)) {
      ADD_FAILURE() << "truncated frames file";
      break;
    }
    frames.emplace_back(tick, std::string(payload));
  }
  return frames;
}

TEST(PictureFixturesTest, DrawsEveryQueryExactlyAsTheFixtureSays) {
  const fs::path dir = TESSERA_LAGCOMP_FIXTURES;
  ASSERT_TRUE(fs::exists(dir)) << dir;
  int scenarios = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++scenarios;
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    const nlohmann::json doc = nlohmann::json::parse(ReadFile(entry.path()));
    const auto frames = ReadFrames(ReadFile(dir / (name + ".frames.bin")));
    ASSERT_FALSE(frames.empty());
    ASSERT_FALSE(doc["queries"].empty());
    for (const nlohmann::json& query : doc["queries"]) {
      const double view_tick = query["view_tick"].get<double>();
      SCOPED_TRACE("view_tick " + std::to_string(view_tick));
      Picture picture;
      for (const auto& [tick, payload] : frames) {
        ASSERT_TRUE(picture.Push(tick, payload).ok());
      }
      ASSERT_TRUE(picture.Render(view_tick).has_value());
      const nlohmann::json& want = query["entities"];
      ASSERT_EQ(picture.drawn().size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        const DrawnPosition& got = picture.drawn()[i];
        EXPECT_EQ(got.id, want[i]["id"].get<uint64_t>());
        EXPECT_EQ(got.x, want[i]["x"].get<double>());
        EXPECT_EQ(got.y, want[i]["y"].get<double>());
        EXPECT_EQ(got.z, want[i]["z"].get<double>());
      }
    }
  }
  EXPECT_GT(scenarios, 0);
}

}  // namespace
}  // namespace tessera::loadtest
