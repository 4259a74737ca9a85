#include "guest/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/clock.h"

namespace tessera::guest {
namespace {

void Count(void* arg) { ++*static_cast<int*>(arg); }

TEST(WatchdogTest, FiresOnceWhenTheDeadlinePasses) {
  FakeClock clock(1000);
  Watchdog dog(&clock);
  int fired = 0;
  Watchdog::Token t = dog.Arm(&Count, &fired, 1500);
  EXPECT_EQ(dog.Poll(1499), 0);
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(dog.Poll(1500), 1);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(dog.Poll(99999), 0);  // never twice
  EXPECT_EQ(fired, 1);
  EXPECT_TRUE(dog.Disarm(t));
  EXPECT_EQ(dog.armed(), 0u);
}

TEST(WatchdogTest, DisarmedInTimeNeverFires) {
  FakeClock clock;
  Watchdog dog(&clock);
  int fired = 0;
  Watchdog::Token t = dog.Arm(&Count, &fired, 100);
  EXPECT_FALSE(dog.Disarm(t));
  EXPECT_EQ(dog.Poll(1000), 0);
  EXPECT_EQ(fired, 0);
  EXPECT_FALSE(dog.Disarm(t));  // unknown token
}

TEST(WatchdogTest, IndependentDeadlines) {
  FakeClock clock;
  Watchdog dog(&clock);
  int a = 0, b = 0, c = 0;
  Watchdog::Token ta = dog.Arm(&Count, &a, 100);
  Watchdog::Token tb = dog.Arm(&Count, &b, 200);
  Watchdog::Token tc = dog.Arm(&Count, &c, 300);
  EXPECT_FALSE(dog.Disarm(tb));
  EXPECT_EQ(dog.Poll(250), 1);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 0);
  EXPECT_EQ(c, 0);
  EXPECT_EQ(dog.Poll(300), 1);
  EXPECT_EQ(c, 1);
  EXPECT_TRUE(dog.Disarm(ta));
  EXPECT_TRUE(dog.Disarm(tc));
}

// The thread polls on its own (real time); no test logic depends on how
// fast, only that it fires eventually and stops cleanly.
TEST(WatchdogTest, ThreadPollsTheClock) {
  FakeClock clock;
  Watchdog dog(&clock, /*poll_interval_us=*/200);
  dog.Start();
  std::atomic<int> fired{0};
  auto fire = [](void* arg) { ++*static_cast<std::atomic<int>*>(arg); };
  Watchdog::Token t = dog.Arm(fire, &fired, 5000);
  clock.Advance(5000);
  // However busy the machine, it fires within 30 s of real time.
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (fired.load() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(fired.load(), 1);
  EXPECT_TRUE(dog.Disarm(t));
  dog.Stop();
}

// With nothing armed the thread goes to sleep instead of polling; an Arm
// wakes it and the deadline still fires.
TEST(WatchdogTest, AnIdleThreadSleepsAndWakesForTheNextDeadline) {
  FakeClock clock;
  Watchdog dog(&clock, /*poll_interval_us=*/200);
  dog.Start();
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!dog.sleeping() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(dog.sleeping());
  std::atomic<int> fired{0};
  auto fire = [](void* arg) { ++*static_cast<std::atomic<int>*>(arg); };
  Watchdog::Token t = dog.Arm(fire, &fired, 5000);
  clock.Advance(5000);
  while (fired.load() == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(fired.load(), 1);
  EXPECT_TRUE(dog.Disarm(t));
  // Disarmed again: back to sleep.
  while (!dog.sleeping() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(dog.sleeping());
  dog.Stop();  // wakes it to stop
}

}  // namespace
}  // namespace tessera::guest
