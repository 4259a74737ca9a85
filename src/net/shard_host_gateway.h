// ShardGateway over a shard::ShardHost, with the kinds' configs (tick rate,
// codec) from a lookup.
#ifndef TESSERA_NET_SHARD_HOST_GATEWAY_H_
#define TESSERA_NET_SHARD_HOST_GATEWAY_H_

#include <functional>
#include <optional>
#include <string_view>

#include "net/shard_gateway.h"

namespace tessera::shard {
class ShardHost;
}

namespace tessera::net {

class ShardHostGateway final : public ShardGateway {
 public:
  // The config of a kind by name (null, or nullopt for a kind: KindConfig's
  // defaults).
  using FindKind =
      std::function<std::optional<shard::KindConfig>(std::string_view kind)>;

  // `host` is not owned and must outlive the gateway.
  ShardHostGateway(shard::ShardHost& host, FindKind find_kind)
      : host_(host), find_kind_(std::move(find_kind)) {}

  std::optional<ShardState> Find(std::string_view id) const override;
  Status SubmitInput(std::string_view id, std::string_view subscriber,
                     uint64_t input_id, std::string_view bytes,
                     shard::InputTiming timing) override;
  Status AddSubscriber(std::string_view id, std::string_view subscriber,
                       std::string_view claims_json) override;
  Status RemoveSubscriber(std::string_view id,
                          std::string_view subscriber) override;
  Status RequestBaseline(std::string_view id,
                         std::string_view subscriber) override;
  std::optional<shard::MovedTo> FindMove(
      std::string_view id, std::string_view subscriber) const override;

 private:
  shard::ShardHost& host_;
  const FindKind find_kind_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SHARD_HOST_GATEWAY_H_
