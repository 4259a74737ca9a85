// `tessera connect --shard ID [--url URL] [--kind K] [--params JSON]
//  [--subscriber S] [--claims JSON] [--ticket T | --function NAME [--args
//  JSON]] [--send JSON]... [--frames N] [--seconds S] [--frame-acks]`:
// joins a shard the way a client does and prints what the server sends,
// one line per message: the keyword, then a JSON object.
//
//   WELCOME {"shard":..,"subscriber":..,"tickRate":..,"codec":..,"tick":..}
//   FRAME {"tick":..,"lastSeq":..,"snapshot":<decoded>,"entities":{..}}
//   INPUT / ACK / REJECT {"seq":..,...}, NOTIFY {...}, TRANSFER {...}
//   CLOSED {"code":..,"reason":..}
//
// The ticket comes from the dev join (POST /api/dev/join, the default),
// from --ticket, or from the app's join function (--function: a guest
// sign-in, then POST /api/functions/<NAME>). Snapshots are decoded with
// the kind's codec (MessagePack or JSON, from the WELCOME); --send inputs
// are JSON, encoded the same way, and go out in order after the WELCOME.
// Replication payloads go through the reference decoder (held, entered and
// left entities). A TRANSFER is followed: the client joins the new shard
// with the ticket it carries.
//
// Runs until --frames FRAMEs or --seconds passed, the server closes, or
// Ctrl-C. Exit code 0 when it stopped on its own or the server closed with
// 1000; 1 when the join or the connection failed or the server closed with
// another code; 2 for a bad option.
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cli/commands.h"
#include "common/status.h"
#include "loadtest/join.h"
#include "net/client/blocking_client.h"
#include "net/client/http_client.h"
#include "net/client/url.h"
#include "net/protocol_v1.h"
#include "replication/decoder.h"
#include "server/request_target.h"

namespace tessera::cli {
namespace {

using json = nlohmann::json;
using net::client::BlockingClient;

struct ConnectArgs {
  std::string url = "http://127.0.0.1:4321";
  std::string shard;
  std::string kind;
  std::string params;
  std::string subscriber;
  std::string claims;
  std::string ticket;
  std::string function;
  std::string function_args;
  std::vector<std::string> sends;
  int64_t frames = 0;
  double seconds = 0;
  bool frame_acks = false;
};

std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted.store(true); }

void Print(const char* keyword, const json& body) {
  std::cout << keyword << " " << body.dump() << "\n" << std::flush;
}

// A JSON option's value; `what` names it in the error.
Result<json> ParseJsonOption(const std::string& text, const char* what,
                             bool object_only) {
  json value = json::parse(text, nullptr, false);
  if (value.is_discarded() || (object_only && !value.is_object())) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + " must be " +
                      (object_only ? "a JSON object" : "JSON") + ": " + text);
  }
  return value;
}

// Bytes in the kind's codec, shown as JSON: decoded when they decode, else
// {"undecodable": "<hex>"}.
json DecodePayload(const std::string& bytes, const std::string& codec) {
  json value = codec == "json" ? json::parse(bytes, nullptr, false)
                               : json::from_msgpack(bytes, true, false);
  if (!value.is_discarded()) return value;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) {
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  return json{{"undecodable", hex}};
}

