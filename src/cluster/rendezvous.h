// Where a dead machine's shard goes (docs/cluster.md): rendezvous hashing,
// the same answer on every machine without any talk between them. Each
// live machine scores the shard by the first 8 bytes (big-endian) of
// SHA-256(shard id, 0x00, machine id); the highest score wins (ties, which
// need equal hashes, go to the smaller id). When a machine dies only its
// own shards move, spread over the live machines.
#ifndef TESSERA_CLUSTER_RENDEZVOUS_H_
#define TESSERA_CLUSTER_RENDEZVOUS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cluster {

uint64_t RendezvousScore(std::string_view shard_id, std::string_view machine);

// The winner among `machines` ("" when there are none).
std::string RendezvousOwner(std::string_view shard_id,
                            const std::vector<std::string>& machines);

}  // namespace tessera::cluster

#endif  // TESSERA_CLUSTER_RENDEZVOUS_H_
