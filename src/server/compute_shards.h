// ComputeShards: the compute::ShardsPort of an app server (a module's
// `shards` host call, docs/compute-abi.md "Shards") over the shard host and
// the durable ShardDirectory, the same ones POST /api/shards uses:
//
//   Create    ShardDirectory::Create (recorded, restored after a restart);
//             params JSON -> the kind's codec (codec_json.h); machine ""
//             or "local" (this server) only
//   Get/List  the host's shards, then the directory's failed records
//   Ticket    net::MintTicket with the server's ticket secret
//   Send      ShardHost::SubmitInput with subscriber "" (the server)
//   Publish   ShardHost::Publish ("shard:<id>" | "group:<g>" | "all")
//   Transfer  ShardHost::Transfer, waiting for `done` at most
//             transfer_timeout_ms
//   Stop      ShardDirectory::Stop, then its connections are closed
//
// Errors are Status values whose message starts with the code the module
// sees (shards_port.h): SHARD_NOT_FOUND, SHARD_EXISTS, SHARD_KIND_UNKNOWN,
// SHARD_BAD_PARAMS, SHARD_MACHINE_UNKNOWN, SHARD_LIMIT,
// SHARD_TRANSFER_{REFUSED,BUSY,UNSUPPORTED,NO_PLAYER,FAILED}, BAD_REQUEST,
// UNAVAILABLE.
//
// Threading: any thread. Ownership: nothing owned; the directory (and its
// host and kinds) and `connections` must outlive the port.
#ifndef TESSERA_SERVER_COMPUTE_SHARDS_H_
#define TESSERA_SERVER_COMPUTE_SHARDS_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "compute/shards_port.h"
#include "net/connections.h"
#include "server/shard_directory.h"

namespace tessera::server {

struct ComputeShardsOptions {
  std::string ticket_secret;              // required
  const WallClock* wall_clock = nullptr;  // null: RealWallClock
  int64_t transfer_timeout_ms = 10'000;
  // This server's machine id (ShardView::machine).
  std::string machine = "local";
};

class ComputeShards final : public compute::ShardsPort {
 public:
  // `connections` may be null (a stop closes nothing).
  ComputeShards(ShardDirectory& directory, net::Connections* connections,
                ComputeShardsOptions options);

  Result<compute::ShardView> Create(std::string_view kind, std::string_view id,
                                    std::string_view params_json,
                                    std::string_view machine) override;
  Result<std::optional<compute::ShardView>> Get(std::string_view id) override;
  Result<std::vector<compute::ShardView>> List(std::string_view kind) override;
  Result<std::string> Ticket(std::string_view id, std::string_view subscriber,
                             std::string_view claims_json,
                             int64_t ttl_secs) override;
  Status Send(std::string_view id, std::string_view input_json) override;
  Status Publish(std::string_view target, std::string_view topic,
                 std::string_view data) override;
  Status Transfer(std::string_view from, std::string_view subscriber,
                  std::string_view to, std::string_view claims_json) override;
  Status Stop(std::string_view id) override;

 private:
  compute::ShardView View(const shard::ShardInfo& info) const;

  ShardDirectory& directory_;
  net::Connections* const connections_;
  const ComputeShardsOptions options_;
  const WallClock& wall_clock_;
  // Server inputs' sequence numbers (their own range, beside the admin
  // API's).
  std::atomic<uint64_t> next_seq_{uint64_t{1} << 62};
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_COMPUTE_SHARDS_H_