std::string EncodePayload(const json& value, const std::string& codec) {
  if (codec == "json") return value.dump();
  std::vector<uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

struct Joined {
  std::string shard;
  std::string ticket;
};

Result<net::client::HttpResponse> Post(const net::client::Url& base,
                                       const std::string& path,
                                       const std::string& body,
                                       const std::string& bearer = "") {
  net::client::HttpHeaders headers = {{"Content-Type", "application/json"}};
  if (!bearer.empty())
    headers.emplace_back("Authorization", "Bearer " + bearer);
  return net::client::HttpCall(base.host, base.port, "POST", path, body,
                               headers, 10000);
}

// The dev join's body: the fields given.
Result<std::string> DevJoinBody(const ConnectArgs& args) {
  json body = {{"shard", args.shard}};
  if (!args.kind.empty()) body["kind"] = args.kind;
  if (!args.params.empty()) {
    Result<json> params = ParseJsonOption(args.params, "--params", false);
    if (!params.ok()) return params.status();
    body["params"] = *params;
  }
  if (!args.subscriber.empty()) body["subscriber"] = args.subscriber;
  if (!args.claims.empty()) {
    Result<json> claims = ParseJsonOption(args.claims, "--claims", true);
    if (!claims.ok()) return claims.status();
    body["claims"] = *claims;
  }
  return body.dump();
}

Result<Joined> Join(const ConnectArgs& args, const net::client::Url& base) {
  if (!args.ticket.empty()) return Joined{args.shard, args.ticket};
  if (!args.function.empty()) {
    json fn_args = nullptr;
    if (!args.function_args.empty()) {
      Result<json> parsed = ParseJsonOption(args.function_args, "--args", true);
      if (!parsed.ok()) return parsed.status();
      fn_args = *parsed;
    }
    auto guest = Post(base, loadtest::kGuestSignInPath, "{}");
    if (!guest.ok()) return guest.status();
    Result<loadtest::GuestReply> signed_in =
        loadtest::ParseGuestReply(guest->status, guest->body);
    if (!signed_in.ok()) return signed_in.status();
    auto call = Post(base, loadtest::FunctionPath(args.function),
                     loadtest::FunctionRequestBody(fn_args), signed_in->token);
    if (!call.ok()) return call.status();
    Result<loadtest::JoinReply> reply =
        loadtest::ParseFunctionJoinReply(call->status, call->body);
    if (!reply.ok()) return reply.status();
    return Joined{reply->shard_id, reply->ticket};
  }
  Result<std::string> body = DevJoinBody(args);
  if (!body.ok()) return body.status();
  auto answer = Post(base, "/api/dev/join", *body);
  if (!answer.ok()) return answer.status();
  Result<loadtest::JoinReply> reply =
      loadtest::ParseJoinReply(answer->status, answer->body);
  if (!reply.ok()) return reply.status();
  return Joined{reply->shard_id, reply->ticket};
}

// One connection's session: prints every message until it ends.
class Session {
 public:
  Session(const ConnectArgs& args, const std::vector<json>& inputs,
          std::chrono::steady_clock::time_point deadline)
      : args_(args), inputs_(inputs), deadline_(deadline) {}

  enum class End { kStopped, kClosed, kTransfer };

  // Connects to `joined`, sends HELLO (and the --send inputs after the
  // WELCOME) and prints until the end. Errors: the connection failed.
  Result<End> Run(const net::client::Url& base, const Joined& joined) {
    net::client::ClientOptions options;
    options.host = base.host;
    options.port = base.port;
    options.timeout_ms = 10000;
    options.hello_flags = args_.frame_acks ? net::v1::kHelloFrameAcks : 0;
    auto client = BlockingClient::Connect(options, joined.shard);
    if (!client.ok()) return client.status();
    client_ = std::move(client).value();
    if (Status s = client_->SendHello(joined.ticket, net::v1::kVersion,
                                      options.hello_flags);
        !s.ok()) {
      return s;
    }
    for (;;) {
      if (g_interrupted.load() || Expired()) {
        (void)client_->Close();
        return End::kStopped;
      }
      Result<net::client::ClientEvent> event = client_->Read(200);
      if (!event.ok()) {
        if (event.status().code() == StatusCode::kDeadlineExceeded) continue;
        return event.status();
      }
      if (event->closed) {
        close_code_ = event->close.code;
        Print("CLOSED",
              {{"code", event->close.code}, {"reason", event->close.reason}});
        return End::kClosed;
      }
      Result<net::v1::ServerMessage> msg = net::v1::DecodeServerMessage(
          {reinterpret_cast<const uint8_t*>(event->bytes.data()),
           event->bytes.size()});
      if (!msg.ok()) {
        Print("UNDECODABLE", {{"bytes", event->bytes.size()},
                              {"error", msg.status().message()}});
        continue;
      }
      if (std::optional<End> end = Handle(*msg)) return *end;
    }
  }

  int close_code() const { return close_code_; }
  const std::optional<Joined>& transfer() const { return transfer_; }

 private:
  bool Expired() const {
    return args_.seconds > 0 && std::chrono::steady_clock::now() >= deadline_;
  }

  std::optional<End> Handle(const net::v1::ServerMessage& message) {
    if (const auto* w = std::get_if<net::v1::Welcome>(&message)) {
      codec_ = w->codec;
      Print("WELCOME", {{"shard", w->shard_id},
                        {"subscriber", w->subscriber_id},
                        {"tickRate", w->tick_rate},
                        {"codec", w->codec},
                        {"tick", w->tick},
                        {"flags", w->flags}});
      SendInputs();
    } else if (const auto* f = std::get_if<net::v1::Frame>(&message)) {
      PrintFrame(*f);
      if (args_.frames > 0 && ++frames_ >= args_.frames) {
        (void)client_->Close();
        return End::kStopped;
      }
    } else if (const auto* a = std::get_if<net::v1::Ack>(&message)) {
      Print("ACK", {{"seq", a->seq}});
    } else if (const auto* r = std::get_if<net::v1::Reject>(&message)) {
      Print("REJECT", {{"seq", r->seq}, {"error", r->error}});
    } else if (const auto* p = std::get_if<net::v1::Ping>(&message)) {
      (void)client_->SendPong(p->nonce);
    } else if (const auto* n = std::get_if<net::v1::Notify>(&message)) {
      Print("NOTIFY", {{"module", n->module},
                       {"channel", n->channel},
                       {"payload", DecodePayload(n->payload, "json")},
                       {"flowId", n->flow_id}});
    } else if (const auto* t = std::get_if<net::v1::Transfer>(&message)) {
      Print("TRANSFER", {{"shard", t->shard_id}});
      transfer_ = Joined{t->shard_id, t->ticket};
      return End::kTransfer;
    }
    return std::nullopt;
  }

  void SendInputs() {
    uint64_t seq = 0;
    for (const json& value : inputs_) {
      ++seq;
      Print("INPUT", {{"seq", seq}, {"payload", value}});
      (void)client_->SendInput(seq, EncodePayload(value, codec_));
    }
  }

  void PrintFrame(const net::v1::Frame& frame) {
    json line = {{"tick", frame.tick}, {"lastSeq", frame.last_seq}};
    if (!frame.snapshot_nil) {
      line["snapshot"] = DecodePayload(frame.snapshot, codec_);
    }
    if (frame.entities) {
      Status applied = decoder_.Apply(*frame.entities);
      json entities = {{"bytes", frame.entities->size()}};
      if (applied.ok()) {
        entities["held"] = decoder_.entities().size();
        entities["entered"] = decoder_.entered();
        entities["left"] = decoder_.left();
      } else {
        entities["error"] = applied.message();
      }
      line["entities"] = entities;
    }
    Print("FRAME", line);
  }

  const ConnectArgs& args_;
  const std::vector<json>& inputs_;  // the --send inputs, parsed
  std::chrono::steady_clock::time_point deadline_;
  std::unique_ptr<BlockingClient> client_;
  std::string codec_ = "msgpack";
  replication::Decoder decoder_;
  int64_t frames_ = 0;
  int close_code_ = 0;
  std::optional<Joined> transfer_;
};

// Checks what can be checked before anything is sent; fills `inputs` with
// the --send values.
Status CheckArgs(const ConnectArgs& args, std::vector<json>* inputs) {
  if (args.shard.empty() && args.function.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "--shard is required (or --function for a join function)");
  }
  if (!args.shard.empty() && !server::IsValidShardId(args.shard)) {
    return Status(StatusCode::kInvalidArgument,
                  "--shard must be 1-128 characters of A-Z a-z 0-9 . _ : -");
  }
  if (!args.ticket.empty() && args.shard.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "--ticket needs the --shard it was minted for");
  }
  if (!args.ticket.empty() && !args.function.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "--ticket and --function are two ways to join: give one");
  }
  for (const std::string& text : args.sends) {
    Result<json> value = ParseJsonOption(text, "--send", false);
    if (!value.ok()) return value.status();
    inputs->push_back(std::move(value).value());
  }
  if (args.frames < 0 || args.seconds < 0) {
    return Status(StatusCode::kInvalidArgument,
                  "--frames and --seconds must not be negative");
  }
  return Status::Ok();
}

