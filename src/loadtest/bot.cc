#include "loadtest/bot.h"

#include <optional>
#include <span>
#include <variant>

#include "loadtest/http_post.h"
#include "net/msgpack.h"
#include "net/protocol_v1.h"

namespace tessera::loadtest {
namespace {

namespace asio = boost::asio;
namespace v1 = net::v1;
using Clock = Bot::Clock;

constexpr Clock::time_point kAnswered = Clock::time_point::min();

// A FRAME starts with an array header then the type 19. Frames are only
// counted, not decoded: bots decoding every snapshot would spend more CPU
// than the server spends sending them.
bool IsFrame(const uint8_t* p, size_t n) {
  if (n < 2) return false;
  const bool fixarray = (p[0] & 0xf0) == 0x90;
  return fixarray && p[1] == v1::kFrame;
}

// A FRAME's last_seq (its third element), reading nothing after it.
std::optional<uint64_t> FrameLastSeq(const uint8_t* p, size_t n) {
  net::msgpack::Reader r(std::span<const uint8_t>(p, n));
  if (!r.ReadArrayHeader().ok() || !r.ReadUint().ok() || !r.ReadUint().ok()) {
    return std::nullopt;
  }
  Result<uint64_t> last_seq = r.ReadUint();
  if (!last_seq.ok()) return std::nullopt;
  return *last_seq;
}

}  // namespace

Bot::Bot(asio::io_context& ioc, const BotPlan& plan, int64_t number,
         StatsShard* stats)
    : ioc_(ioc),
      plan_(plan),
      number_(number),
      stats_(stats),
      timer_(ioc),
      rng_(0x5eed0000 + static_cast<uint64_t>(number)) {}

void Bot::Start(Clock::time_point inputs_until) {
  inputs_until_ = inputs_until;
  // The bot counts as failed if it has not joined in time, whatever the
  // step it is stuck in.
  timer_.expires_after(plan_.connect_timeout);
  timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->joined_) return;
    self->Fail("no WELCOME within " +
               std::to_string(self->plan_.connect_timeout.count() / 1000) +
               " s");
  });
  if (!plan_.join_by_request) {
    subscriber_id_ = BotSubscriberId(number_);
    const std::string shard = BotShardId(plan_.join, number_);
    return ConnectShard(
        shard, MintBotTicket(plan_.ticket_secret, shard, subscriber_id_,
                             plan_.ticket_ttl_secs));
  }
  AsyncPostJson(ioc_, plan_.join_tls, plan_.join_endpoint, plan_.join_url,
                JoinRequestBody(plan_.join, number_), plan_.connect_timeout,
                [self = shared_from_this()](Result<HttpReply> reply) {
                  if (self->ended_) return;
                  if (!reply.ok())
                    return self->Fail("join: " + reply.status().message());
                  Result<JoinReply> join =
                      ParseJoinReply(reply->status, reply->body);
                  if (!join.ok())
                    return self->Fail("join: " + join.status().message());
                  self->subscriber_id_ = join->subscriber_id;
                  self->ConnectShard(join->shard_id, join->ticket);
                });
}

void Bot::ConnectShard(const std::string& shard_id, const std::string& ticket) {
  ws_ = WsClient::Create(ioc_, plan_.shard_tls);
  WsTarget target{plan_.shard_endpoint, plan_.shard_url.host,
                  plan_.shard_url.HostHeader(),
                  "/shard/" + PercentEncode(shard_id)};
  ws_->Connect(
      target, plan_.connect_timeout,
      [self = shared_from_this(), ticket](Status status) {
        if (self->ended_) return;
        if (!status.ok()) return self->Fail(status.message());
        self->ws_->Run([self](const uint8_t* data,
                              size_t size) { self->OnMessage(data, size); },
                       [self](int code, const std::string& reason) {
                         self->OnClosed(code, reason);
                       });
        // Frame acks, as @tessera/client asks for them.
        self->ws_->Send(
            v1::EncodeHello(ticket, v1::kVersion, v1::kHelloFrameAcks));
      });
}

void Bot::Fail(const std::string& reason) {
  if (ended_) return;
  ended_ = true;
  timer_.cancel();
  if (ws_) ws_->Abort();
  stats_->ConnectFailed(reason);
}

double Bot::ConnectedSecs() const {
  return std::chrono::duration<double>(Clock::now() - joined_at_).count();
}

void Bot::OnClosed(int code, const std::string& reason) {
  if (ended_) return;
  if (!joined_) {
    return Fail("closed before WELCOME: " + std::to_string(code) +
                (reason.empty() ? "" : " " + reason));
  }
  ended_ = true;
  timer_.cancel();
  stats_->Unanswered(pending_count_, /*at_end=*/false);
  pending_count_ = 0;
  stats_->Ended(ConnectedSecs(), std::to_string(code));
}

