// A shard session: HELLO/ticket check, join, inputs through the input gate
// into the shard (ShardGateway), ticks from the hub (ShardReceiver) out as
// FRAMEs and ACK/REJECTs through the connection's send queue.
//
// Threading: everything of one session runs on its connection's strand:
// the connection's events, the timers, and the jobs that PostFrame,
// PostView and PostClose post from other threads. No member needs a lock.
//
// Invariants:
// - The session is in the hub (and counted by the shard as a subscriber)
//   from its join until it starts closing or ends (Leave, once).
// - Seqs sent to ShardGateway::SubmitInput are server-wide input ids
//   (ctx.next_input_id); the ShardStream maps them back to the client's
//   seq, so results reach the connection that sent the input even when
//   several connections of one subscriber use the same client seqs.
// - The PING timer runs only while joined, the HELLO timer only before.
//   (The WebSocket pings that measure the round trip are the connection's.)
// - Each input reaches the shard with its view tick and the connection's
//   round trip at the time it arrived (shard::InputTiming).
// - A player that left this shard (ShardGateway::FindMove, or the hub's
//   PostTransfer) gets TRANSFER as its last message and the close 4011,
//   unless its ticket was issued after the move (a new join). A HELLO
//   looks before the shard (which may be gone) and again once registered
//   with the hub, so a move recorded in between is not missed.
#include "net/shard_session.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "common/text.h"
#include "net/hello_check.h"
#include "net/input_gate.h"
#include "net/protocol_v1.h"
#include "net/server_context.h"
#include "net/session_factory.h"
#include "net/shard_fanout.h"
#include "net/shard_gateway.h"
#include "net/shard_link_session.h"
#include "net/shard_stream.h"
#include "net/ticket.h"
#include "net/ws_connection.h"

namespace tessera::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

constexpr int kClosePolicyViolation = 1008;

const char* CodecName(shard::Codec codec) {
  return codec == shard::Codec::kJson ? "json" : "msgpack";
}

WsConnection::Options ConnectionOptions(const ServerContext& ctx) {
  const ServerOptions& options = ctx.options;
  WsConnection::Options out;
  out.max_message_bytes = options.max_message_bytes;
  out.close_timeout_ms = options.close_timeout_ms;
  out.max_queued_frames = options.max_queued_frames;
  out.subprotocol = std::string(kSubprotocol);
  out.ping_interval_ms = options.ws_ping_interval_ms;
  out.silence_timeout_ms = options.ws_silence_timeout_ms;
  out.clock = &ctx.clock;
  return out;
}

