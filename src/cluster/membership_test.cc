// Membership (membership.h) on a fake clock and a scripted store: joins,
// heartbeats, the fence measured from when the last landed heartbeat was
// sent, lapses, waiting for a live holder of the id, and the fence thread
// firing while the heartbeat thread hangs in a store call.
#include "cluster/membership.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::cluster {
namespace {

constexpr int64_t kSec = 1'000'000;

// A store whose answers the test sets; records the calls.
class ScriptedStore final : public MachineStore {
 public:
  Result<JoinAnswer> Join(const MachineInfo& self, uint64_t epoch,
                          uint64_t replaces) override {
    joins.push_back({epoch, replaces});
    if (!join_error.ok()) return join_error;
    if (held_by != 0 && replaces != held_by) {
      return JoinAnswer{false, held_by, hold_wait_ms};
    }
    holder = epoch;
    held_by = 0;
    (void)self;
    return JoinAnswer{true, 0, 0};
  }
  Result<bool> Heartbeat(std::string_view, uint64_t epoch) override {
    ++heartbeats;
    if (during_heartbeat) during_heartbeat();
    if (!heartbeat_error.ok()) return heartbeat_error;
    return epoch == holder && !lapsed;
  }
  Status Leave(std::string_view, uint64_t epoch) override {
    left.push_back(epoch);
    return Status::Ok();
  }
  Result<std::vector<MachineRecord>> List() override {
    return std::vector<MachineRecord>{};
  }
  // Placements are not Membership's business.
  Result<Placement> Place(std::string_view, std::string_view,
                          uint64_t) override {
    return Status(StatusCode::kInternal, "not in this test");
  }
  Status Unplace(std::string_view, std::string_view, uint64_t) override {
    return Status(StatusCode::kInternal, "not in this test");
  }
  Result<std::vector<Placement>> ListPlacements() override {
    return Status(StatusCode::kInternal, "not in this test");
  }
  Result<std::vector<Placement>> ListOrphanedPlacements() override {
    return Status(StatusCode::kInternal, "not in this test");
  }

  std::vector<std::pair<uint64_t, uint64_t>> joins;  // (epoch, replaces)
  std::vector<uint64_t> left;
  int heartbeats = 0;
  uint64_t holder = 0;
  uint64_t held_by = 0;  // another live process holds the id
  int64_t hold_wait_ms = 0;
  bool lapsed = false;
  Status join_error;
  Status heartbeat_error;
  std::function<void()> during_heartbeat;
};

struct Fixture {
  FakeClock clock{100 * kSec};
  ScriptedStore store;
  std::vector<uint64_t> joined;
  std::vector<std::string> fenced;
  std::vector<std::string> log;
  uint64_t next_epoch = 41;
  std::unique_ptr<Membership> membership;

