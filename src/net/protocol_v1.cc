// Decoding follows one shape for every message: an array header, the type,
// a check that the required elements are present, the elements in order,
// then any extra trailing elements skipped, and nothing may follow the
// array. Type mismatches name the message and field; truncated or
// malformed MessagePack reports the reader's error.
#include "net/protocol_v1.h"

#include <cmath>
#include <limits>

#include "net/msgpack.h"

namespace tessera::net::v1 {
namespace {

using msgpack::Reader;
using msgpack::Type;
using msgpack::Writer;

constexpr uint64_t kMaxSeq = uint64_t{1} << 53;
constexpr double kMaxViewTickDouble = static_cast<double>(kMaxViewTick);

// A message's array after its type element: `count` elements remain.
class Body {
 public:
  Body(Reader* reader, const char* name, uint32_t count)
      : r_(reader), name_(name), count_(count) {}

  Status Require(uint32_t n) const {
    if (count_ >= n) return Status::Ok();
    // +1: the counts include the type element.
    return InvalidArgument(std::string(name_) + " needs " +
                           std::to_string(n + 1) + " elements, got " +
                           std::to_string(count_ + 1));
  }
  bool HasMore() const { return read_ < count_; }

  Result<uint64_t> Uint(const char* field) {
    TESSERA_RETURN_IF_ERROR(Want(Type::kUint, field, "an unsigned integer"));
    return r_->ReadUint();
  }
  Result<std::string_view> Str(const char* field) {
    TESSERA_RETURN_IF_ERROR(Want(Type::kStr, field, "a string"));
    return r_->ReadStr();
  }
  Result<std::string_view> Bin(const char* field) {
    TESSERA_RETURN_IF_ERROR(Want(Type::kBin, field, "binary (bin)"));
    return r_->ReadBin();
  }
  // An unsigned integer or nil; absent reads as nil.
  Result<std::optional<uint64_t>> OptionalUint(const char* field) {
    if (!HasMore()) return std::optional<uint64_t>();
    auto type = r_->PeekType();
    if (!type.ok()) return type.status();
    if (*type == Type::kNil) {
      ++read_;
      TESSERA_RETURN_IF_ERROR(r_->ReadNil());
      return std::optional<uint64_t>();
    }
    TESSERA_RETURN_IF_ERROR(
        Want(Type::kUint, field, "an unsigned integer or nil"));
    auto v = r_->ReadUint();
    if (!v.ok()) return v.status();
    return std::optional<uint64_t>(*v);
  }

  // A number (any integer or float encoding) in [0, max] or nil; absent
  // reads as nil. Out of range (negative, NaN, infinite, above `max`):
  // "<message> <field> must be <range>". -0.0 reads as 0.
  Result<std::optional<double>> OptionalNumber(const char* field, uint64_t max,
                                               const char* range) {
    if (!HasMore()) return std::optional<double>();
    auto type = r_->PeekType();
    if (!type.ok()) return type.status();
    if (*type == Type::kNil) {
      ++read_;
      TESSERA_RETURN_IF_ERROR(r_->ReadNil());
      return std::optional<double>();
    }
    const Status out_of_range =
        InvalidArgument(std::string(name_) + " " + field + " must be " + range);
    if (*type == Type::kUint) {
      ++read_;
      auto v = r_->ReadUint();
      if (!v.ok()) return v.status();
      // Compared as integers: above 2^53 a double would round.
      if (*v > max) return out_of_range;
      return std::optional<double>(static_cast<double>(*v));
    }
    if (*type == Type::kNegInt) return out_of_range;
    TESSERA_RETURN_IF_ERROR(Want(Type::kFloat, field, "a number or nil"));
    auto v = r_->ReadDouble();
    if (!v.ok()) return v.status();
    // NaN fails both comparisons.
    if (!(*v >= 0 && *v <= static_cast<double>(max))) return out_of_range;
    return std::optional<double>(*v == 0 ? 0.0 : *v);
  }

  // A bin or nil (nullopt).
  Result<std::optional<std::string_view>> OptionalBin(const char* field) {
    auto type = r_->PeekType();
    if (!type.ok()) return type.status();
    if (*type == Type::kNil) {
      ++read_;
      TESSERA_RETURN_IF_ERROR(r_->ReadNil());
      return std::optional<std::string_view>();
    }
    TESSERA_RETURN_IF_ERROR(Want(Type::kBin, field, "binary (bin) or nil"));
    auto v = r_->ReadBin();
    if (!v.ok()) return v.status();
    return std::optional<std::string_view>(*v);
  }

