// One load-test bot: a state machine on one io_context that gets a ticket
// (join request or local minting), connects to its shard, sends HELLO,
// then once WELCOMEd sends inputs made from the templates at a fixed rate
// until a deadline, timing each until its ACK or REJECT, and counts every
// message it receives. It answers the server's PINGs.
//
// Threading: every method must be called on the bot's io_context thread
// (post to it). Ownership: a Bot keeps itself alive (shared_from_this)
// while operations are pending; the BotPlan and StatsShard must outlive it.
#ifndef TESSERA_LOADTEST_BOT_H_
#define TESSERA_LOADTEST_BOT_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "loadtest/input_template.h"
#include "loadtest/join.h"
#include "loadtest/run_stats.h"
#include "loadtest/url.h"
#include "loadtest/ws_client.h"

namespace tessera::loadtest {

// What every bot of a run does (immutable while the bots run).
struct BotPlan {
  // Join requests when set; else tickets minted with `ticket_secret`.
  bool join_by_request = false;
  Url join_url;
  boost::asio::ip::tcp::endpoint join_endpoint;
  boost::asio::ssl::context* join_tls = nullptr;
  JoinSpec join;
  std::string ticket_secret;
  int64_t ticket_ttl_secs = 3600;

  Url shard_url;  // scheme, host and port of the WebSocket endpoint
  boost::asio::ip::tcp::endpoint shard_endpoint;  // or the delay proxy's
  boost::asio::ssl::context* shard_tls = nullptr;

  double rate = 0;  // inputs per second; 0: none
  std::vector<InputTemplate> inputs;
  std::chrono::milliseconds connect_timeout{10000};  // join to WELCOME
};

class Bot : public std::enable_shared_from_this<Bot> {
 public:
  using Clock = std::chrono::steady_clock;

  Bot(boost::asio::io_context& ioc, const BotPlan& plan, int64_t number,
      StatsShard* stats);

  // Joins, then sends inputs until `inputs_until`.
  void Start(Clock::time_point inputs_until);
  // Ends the bot: inputs still unanswered count as in flight at the end,
  // then the close handshake (1000). A bot still joining counts as a
  // connect failure.
  void Close();
  // Drops the transport (and with it the callbacks that keep the bot
  // alive). Only once the io_context no longer runs.
  void Detach() { ws_.reset(); }

 private:
  void ConnectShard(const std::string& shard_id, const std::string& ticket);
  void Fail(const std::string& reason);
  void OnMessage(const uint8_t* data, size_t size);
  void OnWelcome(const std::string& subscriber_id, const std::string& codec);
  // Frame acks: a FRAME's last_seq answers every pending input up to it.
  void AckUpTo(uint64_t last_seq);
  void OnAnswer(uint64_t seq, bool refused, const std::string& error);
  void OnClosed(int code, const std::string& reason);
  void ScheduleInput();
  void SendInput();
  double ConnectedSecs() const;

  boost::asio::io_context& ioc_;
  const BotPlan& plan_;
  const int64_t number_;
  StatsShard* const stats_;
  std::shared_ptr<WsClient> ws_;
  boost::asio::steady_timer timer_;  // WELCOME deadline, then inputs
  std::mt19937_64 rng_;
  std::string subscriber_id_;
  bool json_codec_ = false;
  bool frame_acks_ = false;  // the WELCOME said the server honours them
  bool joined_ = false;
  bool ended_ = false;  // failed, lost or closed: nothing more counts
  Clock::time_point joined_at_;
  Clock::time_point inputs_until_;
  Clock::time_point next_input_;
  size_t next_template_ = 0;
  uint64_t next_seq_ = 1;
  // Send times of inputs not answered yet, by seq - first_pending_seq_.
  uint64_t first_pending_seq_ = 1;
  std::deque<Clock::time_point> pending_;
  uint64_t pending_count_ = 0;
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_BOT_H_
