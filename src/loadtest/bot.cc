#include "loadtest/bot.h"

#include <algorithm>

#include "net/client/http_async.h"

namespace tessera::loadtest {

namespace asio = boost::asio;
namespace client = net::client;

Bot::Bot(asio::io_context& ioc, const BotPlan& plan, int64_t number,
         StatsShard* stats)
    : ioc_(ioc),
      plan_(plan),
      number_(number),
      stats_(stats),
      timer_(ioc),
      retry_timer_(ioc),
      rng_(0x5eed0000 + static_cast<uint64_t>(number)) {
  if (plan_.aim) {
    picture_.emplace();
    clock_.emplace(1000.0 / plan_.tick_rate);
  }
}

namespace {
uint64_t MicrosOf(Bot::Clock::duration d) {
  return static_cast<uint64_t>(std::max<int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(d).count()));
}

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             Bot::Clock::now().time_since_epoch())
      .count();
}
}  // namespace

void Bot::OnFrame(const net::v1::Frame& frame) {
  if (ended_) return;
  // As the TS client: the payload into the picture, then the clock.
  if (frame.entities) {
    if (!picture_->Push(frame.tick, *frame.entities).ok()) stats_->Error();
  }
  clock_->Observe(frame.tick, NowMs());
}

void Bot::Start(Clock::time_point inputs_until,
                std::optional<Clock::time_point> first_input_at) {
  inputs_until_ = inputs_until;
  first_input_at_ = first_input_at;
  // The bot counts as failed if it has not joined in time, whatever the
  // step it is stuck in.
  ArmConnectTimer();
  if (!plan_.join_by_request) {
    subscriber_id_ = BotSubscriberId(number_);
    const std::string shard = BotShardId(plan_.join, number_);
    return ConnectShard(
        shard, MintBotTicket(plan_.ticket_secret, shard, subscriber_id_,
                             plan_.ticket_ttl_secs));
  }
  if (plan_.join_by_function) return SignInAsGuest();
  PostJoin(plan_.join_url.path, JoinRequestBody(plan_.join, number_), "",
           [self = shared_from_this()](Result<client::HttpResponse> reply) {
             if (!reply.ok()) {
               return self->Fail("join: " + reply.status().message());
             }
             Result<JoinReply> join =
                 ParseJoinReply(reply->status, reply->body);
             if (!join.ok()) {
               return self->Fail("join: " + join.status().message());
             }
             self->subscriber_id_ = join->subscriber_id;
             self->ConnectShard(join->shard_id, join->ticket);
           });
}

void Bot::PostJoin(std::string target, std::string body,
                   const std::string& token,
                   std::function<void(Result<client::HttpResponse>)> done) {
  client::HttpRequest request;
  request.method = "POST";
  request.target = std::move(target);
  request.headers = {{"Content-Type", "application/json"}};
  if (!token.empty())
    request.headers.push_back({"Authorization", "Bearer " + token});
  request.body = std::move(body);
  client::AsyncHttpCall(
      ioc_, plan_.join_tls, plan_.join_endpoint, plan_.join_url,
      std::move(request), plan_.connect_timeout,
      [self = shared_from_this(),
       done = std::move(done)](Result<client::HttpResponse> reply) {
        if (self->ended_) return;
        done(std::move(reply));
      });
}

void Bot::SignInAsGuest() {
  PostJoin(
      kGuestSignInPath, "", "",
      [self = shared_from_this()](Result<client::HttpResponse> reply) {
        if (!reply.ok()) {
          return self->Fail("guest sign-in: " + reply.status().message());
        }
        if (std::optional<int64_t> wait =
                RetryAfterSecs(reply->status, reply->headers)) {
          // Over the server's rate for one address: try again when it
          // says (the WELCOME deadline still holds).
          self->retry_timer_.expires_after(std::chrono::seconds(*wait));
          self->retry_timer_.async_wait([self](boost::system::error_code ec) {
            if (!ec && !self->ended_) self->SignInAsGuest();
          });
          return;
        }
        Result<GuestReply> guest = ParseGuestReply(reply->status, reply->body);
        if (!guest.ok()) {
          return self->Fail("guest sign-in: " + guest.status().message());
        }
        self->CallJoinFunction(guest->token);
      });
}

void Bot::CallJoinFunction(const std::string& token) {
  PostJoin(plan_.function_path, FunctionRequestBody(plan_.function_args), token,
           [self = shared_from_this()](Result<client::HttpResponse> reply) {
             if (!reply.ok()) {
               return self->Fail("join function: " + reply.status().message());
             }
             Result<JoinReply> join =
                 ParseFunctionJoinReply(reply->status, reply->body);
             if (!join.ok()) {
               return self->Fail("join function: " + join.status().message());
             }
             self->subscriber_id_ = join->subscriber_id;
             self->ConnectShard(join->shard_id, join->ticket);
           });
}

