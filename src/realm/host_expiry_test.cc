// Idle expiry in RealmHost (expireAfterIdleMs): armed on the last detach
// and at boot, disarmed by attaches, vetoed by the hooks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "realm/host.h"
#include "realm/host_testing.h"

namespace tessera::realm {
namespace {

using namespace host_testing;  // NOLINT

class Vetoer final : public RealmHooks {
 public:
  bool OnExpire(const RealmKindConfig&, std::string_view key,
                const Json& state) override {
    asked.push_back(std::string(key) + " n=" + state["n"].dump());
    return vetoes-- > 0;
  }
  int vetoes = 0;
  std::vector<std::string> asked;
};

class RealmExpiryTest : public HostFixture {
 protected:
  void SetUp() override {
    Make({Kind({{"expireAfterIdleMs", 5000}})}, &hooks_);
  }
  bool Stored(const std::string& id = "match/m1") {
    Result<std::optional<LoadedRealm>> loaded = store_->Load(id);
    EXPECT_TRUE(loaded.ok());
    return loaded.ok() && loaded->has_value();
  }
  void WriteAndLeave() {
    std::shared_ptr<RecordingPeer> a = Join("a");
    ASSERT_TRUE(Update("m1", {Set(P({"n"}), 7)}).ok());
    host_->Detach("match", "m1", a.get());
    Pass();
  }
  Vetoer hooks_;
};

TEST_F(RealmExpiryTest,
       AnIdleRealmIsDroppedAfterItsPeriodAndBootsGenesisAgain) {
  WriteAndLeave();
  clock_.Advance(4'900'000);
  Pass();
  EXPECT_TRUE(Stored());
  clock_.Advance(200'000);
  Pass();  // the reaper fires and queues the expiry
  Pass();
  EXPECT_FALSE(Stored());
  EXPECT_EQ(hooks_.asked, std::vector<std::string>({"m1 n=7"}));
  std::shared_ptr<RecordingPeer> back = Join("b");
  EXPECT_TRUE(back->attached[0].hydrate);
  EXPECT_EQ(back->attached[0].epoch, 1);
  EXPECT_EQ(back->attached[0].head, 0);
  EXPECT_EQ(back->attached[0].state, Initial());
}

TEST_F(RealmExpiryTest, AnAttachBeforeTheDeadlineDisarmsIt) {
  WriteAndLeave();
  clock_.Advance(3'000'000);
  std::shared_ptr<RecordingPeer> b = Join("b");
  clock_.Advance(10'000'000);
  Pass();
  Pass();
  EXPECT_TRUE(Stored());
  EXPECT_TRUE(hooks_.asked.empty());
  // Its own last detach arms a new period.
  host_->Detach("match", "m1", b.get());
  Pass();
  clock_.Advance(5'000'001);
  Pass();
  Pass();
  EXPECT_FALSE(Stored());
}

TEST_F(RealmExpiryTest, AVetoKeepsTheRealmForOneMorePeriod) {
  hooks_.vetoes = 1;
  WriteAndLeave();
  clock_.Advance(1'100'000);
  Pass();  // unloaded from memory meanwhile
  EXPECT_EQ(host_->instance_count(), 0u);
  clock_.Advance(4'000'000);
  Pass();
  Pass();
  EXPECT_TRUE(Stored());  // vetoed, after loading it to ask
  EXPECT_EQ(hooks_.asked.size(), 1u);
  clock_.Advance(5'000'001);
  Pass();
  Pass();
  EXPECT_FALSE(Stored());
  EXPECT_EQ(hooks_.asked.size(), 2u);
}

TEST_F(RealmExpiryTest, BootArmsEveryStoredRealm) {
  WriteAndLeave();
  // A new host over the same store: nothing attached since the boot.
  Make({Kind({{"expireAfterIdleMs", 5000}})});
  host_->ArmExpiry("match", "m1");
  host_->ArmExpiry("nope", "m1");  // unknown kinds are ignored
  clock_.Advance(5'000'001);
  Pass();
  Pass();
  EXPECT_FALSE(Stored());
}

}  // namespace
}  // namespace tessera::realm
