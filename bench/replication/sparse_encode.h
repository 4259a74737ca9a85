// The encoder when few entities change: 1,000 entities all visible to one
// subscriber, 2% of them moving each tick, against all of them moving. A
// stream in step with the mirror looks only at the last tick's changes
// (SubscriberStream's in-step path), so its cost follows the changes, not
// what the subscriber sees.
#ifndef TESSERA_BENCH_REPLICATION_SPARSE_ENCODE_H_
#define TESSERA_BENCH_REPLICATION_SPARSE_ENCODE_H_

namespace tessera::bench {

// Prints one line per share of moving entities; `quick`: fewer ticks.
void PrintSparseEncode(bool quick);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_REPLICATION_SPARSE_ENCODE_H_
