// Rendezvous hashing (rendezvous.h): every machine computes the same owner
// whatever the order it lists the machines in; a dead machine's shards are
// the only ones that move, and they spread over the live machines.
#include "cluster/rendezvous.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tessera::cluster {
namespace {

TEST(RendezvousTest, TheScoreIsTheFirstEightBytesOfTheDigest) {
  // SHA-256("s1\0m1") begins 0xc7 0x7f ... (computed independently with
  // `printf 's1\0m1' | sha256sum`).
  EXPECT_EQ(RendezvousScore("s1", "m1"), 0xc77fde41331bca59u);
  EXPECT_NE(RendezvousScore("s1", "m1"), RendezvousScore("s1", "m2"));
  EXPECT_NE(RendezvousScore("s1", "m1"), RendezvousScore("s1m", "1"));
  EXPECT_EQ(RendezvousOwner("s1", {}), "");
}

TEST(RendezvousTest, SameOwnerInAnyOrderAndOnlyTheDeadMachinesShardsMove) {
  std::vector<std::string> machines = {"m1", "m2", "m3"};
  std::vector<std::string> reversed(machines.rbegin(), machines.rend());
  std::map<std::string, std::string> owner;
  std::map<std::string, int> load;
  for (int i = 0; i < 300; ++i) {
    const std::string shard = "shard-" + std::to_string(i);
    owner[shard] = RendezvousOwner(shard, machines);
    EXPECT_EQ(owner[shard], RendezvousOwner(shard, reversed));
    ++load[owner[shard]];
  }
  for (const auto& [machine, n] : load) EXPECT_GT(n, 60) << machine;
  const std::vector<std::string> without_m2 = {"m1", "m3"};
  int moved = 0;
  for (const auto& [shard, was] : owner) {
    const std::string now = RendezvousOwner(shard, without_m2);
    if (was != "m2") {
      EXPECT_EQ(now, was) << shard;
    } else {
      ++moved;
    }
  }
  EXPECT_EQ(moved, load["m2"]);
}

}  // namespace
}  // namespace tessera::cluster
