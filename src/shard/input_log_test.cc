// The input log's bytes and ring (input_log.h, input_log_format.h) on
// MemoryLogFiles: records round-trip, a torn or corrupt tail is ignored,
// segments rotate at saves and the ring drops the oldest, and a log opened
// again goes on numbering after what is there.
#include "shard/input_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tessera::shard {
namespace {

using ::testing::HasSubstr;

TickRecord Tick(uint64_t n, std::string payload = "in") {
  TickRecord t;
  t.tick = n;
  t.dt_us = 50'000;
  t.fuel = 1000 + static_cast<int64_t>(n);
  t.snapshot_taken = true;
  t.snapshot_hash = SnapshotHash("snap" + std::to_string(n));
  t.inputs.push_back(LoggedInput{"alice", n, std::move(payload), {}});
  return t;
}

RunRecord Header(uint64_t id) {
  return RunRecord{id, "counter", "v1", "params", false};
}

// The log over memory files it shares with the test.
struct Fixture {
  MemoryLogFiles* files = nullptr;
  std::unique_ptr<InputLog> log;
};

Fixture Open(InputLogOptions options = {},
             std::unique_ptr<MemoryLogFiles> files = nullptr) {
  if (files == nullptr) files = std::make_unique<MemoryLogFiles>();
  Fixture f;
  f.files = files.get();
  auto opened = InputLog::Open(std::move(files), options);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  f.log = std::move(opened).value();
  return f;
}

TEST(InputLogFormatTest, EveryFieldRoundTrips) {
  TickRecord tick = Tick(7);
  tick.messages = true;
  tick.stop = 4;
  tick.message = "panic: boom";
  tick.inputs.push_back(
      LoggedInput{"bob", 99, std::string("\0\xff", 2), std::string("rewind")});
  std::string bytes(kSegmentMagic);
  bytes += EncodeRecord(Header(3)) + EncodeRecord(SaveRecord{5, "state"}) +
           EncodeRecord(tick);
  ParsedSegment parsed = ParseSegment(bytes);
  ASSERT_TRUE(parsed.has_magic);
  EXPECT_EQ(parsed.ignored_bytes, 0u);
  ASSERT_EQ(parsed.records.size(), 3u);
  const auto& run = std::get<RunRecord>(parsed.records[0]);
  EXPECT_EQ(run.run_id, 3u);
  EXPECT_EQ(run.params, "params");
  EXPECT_EQ(std::get<SaveRecord>(parsed.records[1]).state, "state");
  const auto& t = std::get<TickRecord>(parsed.records[2]);
  EXPECT_EQ(t.tick, 7u);
  EXPECT_EQ(t.fuel, 1007);
  EXPECT_TRUE(t.messages);
  EXPECT_EQ(t.stop, 4);
  EXPECT_EQ(t.message, "panic: boom");
  ASSERT_EQ(t.inputs.size(), 2u);
  EXPECT_EQ(t.inputs[1].bytes, std::string("\0\xff", 2));
  EXPECT_EQ(t.inputs[1].rewind, "rewind");
  EXPECT_FALSE(t.inputs[0].rewind.has_value());
}

TEST(InputLogFormatTest, ATornOrCorruptTailIsIgnored) {
  std::string bytes(kSegmentMagic);
  bytes += EncodeRecord(Header(1)) + EncodeRecord(Tick(1));
  const size_t good = bytes.size();
  const std::string next = EncodeRecord(Tick(2));
  // Cut anywhere inside the last record: the first two survive.
  for (size_t cut = 1; cut < next.size(); ++cut) {
    ParsedSegment parsed = ParseSegment(bytes + next.substr(0, cut));
    EXPECT_EQ(parsed.records.size(), 2u) << "cut at " << cut;
    EXPECT_EQ(parsed.ignored_bytes, cut);
  }
  // A flipped byte in the last record's body fails its checksum.
  std::string flipped = bytes + next;
  flipped[good + 12] ^= 0x20;
  EXPECT_EQ(ParseSegment(flipped).records.size(), 2u);
  EXPECT_FALSE(ParseSegment("not a segment").has_magic);
}

TEST(InputLogTest, ReadsBackTheRunsTicksAndSaves) {
  Fixture f = Open();
  ASSERT_TRUE(f.log->BeginRun(Header(1)).ok());
  ASSERT_TRUE(f.log->Append(Tick(1)).ok());
  ASSERT_TRUE(f.log->Append(SaveRecord{1, "s1"}).ok());
  ASSERT_TRUE(f.log->Append(Tick(2)).ok());
  SaveRecord restored{0, "from store"};
  ASSERT_TRUE(
      f.log->BeginRun(RunRecord{2, "counter", "v1", "p", true}, &restored)
          .ok());
  ASSERT_TRUE(f.log->Append(Tick(1)).ok());
  ASSERT_TRUE(f.log->Sync().ok());
  EXPECT_EQ(f.files->syncs(), 1);

  Result<ReadLog> read = ReadInputLog(*f.files);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->runs.size(), 2u);
  EXPECT_EQ(read->runs[0].ticks.size(), 2u);
  ASSERT_EQ(read->runs[0].saves.size(), 1u);
  EXPECT_EQ(read->runs[0].saves[0].state, "s1");
  EXPECT_TRUE(read->runs[1].run.restored);
  ASSERT_EQ(read->runs[1].saves.size(), 1u);
  EXPECT_EQ(read->runs[1].saves[0].state, "from store");
  EXPECT_TRUE(read->notes.empty());
}