void Bot::ArmConnectTimer() {
  timer_.expires_after(plan_.connect_timeout);
  timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->ended_) return;
    if (self->joined_ && !self->transfers_.moving()) return;
    self->Fail("no WELCOME" +
               std::string(self->joined_ ? " from " + self->shard_id_ : "") +
               " within " +
               std::to_string(self->plan_.connect_timeout.count() / 1000) +
               " s");
  });
}

void Bot::OnReceived(bool frame, size_t bytes) {
  if (ended_) return;
  stats_->Received(frame, bytes);
  if (!frame) return;
  const Clock::time_point now = Clock::now();
  if (std::optional<TransferTracker::Move> move = transfers_.Frame(now)) {
    connecting_since_.reset();  // a bot sent on at once is no baseline
    stats_->Transferred(MicrosOf(move->total), MicrosOf(move->reconnect));
  } else if (connecting_since_) {
    stats_->FirstFrame(MicrosOf(now - *connecting_since_));
    connecting_since_.reset();
  }
}

void Bot::OnTransfer(const std::string& shard_id, const std::string& ticket) {
  if (ended_) return;
  if (!transfers_.Transfer(Clock::now())) {
    return Fail("transfer loop: " +
                std::to_string(TransferTracker::kMaxUnframedTransfers) +
                " TRANSFERs without a FRAME, the last to " + shard_id);
  }
  // The source's inputs still unanswered are lost with its connection
  // (the server closes it with 4011 right after the TRANSFER).
  stats_->Unanswered(client_->AbandonPending(), /*at_end=*/false);
  client_->Abort();
  if (plan_.aim) {
    // The target's ticks and entities are its own: draw from its baseline.
    picture_.emplace();
    clock_.emplace(1000.0 / plan_.tick_rate);
    aimed_seqs_.clear();
  }
  ArmConnectTimer();
  ConnectShard(shard_id, ticket);
}

void Bot::ConnectShard(const std::string& shard_id, const std::string& ticket) {
  client::V1Client::Events events;
  auto self = shared_from_this();
  events.welcome = [self](const net::v1::Welcome& w) { self->OnWelcome(w); };
  events.received = [self](bool frame, size_t bytes) {
    self->OnReceived(frame, bytes);
  };
  events.transfer = [self](const net::v1::Transfer& transfer) {
    self->OnTransfer(transfer.shard_id, transfer.ticket);
  };
  events.answered = [self](uint64_t seq, Clock::duration rtt,
                           const net::v1::Reject* reject) {
    if (self->ended_) return;
    self->transfers_.Answered(Clock::now());
    if (self->aimed_seqs_.erase(seq) > 0) {
      self->stats_->AimedAnswered(reject != nullptr,
                                  reject != nullptr ? reject->error : "");
    }
    self->stats_->Answered(
        static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(rtt).count()),
        reject != nullptr, reject != nullptr ? reject->error : "");
  };
  events.input_sent = [self](uint64_t seq) {
    ++self->inputs_sent_;
    self->stats_->InputSent();
    if (self->next_aimed_) {
      self->next_aimed_ = false;
      self->aimed_seqs_.insert(seq);
      self->stats_->AimedSent();
    }
    if (self->inputs_sent_ == self->plan_.inputs_per_bot) {
      self->DoneSending();
    }
  };
  if (plan_.aim) {
    events.frame = [self](const net::v1::Frame& f) { self->OnFrame(f); };
  }
  events.error = [self](const std::string&) {
    if (!self->ended_) self->stats_->Error();
  };
  events.closed = [self](int code, const std::string& reason) {
    self->OnClosed(code, reason);
  };
  shard_id_ = shard_id;
  if (!joined_ && !transfers_.moving()) connecting_since_ = Clock::now();
  client_ = client::V1Client::Create(ioc_, plan_.shard_tls, std::move(events));
  client::WsTarget target;
  target.endpoint = plan_.shard_endpoint;
  target.host = plan_.shard_url.host;
  target.host_header = plan_.shard_url.HostHeader();
  target.path = "/shard/" + client::PercentEncode(shard_id);
  // Frame acks, as @tessera/client asks for them.
  client_->Connect(target, plan_.connect_timeout, ticket,
                   net::v1::kHelloFrameAcks, [self](Status status) {
                     if (!status.ok()) self->Fail(status.message());
                   });
}

