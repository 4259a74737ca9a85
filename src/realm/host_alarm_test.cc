// Alarms in RealmHost (host.h "Alarms"): set, moved and cancelled by hooks,
// fired on time, retried with backoff, stored with their commits, kept
// across a restart, waking an unloaded instance, dying with an ephemeral
// document.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "realm/host.h"
#include "realm/host_testing.h"

namespace tessera::realm {
namespace {

using namespace host_testing;  // NOLINT

// Intents "arm" {name, in_ms} and "cancel" {name} set alarms; a due alarm
// counts itself in the document ("n" for "turn"), unless it is told to
// fail first; "tick" re-arms itself.
class Alarmed final : public RealmHooks {
 public:
  Result<HookResult> ApplyIntent(const RealmKindConfig&, std::string_view,
                                 std::string_view, std::string_view intent,
                                 const Json& args, const Json&) override {
    HookResult result;
    const std::string name = args.value("name", "");
    if (intent == "arm") {
      result.alarms.push_back({name, args.value("in_ms", int64_t{0})});
    } else if (intent == "cancel") {
      result.alarms.push_back({name, std::nullopt});
    } else if (intent == "bump-and-arm") {
      result.patch = {Set(P({"n"}), 100)};
      result.alarms.push_back({name, args.value("in_ms", int64_t{0})});
    } else {
      return Status(StatusCode::kFailedPrecondition, "no such intent");
    }
    return result;
  }
  Result<HookResult> OnAlarm(const RealmKindConfig&, std::string_view,
                             std::string_view name, int32_t failures,
                             const Json& state) override {
    calls.push_back(std::string(name) + "/" + std::to_string(failures));
    if (name == "unknown") return Status(StatusCode::kNotFound, "no handler");
    if (fail_first[std::string(name)]-- > 0) {
      return Status(StatusCode::kTrap, "the handler trapped");
    }
    if (name == "bad-patch") {
      return HookResult(Patch({{OpKind::kDelete, P({"missing"}), {}}}));
    }
    HookResult result(Patch({Set(P({"n"}), state["n"].get<int64_t>() + 1)}));
    if (name == "tick") result.alarms.push_back({"tick", 100});
    return result;
  }
  std::vector<std::string> calls;  // "<name>/<failures>"
  std::map<std::string, int> fail_first;
};

class RealmAlarmTest : public HostFixture {
 protected:
  void SetUp() override { Make({Kind()}, &hooks_); }
  // Intent `intent` of `peer` with `args`, run to its answer.
  void Ask(const std::shared_ptr<RecordingPeer>& peer,
           const std::string& intent, Json args,
           const std::string& key = "m1") {
    host_->Intent("match", key, peer.get(), ++seq_, intent, std::move(args));
    Pass();
  }
  // Moves the clocks on by `ms` and lets the clock task and the instance
  // run.
  void Wait(int64_t ms) {
    Advance(ms);
    Pass();
    Pass();
  }
  std::vector<StoredAlarm> StoredAlarms() {
    Result<std::vector<StoredAlarm>> listed = store_->ListAlarms();
    EXPECT_TRUE(listed.ok());
    return listed.ok() ? *listed : std::vector<StoredAlarm>();
  }
  int64_t StoredN(const std::string& id = "match/m1") {
    Result<std::optional<LoadedRealm>> loaded = store_->Load(id);
    if (!loaded.ok() || !loaded->has_value()) return -1;
    return (*loaded)->head_version();
  }
  Alarmed hooks_;
  uint64_t seq_ = 0;
};

TEST_F(RealmAlarmTest, AnAlarmFiresAtItsDeadlineAndItsPatchIsBroadcast) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "turn"}, {"in_ms", 5000}});
  ASSERT_EQ(StoredAlarms().size(), 1u);
  EXPECT_EQ(StoredAlarms()[0].alarm,
            (RealmAlarm{"turn", wall_.UnixNowMs() + 5000, 0}));
  EXPECT_EQ(host_->Alarms("match", "m1").size(), 1u);
  Wait(4999);
  EXPECT_TRUE(hooks_.calls.empty());
  Wait(1);
  EXPECT_EQ(hooks_.calls, (std::vector<std::string>{"turn/0"}));
  ASSERT_EQ(a->commits.size(), 1u);
  EXPECT_EQ(a->commits[0].patch[0].value, 1);
  // Done: gone from the clock and the store, in the handler's commit.
  EXPECT_TRUE(host_->Alarms("match", "m1").empty());
  EXPECT_TRUE(StoredAlarms().empty());
  Wait(60'000);
  EXPECT_EQ(hooks_.calls.size(), 1u);
}