  // Skips extension elements, then requires the end of the input.
  Status Finish() {
    for (; read_ < count_; ++read_) TESSERA_RETURN_IF_ERROR(r_->Skip());
    if (r_->AtEnd()) return Status::Ok();
    return InvalidArgument("trailing bytes after the message");
  }

 private:
  Status Want(Type type, const char* field, const char* what) {
    auto next = r_->PeekType();
    if (!next.ok()) return next.status();
    if (*next != type) {
      return InvalidArgument(std::string(name_) + " " + field + " must be " +
                             what);
    }
    ++read_;
    return Status::Ok();
  }

  Reader* r_;
  const char* name_;
  uint32_t count_;
  uint32_t read_ = 0;
};

// Reads the array header and the type element.
Result<uint64_t> ReadEnvelope(Reader* r, uint32_t* count) {
  if (r->AtEnd()) return InvalidArgument("empty message");
  auto type = r->PeekType();
  if (!type.ok()) return type.status();
  if (*type != Type::kArray) {
    return InvalidArgument("message is not a MessagePack array");
  }
  auto n = r->ReadArrayHeader();
  if (!n.ok()) return n.status();
  if (*n == 0) return InvalidArgument("message array is empty");
  auto first = r->PeekType();
  if (!first.ok()) return first.status();
  if (*first != Type::kUint) {
    return InvalidArgument("message type must be a positive integer");
  }
  *count = *n - 1;
  return r->ReadUint();
}

Status UnknownType(uint64_t type) {
  return InvalidArgument("unknown message type " + std::to_string(type));
}

Result<ClientMessage> DecodeHello(Body* body) {
  TESSERA_RETURN_IF_ERROR(body->Require(2));
  auto version = body->Uint("version");
  if (!version.ok()) return version.status();
  auto ticket = body->Str("ticket");
  if (!ticket.ok()) return ticket.status();
  auto flags = body->OptionalUint("flags");
  if (!flags.ok()) return flags.status();
  TESSERA_RETURN_IF_ERROR(body->Finish());
  return ClientMessage(Hello{*version, *ticket, flags->value_or(0)});
}

Result<ClientMessage> DecodeInput(Body* body) {
  TESSERA_RETURN_IF_ERROR(body->Require(2));
  auto seq = body->Uint("seq");
  if (!seq.ok()) return seq.status();
  if (*seq == 0 || *seq > kMaxSeq) {
    return InvalidArgument("INPUT seq must be between 1 and 2^53");
  }
  auto payload = body->Bin("payload");
  if (!payload.ok()) return payload.status();
  auto view_tick = body->OptionalNumber(
      "view_tick", kMaxViewTick, "a finite number between 0 and 2^53 or nil");
  if (!view_tick.ok()) return view_tick.status();
  TESSERA_RETURN_IF_ERROR(body->Finish());
  return ClientMessage(Input{*seq, *payload, *view_tick});
}

Result<ServerMessage> DecodeWelcome(Body* body) {
  TESSERA_RETURN_IF_ERROR(body->Require(5));
  Welcome w;
  auto shard_id = body->Str("shard_id");
  if (!shard_id.ok()) return shard_id.status();
  auto subscriber_id = body->Str("subscriber_id");
  if (!subscriber_id.ok()) return subscriber_id.status();
  auto tick_rate = body->Uint("tick_rate");
  if (!tick_rate.ok()) return tick_rate.status();
  if (*tick_rate > std::numeric_limits<uint32_t>::max()) {
    return InvalidArgument("WELCOME tick_rate out of range");
  }
  auto codec = body->Str("codec");
  if (!codec.ok()) return codec.status();
  auto tick = body->Uint("tick");
  if (!tick.ok()) return tick.status();
  auto flags = body->OptionalUint("flags");
  if (!flags.ok()) return flags.status();
  TESSERA_RETURN_IF_ERROR(body->Finish());
  w.flags = flags->value_or(0);
  w.shard_id = std::string(*shard_id);
  w.subscriber_id = std::string(*subscriber_id);
  w.tick_rate = static_cast<uint32_t>(*tick_rate);
  w.codec = std::string(*codec);
  w.tick = *tick;
  return ServerMessage(std::move(w));
}

Result<ServerMessage> DecodeAck(Body* body) {
  TESSERA_RETURN_IF_ERROR(body->Require(1));
  auto seq = body->Uint("seq");
  if (!seq.ok()) return seq.status();
  TESSERA_RETURN_IF_ERROR(body->Finish());
  return ServerMessage(Ack{*seq});
}

Result<ServerMessage> DecodeReject(Body* body) {
  TESSERA_RETURN_IF_ERROR(body->Require(2));
  auto seq = body->Uint("seq");
  if (!seq.ok()) return seq.status();
  auto error = body->Str("error");
  if (!error.ok()) return error.status();
  TESSERA_RETURN_IF_ERROR(body->Finish());
  return ServerMessage(Reject{*seq, std::string(*error)});
}

Result<ServerMessage> DecodeFrame(Body* body) {
  TESSERA_RETURN_IF_ERROR(body->Require(3));
  auto tick = body->Uint("tick");
  if (!tick.ok()) return tick.status();
  auto last_seq = body->Uint("last_seq");
  if (!last_seq.ok()) return last_seq.status();
  auto snapshot = body->OptionalBin("snapshot");
  if (!snapshot.ok()) return snapshot.status();
  Frame frame;
  frame.tick = *tick;
  frame.last_seq = *last_seq;
  frame.snapshot_nil = !snapshot->has_value();
  if (*snapshot) frame.snapshot = std::string(**snapshot);
  if (body->HasMore()) {
    auto entities = body->Bin("entities");
    if (!entities.ok()) return entities.status();
    frame.entities = std::string(*entities);
  }
  TESSERA_RETURN_IF_ERROR(body->Finish());
  return ServerMessage(std::move(frame));
}

Result<ServerMessage> DecodeTransfer(Body* body) {
  TESSERA_RETURN_IF_ERROR(body->Require(2));
  auto shard_id = body->Str("shard_id");
  if (!shard_id.ok()) return shard_id.status();
  auto ticket = body->Str("ticket");
  if (!ticket.ok()) return ticket.status();
  TESSERA_RETURN_IF_ERROR(body->Finish());
  return ServerMessage(Transfer{std::string(*shard_id), std::string(*ticket)});
}

Result<ServerMessage> DecodeNotify(Body* body) {
  TESSERA_RETURN_IF_ERROR(body->Require(4));
  auto module = body->Str("module");
  if (!module.ok()) return module.status();
  auto channel = body->Str("channel");
  if (!channel.ok()) return channel.status();
  auto payload = body->Bin("payload");
  if (!payload.ok()) return payload.status();
  auto flow_id = body->Str("flow_id");
  if (!flow_id.ok()) return flow_id.status();
  TESSERA_RETURN_IF_ERROR(body->Finish());
  return ServerMessage(Notify{std::string(*module), std::string(*channel),
                              std::string(*payload), std::string(*flow_id)});
}

// PING/PONG are the same in both directions.
template <typename Message>
Result<Message> DecodeNonce(Body* body) {
  TESSERA_RETURN_IF_ERROR(body->Require(1));
  auto nonce = body->Uint("nonce");
  if (!nonce.ok()) return nonce.status();
  TESSERA_RETURN_IF_ERROR(body->Finish());
  return Message{*nonce};
}

std::string EncodeNonce(MsgType type, uint64_t nonce) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(2);
  w.Uint(type);
  w.Uint(nonce);
  return out;
}

}  // namespace

