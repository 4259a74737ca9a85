// One benchmark bot: a protocol-v1 client (net/client/v1_client.h) that
// joins a shard with a ticket, then sends arena moves at a fixed rate and
// times each input until its ACK or REJECT.
//
// Threading: a Bot lives on one io_context, run by one thread; every
// method must be called on that thread (post to it). Bots of one thread
// share that thread's BotStats. Ownership: a Bot is kept alive by its
// client's events while the connection lasts.
#ifndef TESSERA_BENCH_NET_BOT_H_
#define TESSERA_BENCH_NET_BOT_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "bench/net/bot_stats.h"
#include "net/client/v1_client.h"

namespace tessera::bench {

struct BotConfig {
  boost::asio::ip::tcp::endpoint endpoint;
  std::string host_header;  // "HOST:PORT"
  std::string shard;
  std::string ticket;
  double inputs_per_sec = 10;
  float arena_width = 800;
  float arena_height = 500;
  uint64_t seed = 1;
};

class Bot : public std::enable_shared_from_this<Bot> {
 public:
  using Clock = std::chrono::steady_clock;

  Bot(boost::asio::io_context& ioc, BotConfig config, BotStats* stats);

  // Connects, upgrades, sends HELLO and waits for WELCOME; then calls
  // `on_joined(true)`, or `on_joined(false)` on any failure. Once joined,
  // the bot reads (and counts) everything until it is closed.
  void Join(std::function<void(bool)> on_joined);
  // Sends one input every 1/inputs_per_sec seconds, starting at a random
  // offset within the first interval, until `until`.
  void StartInputs(Clock::time_point until);
  // Starts the close handshake (1000); the bot ends when it completes.
  void Close();

 private:
  void Fail();
  void OnClosed(int code);
  void OnAnswered(Clock::duration rtt, bool refused);
  std::string NextMove();

  boost::asio::io_context& ioc_;
  BotConfig config_;
  BotStats* const stats_;
  std::shared_ptr<net::client::V1Client> client_;
  std::mt19937_64 rng_;
  std::function<void(bool)> on_joined_;
  bool joined_ = false;
  bool closing_ = false;
  bool done_ = false;  // closed or failed: nothing more counts
};

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_NET_BOT_H_
