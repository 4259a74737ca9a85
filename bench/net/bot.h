// One benchmark bot: an asynchronous Beast WebSocket client of protocol v1
// (docs/protocol.md) that joins a shard with a ticket, then sends arena
// moves at a fixed rate and times each input until its ACK or REJECT.
//
// Threading: a Bot lives on one io_context, run by one thread; every
// method must be called on that thread (post to it). Bots of one thread
// share that thread's BotStats. Ownership: a Bot keeps itself alive
// (shared_from_this) while operations are pending.
#ifndef TESSERA_BENCH_NET_BOT_H_
#define TESSERA_BENCH_NET_BOT_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "bench/net/bot_stats.h"

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
  void Fail(const char* what);
  // Counts every unanswered input as no longer in flight (the bot ended).
  void AbandonPending();
  void Read();
  void OnMessage(const std::string& bytes);
  void Send(std::string message);
  void Write();
  void ScheduleInput();
  void SendInput();

  BotConfig config_;
  BotStats* const stats_;
  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  boost::beast::flat_buffer buffer_;
  boost::asio::steady_timer timer_;
  std::mt19937_64 rng_;
  std::function<void(bool)> on_joined_;
  bool joined_ = false;
  bool closing_ = false;
  bool done_ = false;  // closed or failed: no more reads or writes
  std::deque<std::string> outbox_;
  bool writing_ = false;
  Clock::time_point inputs_until_;
  Clock::time_point next_input_;
  uint64_t next_seq_ = 1;
  // Send times of inputs not yet answered, by seq - first_pending_seq_.
  uint64_t first_pending_seq_ = 1;
  std::deque<Clock::time_point> pending_;
};

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_NET_BOT_H_