void Bot::Close() {
  if (ended_) return;
  if (!joined_) return Fail("the run ended before the bot joined");
  ended_ = true;
  timer_.cancel();
  stats_->Unanswered(pending_count_, /*at_end=*/true);
  pending_count_ = 0;
  stats_->Ended(ConnectedSecs(), "");
  ws_->Close();
}

void Bot::OnMessage(const uint8_t* data, size_t size) {
  if (ended_) return;
  const bool frame = IsFrame(data, size);
  stats_->Received(frame, size);
  if (frame) {
    if (!frame_acks_) return;
    std::optional<uint64_t> last_seq = FrameLastSeq(data, size);
    if (!last_seq) return stats_->Error();
    return AckUpTo(*last_seq);
  }
  Result<v1::ServerMessage> msg =
      v1::DecodeServerMessage(std::span<const uint8_t>(data, size));
  if (!msg.ok()) return stats_->Error();
  if (auto* welcome = std::get_if<v1::Welcome>(&*msg)) {
    frame_acks_ = (welcome->flags & v1::kHelloFrameAcks) != 0;
    return OnWelcome(welcome->subscriber_id, welcome->codec);
  }
  if (auto* ack = std::get_if<v1::Ack>(&*msg)) {
    return OnAnswer(ack->seq, false, "");
  }
  if (auto* reject = std::get_if<v1::Reject>(&*msg)) {
    return OnAnswer(reject->seq, true, reject->error);
  }
  if (auto* ping = std::get_if<v1::Ping>(&*msg)) {
    return ws_->Send(v1::EncodePong(ping->nonce));
  }
  if (std::holds_alternative<v1::Frame>(*msg)) {
    stats_->Received(true, 0);  // a frame IsFrame did not recognise
  }
}

void Bot::OnWelcome(const std::string& subscriber_id,
                    const std::string& codec) {
  if (joined_) return stats_->Error();  // a second WELCOME
  joined_ = true;
  joined_at_ = Clock::now();
  timer_.cancel();
  if (!subscriber_id.empty()) subscriber_id_ = subscriber_id;
  json_codec_ = codec == "json";
  stats_->Joined();
  if (plan_.rate <= 0 || plan_.inputs.empty()) return;
  // The first input at a random point of the first interval, so that bots
  // joined together do not send together.
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / plan_.rate));
  std::uniform_int_distribution<int64_t> offset(0, interval.count());
  next_input_ = Clock::now() + Clock::duration(offset(rng_));
  ScheduleInput();
}

void Bot::OnAnswer(uint64_t seq, bool refused, const std::string& error) {
  if (seq < first_pending_seq_ || seq - first_pending_seq_ >= pending_.size() ||
      pending_[seq - first_pending_seq_] == kAnswered) {
    return stats_->Error();  // an answer to nothing, or a second one
  }
  auto& sent = pending_[seq - first_pending_seq_];
  const auto rtt = std::chrono::duration_cast<std::chrono::microseconds>(
      Clock::now() - sent);
  sent = kAnswered;
  --pending_count_;
  stats_->Answered(static_cast<uint64_t>(rtt.count()), refused, error);
  while (!pending_.empty() && pending_.front() == kAnswered) {
    pending_.pop_front();
    ++first_pending_seq_;
  }
}

void Bot::AckUpTo(uint64_t last_seq) {
  // The server sent the REJECTs among them before this FRAME.
  while (!pending_.empty() && first_pending_seq_ <= last_seq) {
    if (pending_.front() != kAnswered) {
      OnAnswer(first_pending_seq_, false, "");  // pops answered ones
    } else {
      pending_.pop_front();
      ++first_pending_seq_;
    }
  }
}

void Bot::ScheduleInput() {
  if (ended_ || next_input_ >= inputs_until_) return;
  timer_.expires_at(next_input_);
  timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->ended_) return;
    self->SendInput();
    const auto interval = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / self->plan_.rate));
    self->next_input_ += interval;
    // A bot that fell behind (a busy thread) does not catch up in a burst.
    self->next_input_ = std::max(self->next_input_, Clock::now());
    self->ScheduleInput();
  });
}

void Bot::SendInput() {
  const InputTemplate& tpl =
      plan_.inputs[next_template_++ % plan_.inputs.size()];
  const nlohmann::json value =
      tpl.Render(rng_, TemplateContext{number_, subscriber_id_});
  std::string payload;
  if (json_codec_) {
    payload = value.dump();
  } else {
    const std::vector<uint8_t> bytes = nlohmann::json::to_msgpack(value);
    payload.assign(bytes.begin(), bytes.end());
  }
  ws_->Send(v1::EncodeInput(next_seq_++, payload));
  pending_.push_back(Clock::now());
  ++pending_count_;
  stats_->InputSent();
}

}  // namespace tessera::loadtest
