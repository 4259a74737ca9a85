#include "cluster/rendezvous.h"

#include <openssl/sha.h>

namespace tessera::cluster {

uint64_t RendezvousScore(std::string_view shard_id, std::string_view machine) {
  std::string input;
  input.reserve(shard_id.size() + 1 + machine.size());
  input.append(shard_id).push_back('\0');
  input.append(machine);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(),
         digest);
  uint64_t score = 0;
  for (int i = 0; i < 8; ++i) score = score << 8 | digest[i];
  return score;
}

std::string RendezvousOwner(std::string_view shard_id,
                            const std::vector<std::string>& machines) {
  std::string best;
  uint64_t best_score = 0;
  for (const std::string& machine : machines) {
    const uint64_t score = RendezvousScore(shard_id, machine);
    if (best.empty() || score > best_score ||
        (score == best_score && machine < best)) {
      best = machine;
      best_score = score;
    }
  }
  return best;
}

}  // namespace tessera::cluster
