#include "sparse_encode.h"

#include <time.h>

#include <cstdio>
#include <string>
#include <vector>

#include "replication/mirror.h"
#include "replication/subscriber_stream.h"
#include "replication/testing/guest_store.h"

namespace tessera::bench {
namespace {

constexpr int kEntities = 1000;

double ThreadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

// Microseconds of CPU per Encode with `moving` of the entities moving each
// tick (every k-th entity, k = 1 / moving, in turn).
double EncodeUs(double moving, int ticks) {
  replication::Config config;
  config.precision = 0.01;
  replication::Mirror mirror(config);
  replication::testing::GuestStore store;
  for (int id = 1; id <= kEntities; ++id) {
    store.Spawn(id);
    store.Move(id, id % 100, id / 100.0, 0);
  }
  (void)mirror.Apply(store.TakeChanges(), 1);
  replication::SubscriberStream stream;
  std::string payload;
  stream.Encode(mirror, mirror.ids(), std::nullopt, 1, payload);
  const int stride = static_cast<int>(1 / moving);
  double us = 0;
  for (int tick = 2; tick < ticks + 2; ++tick) {
    for (int id = 1 + tick % stride; id <= kEntities; id += stride) {
      store.Move(id, id % 100 + tick * 0.05, id / 100.0, 0);
    }
    (void)mirror.Apply(store.TakeChanges(), tick);
    const double start = ThreadCpuUs();
    stream.Encode(mirror, mirror.ids(), std::nullopt, tick, payload);
    us += ThreadCpuUs() - start;
  }
  return us / ticks;
}

}  // namespace

void PrintSparseEncode(bool quick) {
  const int ticks = quick ? 20 : 400;
  std::printf("\nencoder, 1,000 entities all visible to one subscriber:\n");
  for (double moving : {0.02, 1.0}) {
    std::printf("  %3.0f%% moving each tick: %7.2f us per encode\n",
                moving * 100, EncodeUs(moving, ticks));
  }
}

}  // namespace tessera::bench
