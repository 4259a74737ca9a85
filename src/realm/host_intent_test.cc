// Intents and the module-given initial state in RealmHost, through a
// RealmHooks that stands in for a realm module.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "realm/host.h"
#include "realm/host_testing.h"

namespace tessera::realm {
namespace {

using namespace host_testing;  // NOLINT

// A module's logic in miniature: "bump" adds args.by to n (at most 10 at a
// time), "noop" changes nothing, "bad" returns a patch that cannot apply.
class Counter final : public RealmHooks {
 public:
  Result<std::optional<Json>> InitialState(const RealmKindConfig&,
                                           std::string_view key) override {
    if (key == "broken") return Status(StatusCode::kTrap, "the module trapped");
    Json state = Initial();
    state["key"] = std::string(key);
    return std::optional<Json>(state);
  }
  Result<HookResult> ApplyIntent(const RealmKindConfig&, std::string_view,
                                 std::string_view avatar,
                                 std::string_view intent, const Json& args,
                                 const Json& state) override {
    if (intent == "noop") return HookResult();
    if (intent == "bad")
      return HookResult(Patch({{OpKind::kDelete, P({"zzz"}), {}}}));
    if (intent != "bump") return Status(StatusCode::kTrap, "no such intent");
    const int64_t by = args.value("by", 0);
    if (by < 1 || by > 10) {
      return Status(StatusCode::kFailedPrecondition,
                    std::string(avatar) + " may bump by 1..10 only");
    }
    return HookResult(Patch({Set(P({"n"}), state["n"].get<int64_t>() + by)}));
  }
};

class RealmIntentTest : public HostFixture {
 protected:
  void SetUp() override { Make({Kind()}, &hooks_); }
  Counter hooks_;
};

TEST_F(RealmIntentTest, TheModulesInitialStateStartsTheInstance) {
  RealmHostOptions options;
  options.pool = &pool_;
  options.store = store_.get();
  options.hooks = &hooks_;  // no initial_state override this time
  host_ = std::make_unique<RealmHost>(std::vector<RealmKindConfig>{Kind()},
                                      std::move(options));
  std::shared_ptr<RecordingPeer> a = Join("a", "room-7");
  EXPECT_EQ(a->attached[0].state["key"], "room-7");
  auto peer = std::make_shared<RecordingPeer>();
  ASSERT_TRUE(host_->Attach("match", "broken", peer, "a", 0, 0).ok());
  Pass();
  ASSERT_EQ(peer->closed.size(), 1u);
  EXPECT_EQ(peer->closed[0].code, kCloseRealmUnavailable);
  EXPECT_NE(peer->closed[0].reason.find("the module trapped"),
            std::string::npos);
}

TEST_F(RealmIntentTest, AnIntentsPatchIsCommittedBroadcastAndAnswered) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  std::shared_ptr<RecordingPeer> b = Join("b");
  host_->Intent("match", "m1", a.get(), 5, "bump", {{"by", 3}});
  host_->Intent("match", "m1", a.get(), 6, "bump", {{"by", 4}});
  Pass();
  EXPECT_EQ(b->Versions(), std::vector<int64_t>({1, 2}));
  EXPECT_EQ(b->commits[1].patch, Patch({Set(P({"n"}), 7)}));
  EXPECT_EQ(a->commits[0].writer, nullptr);  // the server wrote it
  EXPECT_EQ(a->intents,
            (std::vector<std::pair<uint64_t, int64_t>>{{5, 1}, {6, 2}}));
  EXPECT_TRUE(b->intents.empty());
}

TEST_F(RealmIntentTest, RefusalsFailuresAndNoChangesAreAnswered) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  host_->Intent("match", "m1", a.get(), 1, "bump", {{"by", 99}});
  host_->Intent("match", "m1", a.get(), 2, "explode", Json::object());
  host_->Intent("match", "m1", a.get(), 3, "bad", Json::object());
  host_->Intent("match", "m1", a.get(), 4, "noop", Json::object());
  Pass();
  ASSERT_EQ(a->rejected.size(), 3u);
  EXPECT_EQ(a->rejected[0].code, "refused");
  EXPECT_EQ(a->rejected[0].message, "a may bump by 1..10 only");
  EXPECT_EQ(a->rejected[1].code, "failed");
  EXPECT_EQ(a->rejected[2].code, "invalid_patch");
  EXPECT_EQ(a->intents, (std::vector<std::pair<uint64_t, int64_t>>{{4, 0}}));
  EXPECT_TRUE(a->commits.empty());
}

TEST_F(RealmIntentTest, WithoutAModuleIntentsAreRefused) {
  Make({Kind()});
  std::shared_ptr<RecordingPeer> a = Join("a");
  host_->Intent("match", "m1", a.get(), 1, "bump", {{"by", 1}});
  Pass();
  ASSERT_EQ(a->rejected.size(), 1u);
  EXPECT_EQ(a->rejected[0].code, "refused");
  EXPECT_NE(a->rejected[0].message.find("has no module"), std::string::npos);
}

}  // namespace
}  // namespace tessera::realm