void Bot::Fail(const std::string& reason) {
  if (ended_) return;
  ended_ = true;
  timer_.cancel();
  retry_timer_.cancel();
  if (client_) client_->Abort();
  if (joined_) {
    // A joined bot fails only while it follows a move.
    stats_->TransferFailed(reason);
    stats_->Ended(ConnectedSecs(), "");
  } else {
    stats_->ConnectFailed(reason);
  }
  DoneSending();
}

void Bot::DoneSending() {
  if (done_sending_) return;
  done_sending_ = true;
  stats_->DoneSending();
}

double Bot::ConnectedSecs() const {
  return std::chrono::duration<double>(Clock::now() - joined_at_).count();
}

void Bot::OnClosed(int code, const std::string& reason) {
  if (ended_) return;
  if (!joined_ || transfers_.moving()) {
    return Fail("closed before " +
                std::string(joined_ && client_->welcomed() ? "the first FRAME"
                                                           : "WELCOME") +
                (joined_ ? " from " + shard_id_ : "") + ": " +
                std::to_string(code) + (reason.empty() ? "" : " " + reason));
  }
  ended_ = true;
  timer_.cancel();
  stats_->Unanswered(client_->AbandonPending(), /*at_end=*/false);
  stats_->Ended(ConnectedSecs(), std::to_string(code));
  DoneSending();
}

void Bot::Close() {
  if (ended_) return;
  if (!joined_) return Fail("the run ended before the bot joined");
  ended_ = true;
  timer_.cancel();
  stats_->Unanswered(client_->AbandonPending(), /*at_end=*/true);
  stats_->Ended(ConnectedSecs(), "");
  DoneSending();
  // A connection to a move's target may not be open yet.
  if (client_->welcomed()) {
    client_->Close();
  } else {
    client_->Abort();
  }
}

void Bot::OnWelcome(const net::v1::Welcome& welcome) {
  if (ended_) return;
  json_codec_ = welcome.codec == "json";
  if (!welcome.subscriber_id.empty()) subscriber_id_ = welcome.subscriber_id;
  if (joined_) {
    // At a move's target: the inputs go on from where they were.
    timer_.cancel();
    return StartInputs(Clock::duration::zero());
  }
  joined_ = true;
  joined_at_ = Clock::now();
  timer_.cancel();
  stats_->Joined();
  if (plan_.rate <= 0 || plan_.inputs.empty()) return DoneSending();
  if (first_input_at_) {
    return StartInputs(std::max<Clock::duration>(
        Clock::duration::zero(), *first_input_at_ - Clock::now()));
  }
  // The first input at a random point of the first interval, so that bots
  // joined together do not send together.
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / plan_.rate));
  std::uniform_int_distribution<int64_t> offset(0, interval.count());
  StartInputs(Clock::duration(offset(rng_)));
}

void Bot::StartInputs(Clock::duration first_after) {
  if (done_sending_ || plan_.rate <= 0 || plan_.inputs.empty()) return;
  int64_t left = 0;  // no limit
  if (plan_.inputs_per_bot > 0) {
    left = plan_.inputs_per_bot - inputs_sent_;
    if (left <= 0) return;
  }
  client_->SendInputsAtRate(
      plan_.rate, inputs_until_, first_after,
      [self = shared_from_this()] { return self->NextInput(); },
      static_cast<uint64_t>(left));
}

std::optional<net::client::V1Client::Outgoing> Bot::NextInput() {
  const InputTemplate& tpl = plan_.inputs[next_template_ % plan_.inputs.size()];
  TemplateContext context{number_, subscriber_id_};
  std::optional<double> view_tick;
  if (plan_.aim) {
    // Draw now, as a client's animation frame would, and stamp the input
    // with the tick drawn (the render tick clamped to the ticks held).
    const std::optional<double> shard_tick = clock_->TickAt(NowMs());
    if (shard_tick) {
      view_tick = picture_->Render(*shard_tick -
                                   plan_.interp_delay_ms / clock_->tick_ms());
    }
    if (tpl.aims()) {
      const std::optional<DrawnPosition> target =
          view_tick ? picture_->Find(*plan_.aim) : std::nullopt;
      if (!target) {
        stats_->AimNotDrawn();
        return std::nullopt;  // the same template next time
      }
      context.aim[0] = target->x;
      context.aim[1] = target->y;
      context.aim[2] = target->z;
      next_aimed_ = true;
    }
  }
  ++next_template_;
  return net::client::V1Client::Outgoing{Encode(tpl.Render(rng_, context)),
                                         view_tick};
}

std::string Bot::Encode(const nlohmann::json& value) const {
  if (json_codec_) return value.dump();
  const std::vector<uint8_t> bytes = nlohmann::json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace tessera::loadtest