TEST_F(RealmAlarmTest, AnAlarmIsStoredWithTheCommitThatSetIt) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "bump-and-arm", {{"name", "turn"}, {"in_ms", 1000}});
  EXPECT_EQ(StoredN(), 1);
  EXPECT_EQ(StoredAlarms().size(), 1u);
}

TEST_F(RealmAlarmTest, AFailingHandlerIsRetriedWithBackoffWhileOthersRun) {
  hooks_.fail_first["turn"] = 4;
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "turn"}, {"in_ms", 0}});
  Ask(a, "arm", {{"name", "other"}, {"in_ms", 3000}});
  Pass();
  EXPECT_EQ(hooks_.calls, (std::vector<std::string>{"turn/0"}));
  ASSERT_EQ(StoredAlarms().size(), 2u);
  EXPECT_EQ(StoredAlarms()[1].alarm.failures, 1);  // "turn", put off 2 s
  EXPECT_EQ(StoredAlarms()[1].alarm.due_unix_ms, wall_.UnixNowMs() + 2000);
  Wait(1999);
  EXPECT_EQ(hooks_.calls.size(), 1u);
  Wait(1);     // t = 2 s: the first retry
  Wait(1000);  // t = 3 s: the other alarm is not held up
  EXPECT_EQ(hooks_.calls,
            (std::vector<std::string>{"turn/0", "turn/1", "other/0"}));
  Wait(2999);
  EXPECT_EQ(hooks_.calls.size(), 3u);
  Wait(1);      // t = 6 s: 4 s after the first retry
  Wait(8000);   // t = 14 s
  Wait(16000);  // t = 30 s: the fifth call succeeds
  EXPECT_EQ(hooks_.calls,
            (std::vector<std::string>{"turn/0", "turn/1", "other/0", "turn/2",
                                      "turn/3", "turn/4"}));
  EXPECT_TRUE(StoredAlarms().empty());
  EXPECT_EQ(a->commits.size(), 2u);  // "other" and the last "turn"
  EXPECT_TRUE(a->closed.empty());
  bool logged = false;
  for (const std::string& line : log_) {
    logged |=
        line.find("alarm \"turn\" failed (4 in a row), retried in 16 s") !=
        std::string::npos;
  }
  EXPECT_TRUE(logged);
}

TEST_F(RealmAlarmTest, BackoffDoublesFromTwoSecondsUpToFiveMinutes) {
  EXPECT_EQ(AlarmBackoffMs(1), 2'000);
  EXPECT_EQ(AlarmBackoffMs(2), 4'000);
  EXPECT_EQ(AlarmBackoffMs(3), 8'000);
  EXPECT_EQ(AlarmBackoffMs(8), 256'000);
  EXPECT_EQ(AlarmBackoffMs(9), 300'000);
  EXPECT_EQ(AlarmBackoffMs(1000), 300'000);
}

TEST_F(RealmAlarmTest, AHandlerWhosePatchDoesNotApplyIsRetried) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "bad-patch"}, {"in_ms", 10}});
  Wait(10);
  Wait(2000);
  EXPECT_EQ(hooks_.calls,
            (std::vector<std::string>{"bad-patch/0", "bad-patch/1"}));
  EXPECT_TRUE(a->commits.empty());
  EXPECT_TRUE(a->closed.empty());
}

TEST_F(RealmAlarmTest, ACancelledAlarmNeverFiresAndASetAgainMovesIt) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "turn"}, {"in_ms", 1000}});
  Ask(a, "cancel", {{"name", "turn"}});
  Ask(a, "arm", {{"name", "moved"}, {"in_ms", 1000}});
  Ask(a, "arm", {{"name", "moved"}, {"in_ms", 5000}});
  EXPECT_EQ(StoredAlarms().size(), 1u);
  Wait(1000);
  EXPECT_TRUE(hooks_.calls.empty());
  Wait(4000);
  EXPECT_EQ(hooks_.calls, (std::vector<std::string>{"moved/0"}));
}