Result<ClientMessage> DecodeClientMessage(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  uint32_t count = 0;
  auto type = ReadEnvelope(&r, &count);
  if (!type.ok()) return type.status();
  switch (*type) {
    case kHello: {
      Body body(&r, "HELLO", count);
      return DecodeHello(&body);
    }
    case kInput: {
      Body body(&r, "INPUT", count);
      return DecodeInput(&body);
    }
    case kPing: {
      Body body(&r, "PING", count);
      auto ping = DecodeNonce<Ping>(&body);
      if (!ping.ok()) return ping.status();
      return ClientMessage(*ping);
    }
    case kPong: {
      Body body(&r, "PONG", count);
      auto pong = DecodeNonce<Pong>(&body);
      if (!pong.ok()) return pong.status();
      return ClientMessage(*pong);
    }
  }
  return UnknownType(*type);
}

Result<ServerMessage> DecodeServerMessage(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  uint32_t count = 0;
  auto type = ReadEnvelope(&r, &count);
  if (!type.ok()) return type.status();
  switch (*type) {
    case kWelcome: {
      Body body(&r, "WELCOME", count);
      return DecodeWelcome(&body);
    }
    case kAck: {
      Body body(&r, "ACK", count);
      return DecodeAck(&body);
    }
    case kReject: {
      Body body(&r, "REJECT", count);
      return DecodeReject(&body);
    }
    case kFrame: {
      Body body(&r, "FRAME", count);
      return DecodeFrame(&body);
    }
    case kTransfer: {
      Body body(&r, "TRANSFER", count);
      return DecodeTransfer(&body);
    }
    case kNotify: {
      Body body(&r, "NOTIFY", count);
      return DecodeNotify(&body);
    }
    case kPing: {
      Body body(&r, "PING", count);
      auto ping = DecodeNonce<Ping>(&body);
      if (!ping.ok()) return ping.status();
      return ServerMessage(*ping);
    }
    case kPong: {
      Body body(&r, "PONG", count);
      auto pong = DecodeNonce<Pong>(&body);
      if (!pong.ok()) return pong.status();
      return ServerMessage(*pong);
    }
  }
  return UnknownType(*type);
}

