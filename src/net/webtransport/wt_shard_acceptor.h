// Answers a WebTransport CONNECT to /shard/<id> with the shard protocol
// session (net/shard_link_session.h) on a WtLink: the same session, checks
// and shard gateway as a WebSocket to the same path.
#ifndef TESSERA_NET_WEBTRANSPORT_WT_SHARD_ACCEPTOR_H_
#define TESSERA_NET_WEBTRANSPORT_WT_SHARD_ACCEPTOR_H_

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string_view>

#include "net/webtransport/wt_session.h"

namespace tessera::net {
struct ServerContext;
}  // namespace tessera::net

namespace tessera::net::wt {

class ShardWtAcceptor final : public WtAcceptor {
 public:
  // `ctx` must outlive the acceptor; `executor` is the port's io thread.
  ShardWtAcceptor(ServerContext& ctx, boost::asio::any_io_executor executor)
      : ctx_(ctx), executor_(std::move(executor)) {}
  std::unique_ptr<WtSessionHandler> Accept(std::string_view path,
                                           std::string_view peer_ip) override;

 private:
  ServerContext& ctx_;
  boost::asio::any_io_executor executor_;
};

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_WT_SHARD_ACCEPTOR_H_
