// ShardsPort: what a compute module's `shards` host call asks of the app's
// shards (include/tessera/compute_abi.h kShardsOp*, docs/compute-abi.md
// "Shards"). The compute layer declares it; the server implements it over
// the ShardHost, the directory and the ticket secret
// (server/compute_shards.h).
//
// Errors are Status values whose message starts with a structured code,
// "<CODE>: <text>", which the module sees as last_error's code:
//   SHARD_NOT_FOUND, SHARD_EXISTS, SHARD_KIND_UNKNOWN, SHARD_BAD_PARAMS
//   (the module's init refused; its text), SHARD_MACHINE_UNKNOWN,
//   SHARD_LIMIT (maxInstances / capacity), SHARD_TRANSFER_REFUSED,
//   SHARD_TRANSFER_BUSY, SHARD_TRANSFER_UNSUPPORTED,
//   SHARD_TRANSFER_NO_PLAYER, SHARD_TRANSFER_FAILED, BAD_REQUEST (a
//   malformed request: a missing field, a bad id, claims not an object),
//   UNAVAILABLE (shutting down).
//
// Threading: any thread, inside a module's run. Create, Stop and Transfer
// wait for the host (Transfer at most transfer_timeout_ms); Send and
// Publish are only called after the run's transaction committed.
#ifndef TESSERA_COMPUTE_SHARDS_PORT_H_
#define TESSERA_COMPUTE_SHARDS_PORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::compute {

struct ShardView {
  std::string id;
  std::string kind;
  std::string status;  // "starting" | "running" | "stopped" | "failed"
  uint64_t tick = 0;
  int64_t subscribers = 0;
  std::string machine;      // this server's machine id ("local" alone)
  std::string stop_reason;  // "" while running
  std::string error;        // why it stopped / failed, "" otherwise
};

class ShardsPort {
 public:
  virtual ~ShardsPort() = default;
  // params_json: the create params as JSON (converted to the kind's codec);
  // "" = none. machine "" = the host's choice.
  virtual Result<ShardView> Create(std::string_view kind, std::string_view id,
                                   std::string_view params_json,
                                   std::string_view machine) = 0;
  virtual Result<std::optional<ShardView>> Get(std::string_view id) = 0;
  // kind "" = every kind; ordered by id.
  virtual Result<std::vector<ShardView>> List(std::string_view kind) = 0;
  // A signed ticket for `subscriber` (1..128 bytes, not empty) on shard
  // `id` with `claims_json` (an object), valid ttl_secs (1..86400).
  virtual Result<std::string> Ticket(std::string_view id,
                                     std::string_view subscriber,
                                     std::string_view claims_json,
                                     int64_t ttl_secs) = 0;
  // An input from the server: applied with an empty subscriber id.
  // input_json is converted to the kind's codec.
  virtual Status Send(std::string_view id, std::string_view input_json) = 0;
  // target: "shard:<id>" | "group:<g>" | "all".
  virtual Status Publish(std::string_view target, std::string_view topic,
                         std::string_view data) = 0;
  virtual Status Transfer(std::string_view from, std::string_view subscriber,
                          std::string_view to,
                          std::string_view claims_json) = 0;
  virtual Status Stop(std::string_view id) = 0;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_SHARDS_PORT_H_