std::string EncodeWelcome(std::string_view shard_id,
                          std::string_view subscriber_id, uint32_t tick_rate,
                          std::string_view codec, uint64_t tick,
                          uint64_t flags) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(flags == 0 ? 6 : 7);
  w.Uint(kWelcome);
  w.Str(shard_id);
  w.Str(subscriber_id);
  w.Uint(tick_rate);
  w.Str(codec);
  w.Uint(tick);
  if (flags != 0) w.Uint(flags);
  return out;
}

std::string EncodeAck(uint64_t seq) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(2);
  w.Uint(kAck);
  w.Uint(seq);
  return out;
}

std::string EncodeReject(uint64_t seq, std::string_view error) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(3);
  w.Uint(kReject);
  w.Uint(seq);
  w.Str(error);
  return out;
}

std::string EncodePing(uint64_t nonce) { return EncodeNonce(kPing, nonce); }

std::string EncodePong(uint64_t nonce) { return EncodeNonce(kPong, nonce); }

std::string EncodeFrameHeader(uint64_t tick, uint64_t last_seq,
                              size_t snapshot_size) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(4);
  w.Uint(kFrame);
  w.Uint(tick);
  w.Uint(last_seq);
  w.BinHeader(snapshot_size);
  return out;
}

std::string EncodeViewFrameHeader(uint64_t tick, uint64_t last_seq,
                                  std::optional<size_t> snapshot_size) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(5);
  w.Uint(kFrame);
  w.Uint(tick);
  w.Uint(last_seq);
  if (snapshot_size) {
    w.BinHeader(*snapshot_size);
  } else {
    w.Nil();
  }
  return out;
}

std::string EncodeBinHeader(size_t size) {
  std::string out;
  Writer w(&out);
  w.BinHeader(size);
  return out;
}

std::string EncodeTransfer(std::string_view shard_id, std::string_view ticket) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(3);
  w.Uint(kTransfer);
  w.Str(shard_id);
  w.Str(ticket);
  return out;
}

std::string EncodeClose(int code, std::string_view reason) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(3);
  w.Uint(kClose);
  w.Uint(static_cast<uint64_t>(code < 0 ? 0 : code));
  w.Str(reason);
  return out;
}

std::string EncodeNotify(std::string_view module, std::string_view channel,
                         std::string_view payload, std::string_view flow_id) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(5);
  w.Uint(kNotify);
  w.Str(module);
  w.Str(channel);
  w.Bin(payload);
  w.Str(flow_id);
  return out;
}

std::string EncodeHello(std::string_view ticket, uint64_t version,
                        uint64_t flags) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(flags == 0 ? 3 : 4);
  w.Uint(kHello);
  w.Uint(version);
  w.Str(ticket);
  if (flags != 0) w.Uint(flags);
  return out;
}

std::string EncodeInput(uint64_t seq, std::string_view payload,
                        std::optional<double> view_tick) {
  std::string out;
  Writer w(&out);
  w.ArrayHeader(4);
  w.Uint(kInput);
  w.Uint(seq);
  w.Bin(payload);
  if (view_tick) {
    const double v = *view_tick;
    if (v >= 0 && v <= kMaxViewTickDouble && std::floor(v) == v) {
      w.Uint(static_cast<uint64_t>(v));
    } else {
      w.Double(v);
    }
  } else {
    w.Nil();
  }
  return out;
}

}  // namespace tessera::net::v1
