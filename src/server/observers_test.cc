// The host's observer list (shard::ShardObservers), as the composition root
// uses it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "shard/shard_sink.h"

namespace tessera::server {
namespace {

class Recorder final : public shard::ShardSink {
 public:
  Recorder(std::string name, std::vector<std::string>* log)
      : name_(std::move(name)), log_(log) {}
  void OnFrame(std::string_view shard_id, uint64_t tick, std::string_view,
               const std::vector<shard::InputResult>&) override {
    log_->push_back(name_ + " frame " + std::string(shard_id) + " " +
                    std::to_string(tick));
  }
  void OnStopped(std::string_view shard_id, shard::StopReason,
                 std::string_view message) override {
    log_->push_back(name_ + " stop " + std::string(shard_id) + " " +
                    std::string(message));
  }

 private:
  const std::string name_;
  std::vector<std::string>* const log_;
};

TEST(ShardObserversTest, EveryEventReachesEachObserverInOrder) {
  std::vector<std::string> log;
  Recorder a("a", &log);
  Recorder b("b", &log);
  shard::ShardObservers observers({&a});
  observers.Add(nullptr);  // ignored
  observers.Add(&b);
  observers.OnFrame("s1", 3, "snap", {});
  auto views = std::make_shared<shard::ViewFrame>();
  views->tick = 4;
  observers.OnViews("s1", views);  // b and a: the default, as a frame
  observers.OnStopped("s1", shard::StopReason::kIdle, "idle");
  EXPECT_EQ(log, (std::vector<std::string>{
                     "a frame s1 3", "b frame s1 3", "a frame s1 4",
                     "b frame s1 4", "a stop s1 idle", "b stop s1 idle"}));
}

TEST(ShardObserversTest, NoObserverIsFine) {
  shard::ShardObservers observers;
  observers.OnFrame("s1", 1, "", {});
  observers.OnStopped("s1", shard::StopReason::kStopped, "");
}

}  // namespace
}  // namespace tessera::server
