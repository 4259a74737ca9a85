// Presence in RealmHost: attach and detach counted per avatar, second
// tabs, swaps in place, identity changes, and hook patches committed and
// broadcast after what caused them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "realm/host.h"
#include "realm/host_testing.h"

namespace tessera::realm {
namespace {

using namespace host_testing;  // NOLINT

// Keeps a "here" row per attached avatar, like a lobby's who-is-here list.
class PresenceRows final : public RealmHooks {
 public:
  HookResult OnAvatarAttach(const RealmKindConfig&, std::string_view,
                            std::string_view avatar, const Json&) override {
    events.push_back("attach " + std::string(avatar));
    return Patch{
        Set(P({"players", std::string(avatar).c_str()}), {{"here", true}})};
  }
  HookResult OnAvatarDetach(const RealmKindConfig&, std::string_view,
                            std::string_view avatar, std::string_view reason,
                            const Json& state) override {
    events.push_back("detach " + std::string(avatar) + " " +
                     std::string(reason));
    if (!state["players"].contains(std::string(avatar))) return {};
    return Patch{
        {OpKind::kDelete, P({"players", std::string(avatar).c_str()}), {}}};
  }
  std::vector<std::string> events;
};

class RealmPresenceTest : public HostFixture {
 protected:
  void SetUp() override { Make({Kind()}, &hooks_); }
  PresenceRows hooks_;
};

TEST_F(RealmPresenceTest, ASecondTabNeitherAttachesNorDetaches) {
  std::shared_ptr<RecordingPeer> tab1 = Join("a");
  std::shared_ptr<RecordingPeer> tab2 = Join("a");
  EXPECT_EQ(hooks_.events, std::vector<std::string>({"attach a"}));
  host_->Detach("match", "m1", tab1.get());
  Pass();
  EXPECT_EQ(hooks_.events, std::vector<std::string>({"attach a"}));
  host_->Detach("match", "m1", tab2.get());
  Pass();
  EXPECT_EQ(hooks_.events,
            std::vector<std::string>({"attach a", "detach a left"}));
}

TEST_F(RealmPresenceTest, HookPatchesAreCommittedAndBroadcast) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  // a's row was committed after a's answer: a hears of it as version 1.
  EXPECT_EQ(a->attached[0].head, 0);
  EXPECT_EQ(a->Versions(), std::vector<int64_t>({1}));
  std::shared_ptr<RecordingPeer> b = Join("b");
  EXPECT_EQ(b->attached[0].state["players"]["a"]["here"], true);
  EXPECT_EQ(a->Versions(), std::vector<int64_t>({1, 2}));
  host_->Detach("match", "m1", b.get());
  Pass();
  ASSERT_EQ(a->Versions(), std::vector<int64_t>({1, 2, 3}));
  EXPECT_EQ(a->commits[2].patch[0].kind, OpKind::kDelete);
  EXPECT_EQ(a->commits[2].writer, nullptr);
}

TEST_F(RealmPresenceTest, ASameAvatarHelloSwapsInPlace) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  ASSERT_TRUE(
      host_->Attach("match", "m1", a, "a", a->attached[0].epoch, 1).ok());
  Pass();
  ASSERT_EQ(a->attached.size(), 2u);
  EXPECT_FALSE(a->attached[1].hydrate);  // it held version 1: a resume
  EXPECT_EQ(hooks_.events, std::vector<std::string>({"attach a"}));
}

TEST_F(RealmPresenceTest, AnotherIdentityOnTheSameSocketDetachesTheOldFirst) {
  std::shared_ptr<RecordingPeer> peer = Join("a");
  ASSERT_TRUE(host_->Attach("match", "m1", peer, "b", 0, 0).ok());
  Pass();
  EXPECT_EQ(hooks_.events,
            std::vector<std::string>(
                {"attach a", "detach a identity-changed", "attach b"}));
  ASSERT_EQ(peer->attached.size(), 2u);
  EXPECT_EQ(peer->attached[1].avatar, "b");
  // Writes are now judged as b's.
  host_->Write("match", "m1", peer.get(), 1,
               {Set(P({"players", "b", "x"}), 1)});
  host_->Write("match", "m1", peer.get(), 2, {Set(P({"players", "a"}), 1)});
  Pass();
  ASSERT_EQ(peer->rejected.size(), 1u);
  EXPECT_EQ(peer->rejected[0].seq, 2u);
}