int Connect(const ConnectArgs& args) {
  std::vector<json> inputs;
  if (Status s = CheckArgs(args, &inputs); !s.ok()) {
    std::cerr << "error: " << s.message() << "\n";
    return 2;
  }
  Result<net::client::Url> base = net::client::ParseUrl(args.url);
  if (!base.ok() || base->scheme != "http") {
    std::cerr << "error: --url must be the server's http:// address, e.g. "
                 "http://127.0.0.1:4321"
              << (base.ok() ? "" : " (" + base.status().message() + ")")
              << "\n";
    return 2;
  }
  Result<Joined> joined = Join(args, *base);
  if (!joined.ok()) {
    std::cerr << "error: join refused: " << joined.status().message() << "\n";
    return 1;
  }
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(args.seconds));
  Joined target = *joined;
  for (;;) {
    Session session(args, inputs, deadline);
    Result<Session::End> end = session.Run(*base, target);
    if (!end.ok()) {
      std::cerr << "error: " << end.status().message() << "\n";
      return 1;
    }
    if (*end == Session::End::kTransfer) {
      target = *session.transfer();
      continue;
    }
    if (*end == Session::End::kStopped) return 0;
    return session.close_code() == 1000 ? 0 : 1;
  }
}

}  // namespace

void RegisterConnectCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ConnectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "connect",
      "Join a shard as a client and print what the server sends (WELCOME, "
      "each FRAME decoded, ACKs, REJECTs, the close)");
  cmd->add_option("--url", args->url, "The server's address")
      ->capture_default_str();
  cmd->add_option("--shard", args->shard, "The shard to join");
  cmd->add_option("--kind", args->kind,
                  "Dev join: the kind to create the shard with");
  cmd->add_option("--params", args->params,
                  "Dev join: the kind's init params (JSON)");
  cmd->add_option("--subscriber", args->subscriber,
                  "Dev join: the subscriber id (default: a random guest)");
  cmd->add_option("--claims", args->claims,
                  "Dev join: claims put in the ticket (a JSON object)");
  cmd->add_option("--ticket", args->ticket,
                  "Join with this ticket instead of the dev join");
  cmd->add_option("--function", args->function,
                  "Join through the app's join function (guest sign-in, then "
                  "POST /api/functions/NAME)");
  cmd->add_option("--args", args->function_args,
                  "The join function's params (a JSON object)");
  cmd->add_option("--send", args->sends,
                  "An input (JSON, sent in the kind's codec) after the "
                  "WELCOME; repeat for more, sent in order");
  cmd->add_option("--frames", args->frames,
                  "Stop after this many FRAMEs (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--seconds", args->seconds,
                  "Stop after this many seconds (0: no limit)")
      ->capture_default_str();
  cmd->add_flag("--frame-acks", args->frame_acks,
                "Ask for FRAMEs to answer inputs instead of ACKs");
  cmd->callback([args, exit_code] { *exit_code = Connect(*args); });
}

}  // namespace tessera::cli