  Fixture() {
    MembershipOptions options;
    options.self = {"m1", "127.0.0.1:4000", 100};
    options.clock = &clock;
    options.new_epoch = [this] { return ++next_epoch; };
    options.on_joined = [this](uint64_t e) { joined.push_back(e); };
    options.on_fenced = [this](std::string_view why) {
      fenced.emplace_back(why);
    };
    options.log = [this](std::string_view line) { log.emplace_back(line); };
    membership = std::make_unique<Membership>(&store, options);
  }
  int64_t Step() { return membership->Step(clock.NowUs()); }
};

TEST(MembershipTest, JoinsThenHeartbeatsEveryTwoSeconds) {
  Fixture f;
  EXPECT_FALSE(f.membership->may_run());
  EXPECT_EQ(f.membership->current_epoch(), 0u);  // guarded writes refused
  EXPECT_EQ(f.Step(), f.clock.NowUs() + 2 * kSec);
  ASSERT_EQ(f.joined, std::vector<uint64_t>{42});
  EXPECT_TRUE(f.membership->may_run());
  EXPECT_EQ(f.membership->current_epoch(), 42u);
  EXPECT_EQ(f.membership->machine_id(), "m1");
  EXPECT_EQ(f.store.joins.front().second, 0u);  // nothing to replace
  // Not due yet: no call.
  f.clock.Advance(kSec);
  f.Step();
  EXPECT_EQ(f.store.heartbeats, 0);
  for (int i = 0; i < 5; ++i) {
    f.clock.Advance(kSec);
    f.Step();
    f.clock.Advance(kSec);
    EXPECT_FALSE(f.membership->CheckFence(f.clock.NowUs()));
  }
  EXPECT_EQ(f.store.heartbeats, 5);
  EXPECT_EQ(f.membership->view().heartbeats, 5u);
  EXPECT_TRUE(f.fenced.empty());
}

TEST(MembershipTest, FencesFiveSecondsAfterTheLastLandedHeartbeatWasSent) {
  Fixture f;
  f.Step();  // joined at t0
  f.clock.Advance(2 * kSec);
  // This heartbeat is sent at t0+2 s but takes 2.5 s to land.
  f.store.during_heartbeat = [&] { f.clock.Advance(2'500'000); };
  f.Step();
  f.store.during_heartbeat = nullptr;
  f.store.heartbeat_error = Status(StatusCode::kIo, "connection refused");
  const int64_t sent = f.clock.NowUs() - 2'500'000;
  // Failing heartbeats from here on do not move the deadline.
  while (f.clock.NowUs() < sent + 5 * kSec) {
    EXPECT_FALSE(f.membership->CheckFence(f.clock.NowUs()));
    f.clock.Advance(100'000);
    f.Step();
  }
  EXPECT_TRUE(f.fenced.empty());
  f.clock.Set(sent + 5 * kSec + 1);
  EXPECT_TRUE(f.membership->CheckFence(f.clock.NowUs()));
  ASSERT_EQ(f.fenced.size(), 1u);
  EXPECT_NE(f.fenced[0].find("no heartbeat has landed for 5000 ms"),
            std::string::npos);
  EXPECT_FALSE(f.membership->may_run());
  EXPECT_EQ(f.membership->current_epoch(), 0u);
  // Once per lapse.
  EXPECT_TRUE(f.membership->CheckFence(f.clock.NowUs() + kSec));
  EXPECT_EQ(f.fenced.size(), 1u);
  EXPECT_EQ(f.membership->view().fences, 1u);
  EXPECT_GE(f.membership->view().heartbeat_failures, 2u);
}

TEST(MembershipTest, AfterAFenceItJoinsAgainWithANewEpochReplacingItsOld) {
  Fixture f;
  f.Step();
  f.store.heartbeat_error = Status(StatusCode::kIo, "down");
  f.clock.Advance(2 * kSec);
  f.Step();
  f.clock.Advance(4 * kSec);
  ASSERT_TRUE(f.membership->CheckFence(f.clock.NowUs()));
  // The database answers again: the next step joins, not heartbeats.
  f.store.heartbeat_error = Status::Ok();
  f.clock.Advance(2 * kSec);
  const int beats = f.store.heartbeats;
  f.Step();
  EXPECT_EQ(f.store.heartbeats, beats);
  ASSERT_EQ(f.joined, (std::vector<uint64_t>{42, 43}));
  EXPECT_EQ(f.store.joins.back(), (std::pair<uint64_t, uint64_t>{43, 42}));
  EXPECT_TRUE(f.membership->may_run());
  EXPECT_FALSE(f.membership->view().fenced);
  EXPECT_FALSE(f.membership->CheckFence(f.clock.NowUs() + 4 * kSec));
}

TEST(MembershipTest, AHeartbeatLandingAfterTheFenceDoesNotUndoIt) {
  Fixture f;
  f.Step();
  f.clock.Advance(2 * kSec);
  // The fence fires while this heartbeat is in the database's hands.
  f.store.during_heartbeat = [&] {
    f.clock.Advance(6 * kSec);
    EXPECT_TRUE(f.membership->CheckFence(f.clock.NowUs()));
  };
  f.Step();
  EXPECT_FALSE(f.membership->may_run());
  EXPECT_EQ(f.membership->view().heartbeats, 0u);
  f.store.during_heartbeat = nullptr;
  f.clock.Advance(2 * kSec);
  f.Step();
  EXPECT_EQ(f.joined.size(), 2u);  // only a new epoch brings it back
}

// A process stopped past the deadline (SIGSTOP) whose heartbeat thread
// wakes before the fence thread fences first, then joins again: a
// heartbeat sent now must not move a deadline that has already passed.
TEST(MembershipTest, AStepPastTheDeadlineFencesBeforeItHeartbeats) {
  Fixture f;
  f.Step();
  f.clock.Advance(7 * kSec);
  f.Step();
  EXPECT_EQ(f.store.heartbeats, 0);
  ASSERT_EQ(f.fenced.size(), 1u);
  EXPECT_EQ(f.joined, (std::vector<uint64_t>{42, 43}));
  EXPECT_TRUE(f.membership->may_run());
}

TEST(MembershipTest, ALapsedAnswerFencesAtOnceAndRejoins) {
  Fixture f;
  f.Step();
  f.store.lapsed = true;
  f.clock.Advance(2 * kSec);
  const int64_t next = f.Step();
  ASSERT_EQ(f.fenced.size(), 1u);
  EXPECT_NE(f.fenced[0].find("lapsed"), std::string::npos);
  EXPECT_FALSE(f.membership->may_run());
  EXPECT_EQ(next, f.clock.NowUs());  // join again now
  f.store.lapsed = false;
  f.Step();
  EXPECT_EQ(f.joined, (std::vector<uint64_t>{42, 43}));
}

TEST(MembershipTest, WaitsForALiveProcessHoldingTheSameId) {
  Fixture f;
  f.store.held_by = 7;
  f.store.hold_wait_ms = 600;
  EXPECT_EQ(f.Step(), f.clock.NowUs() + 600'000);
  EXPECT_TRUE(f.joined.empty());
  EXPECT_FALSE(f.membership->may_run());
  ASSERT_FALSE(f.log.empty());
  EXPECT_NE(f.log.back().find("held by a live process (epoch 7)"),
            std::string::npos);
  // A long wait is checked again every heartbeat period.
  f.store.hold_wait_ms = 9'000;
  f.clock.Advance(600'000);
  EXPECT_EQ(f.Step(), f.clock.NowUs() + 2 * kSec);
  // Not a member: nothing to fence.
  EXPECT_FALSE(f.membership->CheckFence(f.clock.NowUs() + 60 * kSec));
  f.store.held_by = 0;
  f.clock.Advance(2 * kSec);
  f.Step();
  EXPECT_EQ(f.joined.size(), 1u);
}

TEST(MembershipTest, AFailedJoinIsRetriedAndStopLeavesWithTheEpoch) {
  Fixture f;
  f.store.join_error = Status(StatusCode::kIo, "no route");
  f.Step();
  EXPECT_NE(f.membership->view().last_error.find("no route"),
            std::string::npos);
  f.store.join_error = Status::Ok();
  f.clock.Advance(2 * kSec);
  f.Step();
  EXPECT_EQ(f.joined.size(), 1u);
  EXPECT_TRUE(f.membership->view().last_error.empty());
  f.membership->Stop(/*leave=*/true);
  EXPECT_EQ(f.store.left, f.joined);  // the epoch drawn by the retry
  EXPECT_FALSE(f.membership->may_run());
}

// The threads with the real clock: the heartbeat thread hangs inside the
// store and the fence thread, doing no I/O, still fences on time.
TEST(MembershipTest, TheFenceThreadFencesWhileAHeartbeatHangs) {
  ScriptedStore store;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false, fenced = false;
  store.during_heartbeat = [&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
  };
  MembershipOptions options;
  options.self = {"m1", "", 0};
  options.heartbeat_every_us = 50'000;
  options.fence_after_us = 300'000;
  options.fence_check_every_us = 10'000;
  options.on_fenced = [&](std::string_view) {
    std::lock_guard<std::mutex> lock(mu);
    fenced = true;
    cv.notify_all();
  };
  Membership membership(&store, options);
  const auto start = std::chrono::steady_clock::now();
  membership.Start();
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(
        cv.wait_for(lock, std::chrono::seconds(10), [&] { return fenced; }));
    release = true;
    cv.notify_all();
  }
  // Never before the fence time: the join at the start counts as landed.
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(300));
  EXPECT_FALSE(membership.may_run());
  membership.Stop(/*leave=*/false);
}

}  // namespace
}  // namespace tessera::cluster