TEST_F(RealmPresenceTest, APeerThatIsGoneIsSkipped) {
  std::shared_ptr<RecordingPeer> a = Join("a");
  std::shared_ptr<RecordingPeer> b = Join("b");
  b.reset();  // the session ended without a detach reaching the host yet
  host_->Write("match", "m1", a.get(), 1, {Set(P({"players", "a", "x"}), 1)});
  Pass();
  EXPECT_FALSE(a->commits.empty());
}

TEST_F(RealmPresenceTest, AKindsDeclaredPresenceKeepsARowPerAvatar) {
  Make(
      {Kind({{"presence",
              {{"path", "here/{avatar}"}, {"prune", {"players/{avatar}"}}}}})});
  std::shared_ptr<RecordingPeer> a = Join("a");
  std::shared_ptr<RecordingPeer> a2 = Join("a");
  std::shared_ptr<RecordingPeer> b = Join("b");
  EXPECT_EQ(b->attached[0].state["here"], Json::parse(R"({"a": true})"));
  host_->Write("match", "m1", b.get(), 1, {Set(P({"players", "b"}), 1)});
  Pass();
  host_->Detach("match", "m1", a.get());
  Pass();
  std::shared_ptr<RecordingPeer> c = Join("c");
  EXPECT_EQ(c->attached[0].state["here"],
            Json::parse(R"({"a": true, "b": true})"));
  host_->Detach("match", "m1", a2.get());
  host_->Detach("match", "m1", b.get());
  Pass();
  std::shared_ptr<RecordingPeer> d = Join("d");
  // d's own row follows its answer, as a commit.
  EXPECT_EQ(d->attached[0].state["here"], Json::parse(R"({"c": true})"));
  EXPECT_EQ(d->attached[0].state["players"], Json::object());  // b's pruned
  ASSERT_EQ(d->commits.size(), 1u);
  EXPECT_EQ(d->commits[0].patch, Patch({Set(P({"here", "d"}), true)}));
}

TEST_F(RealmPresenceTest, AHookPatchThatDoesNotApplyIsLoggedNotFatal) {
  class Broken final : public RealmHooks {
   public:
    HookResult OnAvatarAttach(const RealmKindConfig&, std::string_view,
                              std::string_view, const Json&) override {
      return Patch{{OpKind::kDelete, P({"nothing"}), {}}};
    }
    HookResult OnAvatarDetach(const RealmKindConfig&, std::string_view,
                              std::string_view, std::string_view,
                              const Json&) override {
      return {};
    }
  } broken;
  Make({Kind()}, &broken);
  std::shared_ptr<RecordingPeer> a = Join("a");
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("on_avatar_attach"), std::string::npos) << log_[0];
  host_->Write("match", "m1", a.get(), 1, {Set(P({"players", "a"}), 1)});
  Pass();
  EXPECT_EQ(a->Versions(), std::vector<int64_t>({1}));
}

}  // namespace
}  // namespace tessera::realm

namespace tessera::realm {
namespace {

using namespace host_testing;  // NOLINT

class RealmRejoinTest : public HostFixture {
 protected:
  void SetUp() override { Make({PresenceKind()}, &hooks_); }
  static RealmKindConfig PresenceKind() {
    return Kind({{"presence", {{"path", "here/{avatar}"}}}});
  }
  PresenceRows hooks_;
};

TEST_F(RealmRejoinTest, AfterARestartAvatarsThatDoNotComeBackAreDetached) {
  {
    std::shared_ptr<RecordingPeer> a = Join("a");
    std::shared_ptr<RecordingPeer> b = Join("b");
    // The server stops with both attached: their rows stay in the store.
    host_->Shutdown();
  }
  Make({PresenceKind()}, &hooks_);  // the restart
  hooks_.events.clear();
  std::shared_ptr<RecordingPeer> a = Join("a");
  EXPECT_EQ(a->attached[0].state["here"],
            Json::parse(R"({"a": true, "b": true})"));
  clock_.Advance(9'000'000);
  Pass();
  EXPECT_EQ(hooks_.events, std::vector<std::string>({"attach a"}));
  clock_.Advance(1'000'001);
  Pass();
  // b never came back: detached once, reason "gone"; a is untouched.
  EXPECT_EQ(hooks_.events,
            std::vector<std::string>({"attach a", "detach b gone"}));
  std::shared_ptr<RecordingPeer> c = Join("c");
  EXPECT_FALSE(c->attached[0].state["here"].contains("b"));
  EXPECT_TRUE(c->attached[0].state["here"].contains("a"));
}

}  // namespace
}  // namespace tessera::realm
