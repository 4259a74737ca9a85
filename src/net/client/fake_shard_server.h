// A stand-in shard server for the client library's and the load-test
// driver's unit tests: speaks
// just enough HTTP/1.1, WebSocket (RFC 6455, server side) and protocol v1
// to be joined and played by bots, optionally over TLS with a self-signed
// certificate for "localhost" made at start. Without Beast, and without
// the real server.
//
//   POST /join      {shard, subscriber, ...} -> {shardId, subscriberId,
//                   ticket} (the ticket is signed with `secret`)
//   GET /shard/<id> WebSocket: HELLO (ticket checked: close 4001 or 4003)
//                   -> WELCOME; each INPUT -> a FRAME, then ACK (or REJECT
//                   "nope" for every `reject_every`th), or with frame acks
//                   (asked for in HELLO, honoured with `frame_acks`) the
//                   REJECT before the FRAME and no ACK; PING answered,
//                   PONG counted. With `transfer_to`, the close after
//                   `close_after_inputs` is a TRANSFER to that shard (a
//                   ticket for it) and close 4011, as when a player moves.
//
// Threading: one thread accepts, one thread per connection; Stop (or the
// destructor) ends them all.
#ifndef TESSERA_NET_CLIENT_FAKE_SHARD_SERVER_H_
#define TESSERA_NET_CLIENT_FAKE_SHARD_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"

namespace tessera::net::client::testing {

struct FakeServerOptions {
  bool tls = false;
  std::string secret = "fake-secret";
  int reject_every = 0;    // 0: never
  bool frame_acks = true;  // honour the HELLO flag
  // Close every WebSocket with this code after this many inputs (0: never).
  int close_after_inputs = 0;
  int close_code = 4006;
  // Non-empty: that close is TRANSFER [20, transfer_to, ticket] then 4011.
  std::string transfer_to;
  // Send PING 7 after a good HELLO, before the WELCOME (PONGs are counted).
  bool ping_before_welcome = false;
  // Unix time of ticket expiry; null: RealWallClock. Not owned.
  const WallClock* wall_clock = nullptr;
};

// A ticket for `subscriber` on `shard` signed with `secret`, valid for ten
// minutes of `wall_clock` (what POST /join answers).
std::string FakeTicket(const std::string& secret, const std::string& shard,
                       const std::string& subscriber,
                       const WallClock& wall_clock = *RealWallClock::Get());

class FakeShardServer {
 public:
  explicit FakeShardServer(FakeServerOptions options);
  ~FakeShardServer();

  uint16_t port() const { return port_; }
  // The certificate (PEM) of the TLS server, to trust it.
  const std::string& certificate_pem() const { return certificate_pem_; }
  uint64_t inputs() const { return inputs_.load(); }
  uint64_t sessions() const { return sessions_.load(); }
  uint64_t pongs() const { return pongs_.load(); }
  void Stop();

 private:
  struct Tls;
  void AcceptLoop();
  void Serve(int fd);
  const WallClock& Wall() const {
    return options_.wall_clock != nullptr ? *options_.wall_clock
                                          : *RealWallClock::Get();
  }

  const FakeServerOptions options_;
  std::unique_ptr<Tls> tls_;
  std::string certificate_pem_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> inputs_{0};
  std::atomic<uint64_t> sessions_{0};
  std::atomic<uint64_t> pongs_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> fds_;              // guarded by mu_
  std::vector<std::thread> workers_;  // guarded by mu_
};

}  // namespace tessera::net::client::testing

#endif  // TESSERA_NET_CLIENT_FAKE_SHARD_SERVER_H_
