// A realm session: HELLO (ticket, security floor) -> attach to the realm
// host; WRITEs decoded on this connection's key table, held to the kind's
// ingress limits and queued on the host; the host's answers and the
// realm's commits out as HYDRATE/RESUME/COMMIT(S)/ACK/REJECT, each commit
// sliced for this connection's avatar and encoded on its outgoing key
// table.
//
// Threading: everything of one session runs on its connection's strand:
// the connection's events, the HELLO timer, and the jobs the host's
// RealmPeer calls post from the realm workers. No member needs a lock.
//
// Invariants:
// - Attached to the host from the first accepted HELLO until the session
//   stops (one Detach, queued after everything this session queued).
// - version_ is the last version this connection was told of; commits at
//   or below it are never sent again.
#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <optional>
#include <utility>

#include "net/connections.h"
#include "net/realm_sessions.h"
#include "net/server_context.h"
#include "net/session_factory.h"
#include "net/ticket.h"
#include "net/ws_connection.h"
#include "realm/engine.h"
#include "realm/limits.h"
#include "realm/rules.h"
#include "realm/wire.h"

namespace tessera::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace wire = realm::wire;

constexpr std::string_view kRealmResource = "realm";

class RealmSession final : public realm::RealmPeer,
                           public WsConnection::Handler,
                           public TopicSubscriber,
                           public std::enable_shared_from_this<RealmSession> {
 public:
  RealmSession(ServerContext& ctx, realm::RealmHost& host,
               realm::SecurityFloor floor, beast::tcp_stream stream,
               std::string kind_name, std::string key,
               std::shared_ptr<const realm::RealmKindConfig> kind)
      : ctx_(ctx),
        host_(host),
        floor_(floor),
        kind_name_(std::move(kind_name)),
        key_(std::move(key)),
        kind_(std::move(kind)),
        conn_(std::move(stream), Options(ctx, kind_.get()), ctx.metrics, *this),
        hello_timer_(conn_.executor()),
        restricts_reads_(kind_ == nullptr ||
                         realm::RestrictsReads(kind_->rules)) {}

  ~RealmSession() override { ctx_.RemoveSession(this); }

  void Start(http::request<http::string_body> request) {
    ctx_.AddSession(this, weak_from_this());
    conn_.Start(std::move(request), weak_from_this());
  }

  // TopicSubscriber: the server's Stop() closes every session this way.
  void PostClose(int code, std::string reason) override {
    OnStrand([code, reason = std::move(reason)](RealmSession& s) {
      s.conn_.Close(code, reason, false);
    });
  }
  // Realm sessions subscribe to no hub topic.
  void Post(const std::shared_ptr<const TopicMessage>&, size_t) override {}

  // RealmPeer; any thread.
  void OnAttached(realm::AttachAnswer answer) override {
    OnStrand([answer = std::move(answer)](RealmSession& s) mutable {
      s.DeliverAttach(std::move(answer));
    });
  }
  void OnCommits(std::shared_ptr<const realm::CommitBatch> batch) override {
    OnStrand([batch = std::move(batch)](RealmSession& s) {
      s.DeliverCommits(*batch);
    });
  }
  void OnRejected(uint64_t seq, std::string code,
                  std::string message) override {
    OnStrand([seq, code = std::move(code),
              message = std::move(message)](RealmSession& s) {
      if (s.live()) s.conn_.Send(wire::EncodeReject(seq, code, message));
    });
  }
  void OnIntentDone(uint64_t seq, int64_t version) override {
    OnStrand([seq, version](RealmSession& s) {
      if (s.live()) {
        s.conn_.Send(wire::EncodeAck(seq, static_cast<uint64_t>(version)));
      }
    });
  }
  void OnClosed(int code, std::string reason) override {
    OnStrand([code, reason = std::move(reason)](RealmSession& s) {
      s.attached_ = false;  // the host dropped us already
      s.conn_.Close(code, reason, false);
    });
  }

 private:
  static WsConnection::Options Options(const ServerContext& ctx,
                                       const realm::RealmKindConfig* kind) {
    const ServerOptions& options = ctx.options;
    WsConnection::Options out;
    out.max_message_bytes =
        kind != nullptr
            ? static_cast<size_t>(kind->limits.max_frame_bytes) + 1024
            : options.max_message_bytes;
    out.close_timeout_ms = options.close_timeout_ms;
    // A replay is up to logWindow COMMITs at once; the queue holds 16
    // times this many messages.
    const size_t replay =
        kind != nullptr ? static_cast<size_t>(kind->log_window) + 512 : 0;
    out.max_queued_frames =
        std::max(options.max_queued_frames, replay / 16 + 1);
    out.subprotocol = std::string(wire::kSubprotocol);
    out.ping_interval_ms = options.ws_ping_interval_ms;
    out.silence_timeout_ms = options.ws_silence_timeout_ms;
    out.clock = &ctx.clock;
    return out;
  }

  template <typename F>
  void OnStrand(F f) {
    asio::post(conn_.executor(), [self = shared_from_this(),
                                  f = std::move(f)]() mutable { f(*self); });
  }

  bool live() const { return conn_.open() && !stopped_; }

  // WsConnection::Handler
  void OnOpen() override {
    int stop_code = 0;
    std::string stop_reason;
    if (ctx_.Stopping(&stop_code, &stop_reason)) {
      conn_.Close(stop_code, stop_reason, true);
      return;
    }
    if (kind_ == nullptr || !realm::RealmHost::ValidKey(key_)) {
      conn_.Close(kCloseShardNotFound,
                  kind_ == nullptr
                      ? "no realm kind \"" + kind_name_ + "\""
                      : "a realm key is 1 to 128 bytes of [A-Za-z0-9_.:-]",
                  false);
      return;
    }
    if (ctx_.options.hello_timeout_ms > 0) {
      hello_timer_.expires_after(
          std::chrono::milliseconds(ctx_.options.hello_timeout_ms));
      hello_timer_.async_wait(
          [self = shared_from_this()](boost::system::error_code ec) {
            if (ec || self->helloed_ || !self->conn_.open()) return;
            self->conn_.Close(
                kCloseHelloTimeout,
                "no HELLO within " +
                    std::to_string(self->ctx_.options.hello_timeout_ms) + " ms",
                false);
          });
    }
  }

  void OnMessage(std::span<const uint8_t> bytes, bool binary) override {
    if (!live()) return;
    if (!binary) {
      conn_.Close(kCloseBadFrame, "text messages are not allowed", false);
      return;
    }
    Result<wire::ClientMessage> decoded = wire::DecodeClientMessage(bytes);
    if (!decoded.ok()) {
      conn_.Close(kCloseBadFrame, decoded.status().message(), false);
      return;
    }
    wire::ClientMessage& msg = decoded.value();
    if (const auto* hello = std::get_if<wire::Hello>(&msg)) {
      HandleHello(*hello);
    } else if (!helloed_) {
      conn_.Close(kCloseHelloExpected, "the first message must be HELLO",
                  false);
    } else if (const auto* write = std::get_if<wire::Write>(&msg)) {
      HandleWrite(*write);
    } else if (const auto* intent = std::get_if<wire::Intent>(&msg)) {
      HandleIntent(*intent);
    } else if (const auto* ping = std::get_if<wire::Ping>(&msg)) {
      conn_.SendUrgent(wire::EncodePong(ping->nonce));
    }
  }

  void OnClosing() override { Stop(); }
  void OnEnd() override { Stop(); }

  void Stop() {
    if (stopped_) return;
    stopped_ = true;
    hello_timer_.cancel();
    if (attached_) host_.Detach(kind_name_, key_, this);
    attached_ = false;
  }

  void HandleHello(const wire::Hello& hello) {
    hello_timer_.cancel();
    if (hello.protocol != wire::kProtocol) {
      conn_.Close(kCloseUnsupportedVersion,
                  "realm protocol " + std::to_string(hello.protocol) +
                      " is not supported; this server speaks 1",
                  false);
      return;
    }
    TicketCheck check =
        VerifyTicket(ctx_.ticket_secret, hello.ticket, kRealmResource,
                     kind_name_ + "/" + key_, ctx_.UnixNow());
    if (check.error != TicketError::kNone) {
      const int code =
          check.error == TicketError::kExpired         ? kCloseTicketExpired
          : check.error == TicketError::kWrongResource ? kCloseTicketWrongShard
                                                       : kCloseTicketInvalid;
      conn_.Close(code, check.message, false);
      return;
    }
    if (check.ticket.subscriber_id.empty()) {
      conn_.Close(kCloseTicketInvalid, "the ticket names no subscriber", false);
      return;
    }
    // The floor is checked before anything of the realm is looked at. This
    // server's own port is never TLS.
    const realm::SecurityFloor floor =
        realm::EffectiveFloor(kind_->security, floor_);
    if (floor == realm::SecurityFloor::kEncrypted) {
      conn_.Close(kCloseInsufficientSecurity,
                  "insufficient_security: realm kind \"" + kind_name_ +
                      "\" needs an encrypted connection (TLS)",
                  false);
      return;
    }
    batched_ = (hello.flags & wire::kHelloCommits) != 0;
    Status attached = host_.Attach(
        kind_name_, key_, shared_from_this(), check.ticket.subscriber_id,
        static_cast<int64_t>(hello.epoch), static_cast<int64_t>(hello.version));
    if (!attached.ok()) {
      conn_.Close(attached.code() == StatusCode::kUnavailable
                      ? kCloseGoingAway
                      : kCloseShardNotFound,
                  attached.message(), false);
      return;
    }
    helloed_ = true;
    attached_ = true;
    if (!ingress_) ingress_.emplace(kind_->limits);
  }

  void HandleWrite(const wire::Write& write) {
    // Decoded under the nesting cap only, so that the key tables of this
    // direction stay in step whatever the verdict; the limits are judged on
    // the decoded patch.
    realm::DecodeLimits limits = realm::LogDecodeLimits();
    limits.max_bytes =
        static_cast<size_t>(kind_->limits.max_frame_bytes) + 1024;
    Result<realm::Patch> patch =
        realm::DecodePatch(write.patch, &in_keys_, limits);
    if (!patch.ok()) {
      conn_.Close(kCloseBadFrame, "WRITE: " + patch.status().message(), false);
      return;
    }
    Status admitted =
        ingress_->Admit(write.patch.size(), *patch, ctx_.clock.NowUs());
    if (!admitted.ok()) {
      Breach(write.seq, admitted);
      return;
    }
    if (patch->empty()) {
      conn_.Send(wire::EncodeReject(write.seq, "invalid_patch",
                                    "an empty patch changes nothing"));
      return;
    }
    host_.Write(kind_name_, key_, this, write.seq, std::move(patch).value());
  }

  // A refused frame: REJECT limits_exceeded, and the forced detach once
  // the breaches pass the kind's maximum.
  void Breach(uint64_t seq, const Status& why) {
    conn_.Send(wire::EncodeReject(seq, "limits_exceeded", why.message()));
    if (ingress_->should_detach()) {
      conn_.Close(kCloseLimitsExceeded,
                  "limits_exceeded: more than " +
                      std::to_string(kind_->limits.max_breaches_before_detach) +
                      " breaches",
                  false);
    }
  }

  // Held to the frame size and the write rate like a WRITE; the args are
  // JSON text, nested at most kMaxArgsDepth deep.
  void HandleIntent(const wire::Intent& intent) {
    Status admitted = ingress_->Admit(intent.args.size() + intent.name.size(),
                                      {}, ctx_.clock.NowUs());
    if (!admitted.ok()) {
      Breach(intent.seq, admitted);
      return;
    }
    realm::Json args = realm::Json::parse(intent.args, nullptr,
                                          /*allow_exceptions=*/false);
    if (args.is_discarded() || JsonDepth(intent.args) > kMaxArgsDepth) {
      conn_.Send(wire::EncodeReject(
          intent.seq, "invalid_intent",
          "INTENT args must be JSON text nested at most 32 deep"));
      return;
    }
    host_.Intent(kind_name_, key_, this, intent.seq, std::string(intent.name),
                 std::move(args));
  }

  static constexpr int kMaxArgsDepth = 32;
  // The deepest nesting of [ and { in JSON text (outside strings).
  static int JsonDepth(std::string_view text) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        deepest = std::max(deepest, ++depth);
      } else if (c == ']' || c == '}') {
        --depth;
      }
    }
    return deepest;
  }

  void DeliverAttach(realm::AttachAnswer answer) {
    if (!live()) return;
    avatar_ = answer.avatar;
    const realm::Json limits = realm::AdvertisedLimits(kind_->limits);
    if (answer.hydrate) {
      realm::Patch state = {
          realm::Op{realm::OpKind::kSet, {}, std::move(answer.state)}};
      conn_.Send(wire::EncodeHydrate(static_cast<uint64_t>(answer.epoch),
                                     static_cast<uint64_t>(answer.head),
                                     avatar_, limits,
                                     realm::EncodePatch(state, &out_keys_)));
      version_ = answer.head;
      return;
    }
    WsConnection::Batch together(conn_);  // the RESUME and its replay
    conn_.Send(wire::EncodeResume(
        static_cast<uint64_t>(answer.epoch), static_cast<uint64_t>(answer.from),
        static_cast<uint64_t>(answer.head), avatar_, limits));
    version_ = answer.from;
    DeliverCommits(answer.replay);
    version_ = answer.head;
  }

  // The commits of `batch` this connection was not told of yet, each as
  // this avatar may read it: one COMMITS for a client that asked for it in
  // its HELLO, else a COMMIT or ACK each.
  void DeliverCommits(const realm::CommitBatch& batch) {
    if (!live()) return;
    WsConnection::Batch together(conn_);  // one group commit, one write
    for (const realm::BroadcastCommit& commit : batch) {
      if (commit.version <= version_) continue;
      version_ = commit.version;
      const auto version = static_cast<uint64_t>(commit.version);
      if (!restricts_reads_) {  // everyone reads all: nothing to slice
        if (commit.writer == this) {
          SendAck(version, commit.seq);
        } else {
          realm::EncodePatchTo(commit.patch, &out_keys_, &commit.keys,
                               &patch_bytes_);
          SendCommit(version, patch_bytes_);
        }
        continue;
      }
      realm::Patch sliced;
      for (const realm::Op& op : commit.patch) {
        if (std::optional<realm::Op> seen =
                realm::SliceOp(kind_->rules, op, avatar_)) {
          sliced.push_back(std::move(*seen));
        }
      }
      if (commit.writer == this) {
        if (sliced == commit.patch) {
          SendAck(version, commit.seq);
        } else {
          SendCommit(version, realm::EncodePatch(sliced, &out_keys_),
                     commit.seq);
        }
      } else if (!sliced.empty()) {
        SendCommit(version, realm::EncodePatch(sliced, &out_keys_));
      }
    }
    if (commits_.size() > 0) conn_.Send(commits_.Take());
  }

  // A replay can be long: a COMMITS goes out once it holds this many bytes.
  static constexpr size_t kMaxCommitsBytes = 1 << 20;

  void SendAck(uint64_t version, uint64_t seq) {
    if (!batched_) return conn_.Send(wire::EncodeAck(seq, version));
    commits_.AddAck(version, seq);
    if (commits_.bytes() >= kMaxCommitsBytes) conn_.Send(commits_.Take());
  }
  void SendCommit(uint64_t version, std::string_view patch,
                  std::optional<uint64_t> seq = std::nullopt) {
    if (!batched_) return conn_.Send(wire::EncodeCommit(version, patch, seq));
    commits_.Add(version, patch, seq);
    if (commits_.bytes() >= kMaxCommitsBytes) conn_.Send(commits_.Take());
  }

  ServerContext& ctx_;
  realm::RealmHost& host_;
  const realm::SecurityFloor floor_;
  const std::string kind_name_;
  const std::string key_;
  const std::shared_ptr<const realm::RealmKindConfig> kind_;  // null: unknown
  WsConnection conn_;
  asio::steady_timer hello_timer_;

  bool helloed_ = false;
  bool attached_ = false;
  bool stopped_ = false;
  std::string avatar_;
  int64_t version_ = 0;
  bool batched_ = false;  // the HELLO asked for COMMITS
  wire::CommitsWriter commits_;
  std::string patch_bytes_;   // one commit's patch, encoded (kept for reuse)
  realm::KeyTable in_keys_;   // what the client announced
  realm::KeyTable out_keys_;  // what this session announced
  // False when the kind's rules keep nothing from anyone.
  const bool restricts_reads_;
  std::optional<realm::ConnectionIngress> ingress_;
};

class RealmSessionFactory final : public SessionFactory {
 public:
  RealmSessionFactory(realm::RealmHost& host, realm::SecurityFloor floor)
      : host_(host), floor_(floor) {}

  void Run(ServerContext& ctx, beast::tcp_stream stream,
           http::request<http::string_body> request,
           std::string id) const override {
    // id is "<kind>/<key>"; a missing key is refused once the socket is
    // open, with a close reason the client can read.
    const size_t slash = id.find('/');
    std::string kind_name = id.substr(0, slash);
    std::string key = slash == std::string::npos ? "" : id.substr(slash + 1);
    auto session = std::make_shared<RealmSession>(
        ctx, host_, floor_, std::move(stream), kind_name, std::move(key),
        host_.FindKind(kind_name));
    session->Start(std::move(request));
  }

 private:
  realm::RealmHost& host_;
  const realm::SecurityFloor floor_;
};

}  // namespace

RealmSessions::RealmSessions(realm::RealmHost& host, realm::SecurityFloor floor)
    : factory_(std::make_unique<RealmSessionFactory>(host, floor)) {}

RealmSessions::~RealmSessions() = default;

}  // namespace tessera::net
