// One load-test bot: a state machine on one io_context that gets a ticket
// (join request, the app's join function after a guest sign-in, or local
// minting), connects to its shard with the
// protocol-v1 client (net/client/v1_client.h, which times each input
// until its answer and answers PINGs), then once WELCOMEd sends inputs
// made from the templates at a fixed rate until a deadline, and counts
// every message it receives.
//
// With --aim (BotPlan::aim) the bot also draws the replicated entities like
// a client (picture.h): each FRAME's entities go into its Picture and its
// TickClock; each input is made at the render tick (the estimated shard
// tick minus the interpolation delay) and stamped with the tick drawn;
// $aim tokens become where the entity is drawn, and an aimed input is not
// sent while it is not drawn.
//
// Moves: a TRANSFER (the player moved to another shard) is followed at
// once: the bot drops the source's connection, connects to the target with
// the TRANSFER's ticket and goes on sending its inputs there (seqs restart
// with the connection); the move's times are counted (transfer_tracker.h).
// A bot's first connection times its first FRAME (the fresh-connect
// baseline of the transfer bench).
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
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "loadtest/input_template.h"
#include "loadtest/join.h"
#include "loadtest/picture.h"
#include "loadtest/run_stats.h"
#include "loadtest/transfer_tracker.h"
#include "net/client/http_client.h"
#include "net/client/url.h"
#include "net/client/v1_client.h"

namespace tessera::loadtest {

// What every bot of a run does (immutable while the bots run).
struct BotPlan {
  // Join requests when set; else tickets minted with `ticket_secret`.
  bool join_by_request = false;
  // With join_by_request, the join function (join.h): each bot signs in as
  // a guest (kGuestSignInPath on `join_url`, the server), then POSTs
  // `function_args` to `function_path` with the guest's token.
  bool join_by_function = false;
  std::string function_path;
  nlohmann::json function_args;
  net::client::Url join_url;
  boost::asio::ip::tcp::endpoint join_endpoint;
  boost::asio::ssl::context* join_tls = nullptr;
  JoinSpec join;
  std::string ticket_secret;
  int64_t ticket_ttl_secs = 3600;

  net::client::Url
      shard_url;  // scheme, host and port of the WebSocket endpoint
  boost::asio::ip::tcp::endpoint shard_endpoint;  // or the delay proxy's
  boost::asio::ssl::context* shard_tls = nullptr;

  double rate = 0;             // inputs per second; 0: none
  int64_t inputs_per_bot = 0;  // 0: until the deadline
  std::vector<InputTemplate> inputs;
  std::chrono::milliseconds connect_timeout{10000};  // join to WELCOME
  // --aim: the entity the $aim tokens follow; nullopt: the bots do not
  // decode frames.
  std::optional<uint64_t> aim;
  double interp_delay_ms = 100;  // how far behind the shard's tick it draws
  double tick_rate = 20;         // the shard's ticks per second
};

class Bot : public std::enable_shared_from_this<Bot> {
 public:
  using Clock = std::chrono::steady_clock;

  Bot(boost::asio::io_context& ioc, const BotPlan& plan, int64_t number,
      StatsShard* stats);

  // Joins, then sends inputs until `inputs_until`.
  // `first_input_at` set (--together): the first input is sent then (or
  // at the WELCOME, if later) instead of at a random point of the first
  // interval, so that the bots send their inputs at the same moments.
  void Start(Clock::time_point inputs_until,
             std::optional<Clock::time_point> first_input_at = std::nullopt);
  // Ends the bot: inputs still unanswered count as in flight at the end,
  // then the close handshake (1000). A bot still joining counts as a
  // connect failure.
  void Close();
  // Drops the transport (and with it the callbacks that keep the bot
  // alive). Only once the io_context no longer runs.
  void Detach() { client_.reset(); }

 private:
  void ConnectShard(const std::string& shard_id, const std::string& ticket);
  // A POST of `body` to `target` on the join server (`token`: its bearer).
  void PostJoin(std::string target, std::string body, const std::string& token,
                std::function<void(Result<net::client::HttpResponse>)> done);
  // The join function: a guest sign-in (again after a 429's Retry-After),
  // then the function's call with the guest's token.
  void SignInAsGuest();
  void CallJoinFunction(const std::string& token);
  void Fail(const std::string& reason);
  // A TRANSFER: the player moved to `shard_id`, where `ticket` admits it.
  void OnTransfer(const std::string& shard_id, const std::string& ticket);
  void OnReceived(bool frame, size_t bytes);
  // The WELCOME deadline of the connection being made.
  void ArmConnectTimer();
  // Sends the inputs left from now on (at the first WELCOME and after
  // every move).
  void StartInputs(Clock::duration first_after);
  void OnWelcome(const net::v1::Welcome& welcome);
  void OnClosed(int code, const std::string& reason);
  // Reports once that this bot sends no more inputs.
  void DoneSending();
  std::optional<net::client::V1Client::Outgoing> NextInput();
  std::string Encode(const nlohmann::json& value) const;
  void OnFrame(const net::v1::Frame& frame);
  double ConnectedSecs() const;

  boost::asio::io_context& ioc_;
  const BotPlan& plan_;
  const int64_t number_;
  StatsShard* const stats_;
  std::shared_ptr<net::client::V1Client> client_;
  boost::asio::steady_timer timer_;        // the WELCOME deadline
  boost::asio::steady_timer retry_timer_;  // a guest sign-in's next try
  std::mt19937_64 rng_;
  std::string subscriber_id_;
  bool json_codec_ = false;
  bool joined_ = false;
  bool ended_ = false;  // failed, lost or closed: nothing more counts
  bool done_sending_ = false;
  Clock::time_point joined_at_;
  Clock::time_point inputs_until_;
  size_t next_template_ = 0;
  int64_t inputs_sent_ = 0;  // over every connection of the bot
  std::optional<Clock::time_point> first_input_at_;
  // The first connection's start, till its first FRAME.
  std::optional<Clock::time_point> connecting_since_;
  TransferTracker transfers_;
  std::string shard_id_;  // the shard connected to
  // --aim.
  std::optional<Picture> picture_;
  std::optional<TickClock> clock_;
  bool next_aimed_ = false;  // the input being sent is aimed
  std::unordered_set<uint64_t> aimed_seqs_;
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_BOT_H_