class ShardSession final : public ShardReceiver,
                           public MessageLink::Handler,
                           public std::enable_shared_from_this<ShardSession> {
 public:
  ShardSession(ServerContext& ctx, std::string shard_id, const LinkMaker& make)
      : ctx_(ctx),
        link_(make(*this)),
        conn_(*link_),
        shard_id_(std::move(shard_id)),
        hello_timer_(conn_.executor()),
        ping_timer_(conn_.executor()) {}

  ~ShardSession() override {
    // Released by the hub (Shutdown) or the io_context without a clean end.
    Leave();
    ctx_.RemoveSession(this);
  }

  // On the strand, before the link starts.
  void Register() { ctx_.AddSession(this, weak_from_this()); }

  // ShardReceiver; any thread.
  void PostFrame(uint64_t tick, std::shared_ptr<const std::string> snapshot,
                 std::shared_ptr<const Results> results) override {
    asio::post(conn_.executor(),
               [self = shared_from_this(), tick, snapshot = std::move(snapshot),
                results = std::move(results)]() mutable {
                 self->DeliverFrame(tick, std::move(snapshot), results.get());
               });
  }

  void PostView(uint64_t tick, bool replication,
                std::shared_ptr<const std::string> snapshot,
                std::shared_ptr<const std::string> entities, bool baseline,
                std::shared_ptr<const Results> results) override {
    asio::post(conn_.executor(), [self = shared_from_this(), tick, replication,
                                  snapshot = std::move(snapshot),
                                  entities = std::move(entities), baseline,
                                  results = std::move(results)]() mutable {
      self->DeliverView(tick, replication, std::move(snapshot),
                        std::move(entities), baseline, results.get());
    });
  }

  void PostTransfer(std::shared_ptr<const std::string> transfer, std::string to,
                    int64_t moved_unix_ms) override {
    asio::post(conn_.executor(), [self = shared_from_this(),
                                  transfer = std::move(transfer),
                                  to = std::move(to), moved_unix_ms] {
      if (!self->Joined() || self->ticket_issued_ms_ >= moved_unix_ms) return;
      self->SendTransfer(std::string(*transfer), to);
    });
  }

  void PostMessage(std::shared_ptr<const std::string> message) override {
    asio::post(conn_.executor(),
               [self = shared_from_this(), message = std::move(message)] {
                 if (!self->Joined()) return;
                 self->conn_.Send(std::string(*message));
               });
  }

  void PostClose(int code, std::string reason) override {
    asio::post(conn_.executor(),
               [self = shared_from_this(), code, reason = std::move(reason)] {
                 self->conn_.Close(code, reason, /*drop_queued=*/false);
               });
  }

 private:
  // MessageLink::Handler
  void OnOpen() override {
    int stop_code = 0;
    std::string stop_reason;
    if (ctx_.Stopping(&stop_code, &stop_reason)) {
      conn_.Close(stop_code, stop_reason, true);
    } else if (ctx_.options.hello_timeout_ms > 0) {
      hello_timer_.expires_after(
          std::chrono::milliseconds(ctx_.options.hello_timeout_ms));
      hello_timer_.async_wait(
          [self = shared_from_this()](boost::system::error_code ec) {
            if (ec || self->joined_phase_ || !self->conn_.open()) return;
            self->conn_.Close(
                kCloseHelloTimeout,
                "no HELLO within " +
                    std::to_string(self->ctx_.options.hello_timeout_ms) + " ms",
                false);
          });
    }
  }

  void OnMessage(std::span<const uint8_t> bytes, bool binary) override {
    if (!binary) {
      conn_.Close(kCloseBadFrame, "text messages are not allowed", false);
      return;
    }
    Result<v1::ClientMessage> decoded = v1::DecodeClientMessage(bytes);
    if (!decoded.ok()) {
      conn_.Close(kCloseBadFrame, decoded.status().message(), false);
      return;
    }
    const v1::ClientMessage& msg = decoded.value();
    if (!joined_phase_) {
      if (const auto* hello = std::get_if<v1::Hello>(&msg)) {
        HandleHello(*hello);
      } else {
        conn_.Close(kCloseHelloExpected, "the first message must be HELLO",
                    false);
      }
      return;
    }
    if (std::holds_alternative<v1::Hello>(msg)) {
      conn_.Close(kCloseHelloExpected, "HELLO was already received", false);
    } else if (const auto* input = std::get_if<v1::Input>(&msg)) {
      HandleInput(*input);
    } else if (const auto* ping = std::get_if<v1::Ping>(&msg)) {
      // One PONG pending at a time, for the latest PING (as RFC 6455 allows
      // for its own pings): a client flooding PINGs without reading cannot
      // grow the queue. It goes before queued frames, for a truer RTT.
      conn_.SendUrgent(v1::EncodePong(ping->nonce));
    }
    // PONG: nothing to do (the ping only keeps the connection warm).
  }

  void OnClosing() override { Stop(); }
  void OnEnd() override { Stop(); }

  void Stop() {
    Leave();
    hello_timer_.cancel();
    ping_timer_.cancel();
  }

  void Refuse(int code, std::string_view reason) {
    conn_.Close(code, reason, false);
  }
  // A shard that stopped a while ago (still listed) says why, so a player
  // whose shard idled out knows to join again.
  void NotFound(const std::optional<ShardState>& state = std::nullopt) {
    std::string reason = "no running shard \"" + shard_id_ + "\"";
    if (state && state->status == shard::ShardStatus::kStopped &&
        !state->stop_text.empty()) {
      reason += ": it stopped (" + state->stop_text + "); join again";
    }
    Refuse(kCloseShardNotFound, reason);
  }

  // TRANSFER, then the close after it (and after the frames before it).
  void SendTransfer(std::string transfer, const std::string& to) {
    conn_.Send(std::move(transfer));
    conn_.Close(kCloseTransferred, "moved to shard " + to, false);
  }

  // Whether the subscriber left this shard after its ticket was issued; if
  // so it is sent where it went, with a ticket for there (the move's
  // claims, not this ticket's).
  bool Redirected(const std::string& subscriber) {
    if (ctx_.shards == nullptr) return false;
    std::optional<shard::MovedTo> moved =
        ctx_.shards->FindMove(shard_id_, subscriber);
    if (!moved || ticket_issued_ms_ >= moved->moved_unix_ms) return false;
    SendTransfer(EncodeTransferFor(ctx_.ticket_secret, ctx_.wall_clock, *moved),
                 moved->to);
    return true;
  }

  void HandleHello(const v1::Hello& hello) {
    hello_timer_.cancel();
    // A version we do not speak is refused before the ticket is looked at.
    TicketCheck check;
    if (hello.version == v1::kVersion) {
      check = VerifyTicket(ctx_.ticket_secret, hello.ticket, shard_id_,
                           ctx_.UnixNow());
    }
    if (std::optional<HelloRefusal> refused = CheckHello(hello, check)) {
      Refuse(refused->code, refused->reason);
      return;
    }
    ticket_issued_ms_ = check.ticket.issued_unix_ms;
    // Before the shard is looked at: a shard a player left may be gone.
    if (Redirected(check.ticket.subscriber_id)) {
      return;
    }
    ShardGateway* shards = ctx_.shards;
    std::optional<ShardState> state;
    if (shards != nullptr) state = shards->Find(shard_id_);
    if (!state || state->status != shard::ShardStatus::kRunning) {
      NotFound(state);
      return;
    }
    subscriber_ = std::move(check.ticket.subscriber_id);
    const bool frame_acks = (hello.flags & v1::kHelloFrameAcks) != 0;
    conn_.queue().set_frame_acks(frame_acks);
    joined_phase_ = true;
    gate_.emplace(ctx_.options.input_rate_per_sec, ctx_.options.input_burst,
                  ctx_.options.max_strikes, ctx_.clock);
    // Register before WELCOME, so a client that has its WELCOME is listed.
    // Ticks the hub posts meanwhile run on this strand after this handler,
    // so they follow the WELCOME queued below.
    if (!ctx_.fanout.Add(shard_id_, subscriber_, shared_from_this())) {
      int code = kCloseGoingAway;
      std::string reason = "server shutting down";
      ctx_.Stopping(&code, &reason);
      Refuse(code, reason);
      return;
    }
    joined_ = true;
    Status added =
        shards->AddSubscriber(shard_id_, subscriber_, check.ticket.claims_json);
    subscribed_ = added.ok();
    // The shard may have stopped between Find and the hub registration, in
    // which case its OnStopped may have missed this session: look again.
    state = shards->Find(shard_id_);
    if (!added.ok() || !state) {
      NotFound();
      return;
    }
    if (state->status == shard::ShardStatus::kStopped) {
      Refuse(kCloseShardStopped, state->stop_text);
      return;
    }
    // A move recorded since the first look was announced on the hub before
    // this connection was there to hear it.
    if (Redirected(subscriber_)) return;
    conn_.Send(v1::EncodeWelcome(shard_id_, subscriber_, state->tick_rate,
                                 CodecName(state->codec), state->tick,
                                 frame_acks ? v1::kHelloFrameAcks : 0));
    ArmPingTimer();
    welcomed_ = true;
    Lifecycle("joined");
  }

  // "<subscriber> joined shard <id>" and the like, when the server logs
  // them.
  void Lifecycle(const char* what) {
    if (!ctx_.options.lifecycle_log) return;
    constexpr size_t kMax = 128;
    ctx_.options.lifecycle_log(EscapeForLog(subscriber_, kMax) + " " + what +
                               " shard " + EscapeForLog(shard_id_, kMax));
  }

  void HandleInput(const v1::Input& input) {
    const InputVerdict verdict = gate_->Check(input.seq);
    if (!verdict.accept) {
      if (!verdict.reject.empty()) {
        ctx_.metrics.inputs_refused_rate->Add();
        conn_.Send(v1::EncodeReject(input.seq, verdict.reject));
      }
      if (verdict.close_code != 0) {
        conn_.Close(verdict.close_code, verdict.close_reason, false);
      }
      return;
    }
    const uint64_t id = ctx_.next_input_id.fetch_add(1);
    stream_.Submitted(id, input.seq);
    // What lag compensation needs: the tick the client drew, and how far
    // back its round trip lets that be.
    shard::InputTiming timing;
    timing.view_tick = input.view_tick;
    timing.rtt_us = conn_.rtt_us();
    Status submitted = ctx_.shards->SubmitInput(shard_id_, subscriber_, id,
                                                input.payload, timing);
    // Refused on arrival (a full queue, the player moving to another shard:
    // kFailedPrecondition "moving to shard <id>"): REJECT with the shard's
    // text, no strike.
    if (!submitted.ok()) {
      stream_.Forget(id);
      ctx_.metrics.inputs_refused_queue->Add();
      conn_.Send(v1::EncodeReject(input.seq, submitted.message()));
      return;
    }
    ctx_.metrics.inputs_submitted->Add();
  }

  bool Joined() const { return joined_phase_ && conn_.open(); }

  void DeliverFrame(uint64_t tick, std::shared_ptr<const std::string> snapshot,
                    const Results* results) {
    if (!Joined()) return;
    std::vector<SendQueue::Reply> replies;
    QueueTick(stream_.Frame(tick, std::move(snapshot), results, &replies),
              replies);
  }

  // See ShardReceiver::PostView.
  void DeliverView(uint64_t tick, bool replication,
                   std::shared_ptr<const std::string> snapshot,
                   std::shared_ptr<const std::string> entities, bool baseline,
                   const Results* results) {
    if (!Joined()) return;
    std::vector<SendQueue::Reply> replies;
    QueueTick(stream_.View(tick, replication, std::move(snapshot),
                           std::move(entities), baseline, results, &replies),
              replies);
  }

  // Queues a tick's frame and replies as the send queue's policy says.
  void QueueTick(Outgoing frame, std::vector<SendQueue::Reply>& replies) {
    SendQueue::FramePush pushed =
        conn_.queue().PushFrame(std::move(frame), replies);
    if (pushed.superseded) ctx_.metrics.frames_superseded->Add();
    switch (pushed.outcome) {
      case SendQueue::FrameOutcome::kTooSlow:
        conn_.Close(kClosePolicyViolation, pushed.reason, true);
        return;
      case SendQueue::FrameOutcome::kResync:
        // FRAMEs wait for the BASELINE asked of the shard.
        stream_.Resynced();
        ctx_.metrics.baselines_resent->Add();
        (void)ctx_.shards->RequestBaseline(shard_id_, subscriber_);
        break;
      case SendQueue::FrameOutcome::kQueued:
      case SendQueue::FrameOutcome::kSuperseded:
        break;
    }
    conn_.Flush();
  }

  void ArmPingTimer() {
    if (ctx_.options.ping_interval_ms <= 0) return;
    ping_timer_.expires_after(
        std::chrono::milliseconds(ctx_.options.ping_interval_ms));
    ping_timer_.async_wait(
        [self = shared_from_this()](boost::system::error_code ec) {
          if (ec || !self->Joined()) return;
          self->conn_.Send(v1::EncodePing(++self->ping_nonce_));
          self->ArmPingTimer();
        });
  }

  // Unregisters from the hub and the shard (once).
  void Leave() {
    if (!joined_ || left_) return;
    left_ = true;
    if (welcomed_) Lifecycle("left");
    ctx_.fanout.Remove(shard_id_, subscriber_, this);
    if (subscribed_ && ctx_.shards != nullptr) {
      (void)ctx_.shards->RemoveSubscriber(shard_id_, subscriber_);
    }
    stream_.Clear();
  }

  ServerContext& ctx_;
  std::unique_ptr<MessageLink> link_;
  MessageLink& conn_;
  const std::string shard_id_;
  std::string subscriber_;
  int64_t ticket_issued_ms_ = 0;  // the HELLO ticket's issue time
  bool joined_phase_ = false;     // HELLO accepted: inputs and frames flow
  bool joined_ = false;           // registered with the hub
  bool subscribed_ = false;       // AddSubscriber succeeded
  bool left_ = false;
  bool welcomed_ = false;  // WELCOME sent: "joined" was logged
  asio::steady_timer hello_timer_;
  asio::steady_timer ping_timer_;
  std::optional<InputGate> gate_;  // from the join on
  ShardStream stream_;
  uint64_t ping_nonce_ = 0;
};

}  // namespace

void RunShardSession(ServerContext& ctx, beast::tcp_stream stream,
                     http::request<http::string_body> request,
                     std::string shard_id) {
  WsConnection* ws = nullptr;
  auto session = std::make_shared<ShardSession>(
      ctx, std::move(shard_id), [&](MessageLink::Handler& handler) {
        auto link = std::make_unique<WsConnection>(
            std::move(stream), ConnectionOptions(ctx), ctx.metrics, handler);
        ws = link.get();
        return link;
      });
  session->Register();
  ws->Start(std::move(request), session);
}

std::shared_ptr<void> RunShardSessionOn(ServerContext& ctx,
                                        std::string shard_id,
                                        const LinkMaker& make) {
  auto session = std::make_shared<ShardSession>(ctx, std::move(shard_id), make);
  session->Register();
  return session;
}

namespace {

class ShardSessionFactory final : public SessionFactory {
 public:
  void Run(ServerContext& ctx, beast::tcp_stream stream,
           http::request<http::string_body> request,
           std::string id) const override {
    RunShardSession(ctx, std::move(stream), std::move(request), std::move(id));
  }
};

}  // namespace

const SessionFactory& ShardSessions() {
  static const ShardSessionFactory factory;
  return factory;
}

}  // namespace tessera::net