TEST(InputLogTest, ATornLastWriteLosesOnlyThatTick) {
  Fixture f = Open();
  ASSERT_TRUE(f.log->BeginRun(Header(1)).ok());
  for (uint64_t t = 1; t <= 3; ++t) ASSERT_TRUE(f.log->Append(Tick(t)).ok());
  std::string& segment = f.files->files().begin()->second;
  segment.resize(segment.size() - 3);  // the crash cut the last write
  Result<ReadLog> read = ReadInputLog(*f.files);
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->runs.size(), 1u);
  ASSERT_EQ(read->runs[0].ticks.size(), 2u);
  EXPECT_EQ(read->runs[0].ticks.back().tick, 2u);
  ASSERT_EQ(read->notes.size(), 1u);
  EXPECT_THAT(read->notes[0], HasSubstr("torn or corrupt"));
}

TEST(InputLogTest, TheRingRotatesAtSavesAndDropsTheOldestSegments) {
  InputLogOptions options;
  options.ring_bytes = 256 << 10;
  options.segment_bytes = 64 << 10;
  Fixture f = Open(options);
  ASSERT_TRUE(f.log->BeginRun(Header(1)).ok());
  const std::string payload(1000, 'x');
  uint64_t tick = 0;
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(f.log->Append(Tick(++tick, payload)).ok());
    }
    ASSERT_TRUE(f.log->Append(SaveRecord{tick, "state"}).ok());
  }
  // ~820 KB written into a 256 KiB ring of 64 KiB segments.
  EXPECT_LE(f.log->total_bytes(), options.ring_bytes);
  EXPECT_GE(f.files->files().size(), 3u);
  EXPECT_LE(f.files->files().size(), 5u);
  Result<ReadLog> read = ReadInputLog(*f.files);
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->runs.size(), 1u);  // each segment repeats the run header
  const LoggedRun& run = read->runs[0];
  EXPECT_EQ(run.ticks.back().tick, tick);
  EXPECT_GT(run.ticks.front().tick, 1u);
  // Contiguous from the oldest segment kept, which begins with a save.
  for (size_t i = 1; i < run.ticks.size(); ++i) {
    EXPECT_EQ(run.ticks[i].tick, run.ticks[i - 1].tick + 1);
  }
  ASSERT_FALSE(run.saves.empty());
  EXPECT_EQ(run.saves.front().tick + 1, run.ticks.front().tick);
}

TEST(InputLogTest, AReopenedLogNumbersOnAndClearRemovesEverything) {
  Fixture first = Open();
  ASSERT_TRUE(first.log->BeginRun(Header(1)).ok());
  ASSERT_TRUE(first.log->Append(Tick(1)).ok());
  // A restarted server opens the same files again.
  auto copy = std::make_unique<MemoryLogFiles>(*first.files);
  Fixture second = Open({}, std::move(copy));
  ASSERT_TRUE(second.log->BeginRun(Header(2)).ok());
  ASSERT_EQ(second.files->files().size(), 2u);
  EXPECT_EQ(second.files->files().begin()->first, "000000000000.log");
  EXPECT_EQ(second.files->files().rbegin()->first, "000000000001.log");
  Result<ReadLog> read = ReadInputLog(*second.files);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->runs.size(), 2u);
  ASSERT_TRUE(second.log->Clear().ok());
  EXPECT_TRUE(second.files->files().empty());
  EXPECT_FALSE(second.log->Append(Tick(1)).ok());  // no run after Clear
}

// The writer begins a run only at a segment's start, but a file whose
// middle holds a run header (found by the fuzzer) is read as two runs, with
// nothing after the second header lost; a repeated header of the same run
// continues it.
TEST(InputLogTest, ARunHeaderInsideASegmentStartsARun) {
  MemoryLogFiles files;
  std::string bytes(kSegmentMagic);
  bytes += EncodeRecord(Header(1)) + EncodeRecord(Tick(1)) +
           EncodeRecord(Header(1)) + EncodeRecord(Tick(2)) +
           EncodeRecord(Header(2)) + EncodeRecord(SaveRecord{0, "s"}) +
           EncodeRecord(Tick(1));
  ASSERT_TRUE(files.Append("000000000000.log", bytes).ok());
  Result<ReadLog> read = ReadInputLog(files);
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->runs.size(), 2u);
  EXPECT_EQ(read->runs[0].run.run_id, 1u);
  ASSERT_EQ(read->runs[0].ticks.size(), 2u);
  EXPECT_EQ(read->runs[0].ticks[1].tick, 2u);
  EXPECT_EQ(read->runs[1].run.run_id, 2u);
  EXPECT_EQ(read->runs[1].saves.size(), 1u);
  EXPECT_EQ(read->runs[1].ticks.size(), 1u);
}

TEST(InputLogTest, ShardIdsBecomeSafeDirectoryNames) {
  EXPECT_EQ(InputLogDirName("arena-1_A"), "arena-1_A");
  EXPECT_EQ(InputLogDirName(".."), "%2E%2E");
  EXPECT_EQ(InputLogDirName("a/b"), "a%2Fb");
}

}  // namespace
}  // namespace tessera::shard