TEST_F(RealmAlarmTest, AnAlarmThatSetsItselfAgainTicks) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "tick"}, {"in_ms", 100}});
  for (int i = 0; i < 5; ++i) Wait(100);
  EXPECT_EQ(hooks_.calls.size(), 5u);
  EXPECT_EQ(a->commits.size(), 5u);
  EXPECT_EQ(StoredAlarms().size(), 1u);  // armed for the next one
}

TEST_F(RealmAlarmTest, AnAlarmWithoutAHandlerIsDropped) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "unknown"}, {"in_ms", 10}});
  Wait(10);
  Wait(10'000);
  EXPECT_EQ(hooks_.calls, (std::vector<std::string>{"unknown/0"}));
  EXPECT_TRUE(StoredAlarms().empty());
}

TEST_F(RealmAlarmTest, InvalidAlarmsAreLoggedAndSkipped) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", ""}, {"in_ms", 10}});
  Ask(a, "arm", {{"name", "past"}, {"in_ms", -5}});
  Ask(a, "arm", {{"name", std::string(129, 'x')}, {"in_ms", 10}});
  EXPECT_TRUE(StoredAlarms().empty());
  EXPECT_GE(log_.size(), 3u);
}

TEST_F(RealmAlarmTest, AnUnloadedInstanceIsWokenByItsAlarm) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "turn"}, {"in_ms", 60'000}});
  host_->Detach("match", "m1", a.get());
  Pass();
  Wait(2000);
  EXPECT_EQ(host_->instance_count(), 0u);
  Wait(58'000);
  EXPECT_EQ(hooks_.calls, (std::vector<std::string>{"turn/0"}));
  EXPECT_EQ(StoredN(), 1);
  EXPECT_TRUE(StoredAlarms().empty());
}

TEST_F(RealmAlarmTest, StoredAlarmsOutliveTheHostAndOverdueOnesFireAtOnce) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "soon"}, {"in_ms", 5000}});
  Ask(a, "arm", {{"name", "later"}, {"in_ms", 50'000}});
  host_.reset();  // the process stops
  a.reset();
  Advance(10'000);  // down past "soon"'s deadline
  Make({Kind()}, &hooks_);
  EXPECT_TRUE(host_->LoadAlarms().ok());
  EXPECT_EQ(host_->Alarms("match", "m1").size(), 2u);
  Pass();
  Pass();
  EXPECT_EQ(hooks_.calls, (std::vector<std::string>{"soon/0"}));
  Wait(39'999);
  EXPECT_EQ(hooks_.calls.size(), 1u);
  Wait(1);
  EXPECT_EQ(hooks_.calls, (std::vector<std::string>{"soon/0", "later/0"}));
  EXPECT_EQ(StoredN(), 2);
  EXPECT_TRUE(StoredAlarms().empty());
}

TEST_F(RealmAlarmTest, AnEphemeralRealmsAlarmsDieWithItsDocument) {
  Make({Kind({{"persistence", "ephemeral"}})}, &hooks_);
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "turn"}, {"in_ms", 500}});
  Wait(500);
  EXPECT_EQ(hooks_.calls, (std::vector<std::string>{"turn/0"}));
  EXPECT_EQ(a->commits.size(), 1u);
  Ask(a, "arm", {{"name", "turn"}, {"in_ms", 60'000}});
  host_->Detach("match", "m1", a.get());
  Pass();
  Wait(2000);  // unloaded: the document and its alarm are gone
  EXPECT_EQ(host_->instance_count(), 0u);
  EXPECT_TRUE(host_->Alarms("match", "m1").empty());
  Wait(60'000);
  EXPECT_EQ(hooks_.calls.size(), 1u);
  EXPECT_TRUE(StoredAlarms().empty());
}

TEST_F(RealmAlarmTest, AnExpiredRealmLosesItsAlarms) {
  Make({Kind({{"expireAfterIdleMs", 5000}})}, &hooks_);
  std::shared_ptr<RecordingPeer> a = Join("a");
  Ask(a, "arm", {{"name", "turn"}, {"in_ms", 60'000}});
  host_->Detach("match", "m1", a.get());
  Pass();
  Wait(5000);
  Pass();
  EXPECT_EQ(StoredN(), -1);
  EXPECT_TRUE(StoredAlarms().empty());
  Wait(60'000);
  EXPECT_TRUE(hooks_.calls.empty());
}

}  // namespace
}  // namespace tessera::realm
