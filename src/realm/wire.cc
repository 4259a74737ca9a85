// The realm protocol's messages (wire.h; docs/protocol.md "Realms
// (tessera.realm.v1)" and "Transport").
//
// Decoding reads untrusted bytes with the realm MessagePack reader
// (msgpack_reader.h) in Mode::kAll, so that unknown trailing elements of
// any type can be skipped. Nothing is reserved from a declared count or
// length: strings and bins are views checked against the bytes left, and
// the limits map grows only as its entries are actually read. A refusal is
// kInvalidArgument with a reason short enough for a WebSocket close frame
// (at most 123 bytes). Encoding writes the shortest form of every integer,
// string, bin, array and map header.
#include "realm/wire.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "realm/msgpack_reader.h"
#include "realm/msgpack_writer.h"

namespace tessera::realm::wire {

namespace {

// ---- Encoding ----

// The realm writer plus the limits map of HYDRATE and RESUME.
class Out : public MsgWriter {
 public:
  // A JSON object of integers as a map with string keys (nlohmann's object
  // is ordered, so the bytes are deterministic). A value that is not an
  // integer (AdvertisedLimits never makes one) is written as nil, which
  // DecodeServerMessage refuses; anything but an object is an empty map.
  void Limits(const Json& limits) {
    if (!limits.is_object()) return Map(0);
    Map(limits.size());
    for (const auto& [key, value] : limits.items()) {
      Str(key);
      if (value.is_number_unsigned()) {
        Uint(value.get<uint64_t>());
      } else if (value.is_number_integer()) {
        Int(value.get<int64_t>());
      } else {
        Nil();
      }
    }
  }
};

// ---- Decoding ----

const char* TypeName(uint64_t type) {
  switch (type) {
    case kHello:
      return "HELLO";
    case kWrite:
      return "WRITE";
    case kPing:
      return "PING";
    case kPong:
      return "PONG";
    case kIntent:
      return "INTENT";
    case kHydrate:
      return "HYDRATE";
    case kResume:
      return "RESUME";
    case kCommit:
      return "COMMIT";
    case kAck:
      return "ACK";
    case kReject:
      return "REJECT";
    case kCommits:
      return "COMMITS";
    default:
      return "?";
  }
}

// One message: the outer array's header and type, then its elements in
// order, then the trailing ones skipped and the end of the bytes checked.
class In {
 public:
  explicit In(std::span<const uint8_t> bytes)
      : in_(bytes, MsgReader::Mode::kAll) {}

  Status Open(uint64_t* type) {
    MsgItem item;
    std::string why;
    if (!in_.Next(&item, &why) || item.kind != MsgKind::kArray) {
      return InvalidArgument("not a MessagePack array");
    }
    if (item.count == 0) return InvalidArgument("empty array: no message type");
    remaining_ = item.count - 1;
    if (!in_.Next(&item, &why)) return InvalidArgument("message type: " + why);
    if (item.kind != MsgKind::kUint) {
      return InvalidArgument("the message type must be a positive integer");
    }
    *type = item.u;
    name_ = TypeName(item.u);
    return Status::Ok();
  }

  // A seq, epoch, version or nonce: an integer in 0..2^53.
  Status Integer(const char* field, uint64_t* out) {
    return Unsigned(field, kMaxInteger, "an integer in 0..2^53", out);
  }
  Status Unsigned(const char* field, uint64_t max, const char* what,
                  uint64_t* out) {
    MsgItem item;
    TESSERA_RETURN_IF_ERROR(Element(field, &item));
    if (item.kind != MsgKind::kUint || item.u > max) {
      return Wrong(field, std::string("must be ") + what);
    }
    *out = item.u;
    return Status::Ok();
  }

  // A UTF-8 str.
  Status Text(const char* field, std::string_view* out) {
    MsgItem item;
    TESSERA_RETURN_IF_ERROR(Element(field, &item));
    if (item.kind != MsgKind::kStr) return Wrong(field, "must be a string");
    TESSERA_RETURN_IF_ERROR(Payload(field, item, out));
    if (!ValidUtf8(*out)) return Wrong(field, "is not valid UTF-8");
    return Status::Ok();
  }

  Status Bin(const char* field, std::string_view* out) {
    MsgItem item;
    TESSERA_RETURN_IF_ERROR(Element(field, &item));
    if (item.kind != MsgKind::kBin) {
      return Wrong(field,
                   std::string("must be bin, not ") + MsgKindName(item.kind));
    }
    return Payload(field, item, out);
  }

  // A map of UTF-8 string keys to integers, as a JSON object.
  Status Limits(const char* field, Json* out) {
    MsgItem item;
    TESSERA_RETURN_IF_ERROR(Element(field, &item));
    if (item.kind != MsgKind::kMap) return Wrong(field, "must be a map");
    if (item.count > in_.left() / 2) {  // an entry takes at least 2 bytes
      return Wrong(field, "truncated: " + std::to_string(item.count) +
                              " entries announced, " +
                              std::to_string(in_.left()) + " bytes left");
    }
    *out = Json::object();
    auto& map = out->get_ref<Json::object_t&>();
    std::string why;
    for (size_t k = 0; k < item.count; ++k) {
      MsgItem entry;
      if (!in_.Next(&entry, &why)) return Wrong(field, why);
      if (entry.kind != MsgKind::kStr) {
        return Wrong(field, "keys must be strings");
      }
      std::string_view key;
      TESSERA_RETURN_IF_ERROR(Payload(field, entry, &key));
      if (!ValidUtf8(key)) return Wrong(field, "key is not valid UTF-8");
      auto [it, added] = map.try_emplace(std::string(key));
      if (!added) return Wrong(field, "has a duplicate key");
      if (!in_.Next(&entry, &why)) return Wrong(field, why);
      if (entry.kind == MsgKind::kUint) {
        it->second = entry.u;
      } else if (entry.kind == MsgKind::kInt) {
        it->second = entry.i;
      } else {
        return Wrong(field, "values must be integers");
      }
    }
    return Status::Ok();
  }

  bool more() const { return remaining_ > 0; }

  // Skips the trailing elements and checks that nothing follows the array.
  Status Close() {
    TESSERA_RETURN_IF_ERROR(SkipRest());
    if (!in_.done()) return InvalidArgument("trailing bytes after the message");
    return Status::Ok();
  }

  // COMMITS' entries: an array of [version, patch | nil, seq?], versions
  // increasing, at least one; trailing elements of an entry are skipped.
  Status Entries(std::vector<CommitsEntry>* out) {
    MsgItem item;
    TESSERA_RETURN_IF_ERROR(Element("entries", &item));
    if (item.kind != MsgKind::kArray)
      return Wrong("entries", "must be an array");
    if (item.count == 0) return Wrong("entries", "must not be empty");
    const size_t outer = remaining_;
    for (size_t k = 0; k < item.count; ++k) {
      MsgItem entry;
      std::string why;
      if (!in_.Next(&entry, &why)) return Wrong("entry", why);
      if (entry.kind != MsgKind::kArray) {
        return Wrong("entry", "must be an array");
      }
      remaining_ = entry.count;
      CommitsEntry e;
      TESSERA_RETURN_IF_ERROR(Integer("entry version", &e.version));
      if (!out->empty() && e.version <= out->back().version) {
        return Wrong("entry version", "must be above the one before");
      }
      MsgItem patch;
      TESSERA_RETURN_IF_ERROR(Element("entry patch", &patch));
      if (patch.kind == MsgKind::kBin) {
        std::string_view bytes;
        TESSERA_RETURN_IF_ERROR(Payload("entry patch", patch, &bytes));
        e.patch.emplace(bytes);
      } else if (patch.kind != MsgKind::kNil) {
        return Wrong("entry patch", "must be bin or nil");
      }
      if (more()) {
        uint64_t seq = 0;
        TESSERA_RETURN_IF_ERROR(Integer("entry seq", &seq));
        e.seq = seq;
      } else if (!e.patch.has_value()) {
        return Wrong("entry seq", "is missing (an ACK entry needs one)");
      }
      TESSERA_RETURN_IF_ERROR(SkipRest());
      out->push_back(std::move(e));
    }
    remaining_ = outer;
    return Status::Ok();
  }

 private:
  // Skips the elements of the current array not yet read.
  Status SkipRest() {
    std::string why;
    if (remaining_ > in_.left()) {
      return InvalidArgument(std::string(name_) +
                             ": truncated: " + std::to_string(remaining_) +
                             " more elements announced, " +
                             std::to_string(in_.left()) + " bytes left");
    }
    for (; remaining_ > 0; --remaining_) {
      MsgItem item;
      if (!in_.Next(&item, &why) || !in_.Skip(item, &why)) {
        return Wrong("trailing element", why);
      }
    }
    return Status::Ok();
  }

  Status Wrong(const char* field, const std::string& what) const {
    return InvalidArgument(std::string(name_) + ": " + field + " " + what);
  }
  // The next element's header, which must exist.
  Status Element(const char* field, MsgItem* item) {
    if (remaining_ == 0) return Wrong(field, "is missing");
    --remaining_;
    std::string why;
    if (!in_.Next(item, &why)) return Wrong(field, why);
    return Status::Ok();
  }
  Status Payload(const char* field, const MsgItem& item,
                 std::string_view* out) {
    std::string why;
    if (!in_.Payload(item.count, out, &why)) return Wrong(field, why);
    return Status::Ok();
  }

  MsgReader in_;
  size_t remaining_ = 0;  // elements of the array not yet read
  const char* name_ = "?";
};

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

Status UnknownType(uint64_t type) {
  return InvalidArgument("unknown message type " + std::to_string(type));
}

// PING and PONG, both directions.
template <typename T>
Result<T> DecodeNonce(In& in) {
  T msg;
  TESSERA_RETURN_IF_ERROR(in.Integer("nonce", &msg.nonce));
  TESSERA_RETURN_IF_ERROR(in.Close());
  return msg;
}

std::string EncodeNonce(MsgType type, uint64_t nonce) {
  Out out;
  out.Array(2);
  out.Uint(type);
  out.Uint(nonce);
  return out.Take();
}

}  // namespace

// ---- Client to server ----

Result<ClientMessage> DecodeClientMessage(std::span<const uint8_t> bytes) {
  In in(bytes);
  uint64_t type = 0;
  TESSERA_RETURN_IF_ERROR(in.Open(&type));
  switch (type) {
    case kHello: {
      Hello msg;
      TESSERA_RETURN_IF_ERROR(
          in.Unsigned("protocol", std::numeric_limits<uint64_t>::max(),
                      "a non-negative integer", &msg.protocol));
      TESSERA_RETURN_IF_ERROR(in.Text("ticket", &msg.ticket));
      TESSERA_RETURN_IF_ERROR(in.Integer("epoch", &msg.epoch));
      TESSERA_RETURN_IF_ERROR(in.Integer("version", &msg.version));
      if (in.more()) TESSERA_RETURN_IF_ERROR(in.Integer("flags", &msg.flags));
      TESSERA_RETURN_IF_ERROR(in.Close());
      return ClientMessage(msg);
    }
    case kWrite: {
      Write msg;
      std::string_view patch;
      TESSERA_RETURN_IF_ERROR(in.Integer("seq", &msg.seq));
      TESSERA_RETURN_IF_ERROR(in.Bin("patch", &patch));
      TESSERA_RETURN_IF_ERROR(in.Close());
      msg.patch = AsBytes(patch);
      return ClientMessage(msg);
    }
    case kPing: {
      Result<Ping> msg = DecodeNonce<Ping>(in);
      if (!msg.ok()) return msg.status();
      return ClientMessage(*msg);
    }
    case kPong: {
      Result<Pong> msg = DecodeNonce<Pong>(in);
      if (!msg.ok()) return msg.status();
      return ClientMessage(*msg);
    }
    case kIntent: {
      Intent msg;
      TESSERA_RETURN_IF_ERROR(in.Integer("seq", &msg.seq));
      TESSERA_RETURN_IF_ERROR(in.Text("name", &msg.name));
      if (msg.name.empty() || msg.name.size() > kMaxIntentName) {
        return InvalidArgument("INTENT: name must be 1 to 64 bytes");
      }
      TESSERA_RETURN_IF_ERROR(in.Text("args", &msg.args));
      TESSERA_RETURN_IF_ERROR(in.Close());
      return ClientMessage(msg);
    }
    default:
      return UnknownType(type);
  }
}

std::string EncodeIntent(uint64_t seq, std::string_view name,
                         std::string_view args_json) {
  Out out;
  out.Array(4);
  out.Uint(kIntent);
  out.Uint(seq);
  out.Str(name);
  out.Str(args_json);
  return out.Take();
}

std::string EncodeHello(std::string_view ticket, uint64_t epoch,
                        uint64_t version, uint64_t protocol, uint64_t flags) {
  Out out;
  out.Array(flags != 0 ? 6 : 5);
  out.Uint(kHello);
  out.Uint(protocol);
  out.Str(ticket);
  out.Uint(epoch);
  out.Uint(version);
  if (flags != 0) out.Uint(flags);
  return out.Take();
}

std::string EncodeWrite(uint64_t seq, std::string_view patch) {
  Out out;
  out.Array(3);
  out.Uint(kWrite);
  out.Uint(seq);
  out.Bin(patch);
  return out.Take();
}

std::string EncodePing(uint64_t nonce) { return EncodeNonce(kPing, nonce); }
std::string EncodePong(uint64_t nonce) { return EncodeNonce(kPong, nonce); }

// ---- Server to client ----

std::string EncodeHydrate(uint64_t epoch, uint64_t version,
                          std::string_view avatar, const Json& limits,
                          std::string_view state) {
  Out out;
  out.Array(6);
  out.Uint(kHydrate);
  out.Uint(epoch);
  out.Uint(version);
  out.Str(avatar);
  out.Limits(limits);
  out.Bin(state);
  return out.Take();
}

std::string EncodeResume(uint64_t epoch, uint64_t from, uint64_t head,
                         std::string_view avatar, const Json& limits) {
  Out out;
  out.Array(6);
  out.Uint(kResume);
  out.Uint(epoch);
  out.Uint(from);
  out.Uint(head);
  out.Str(avatar);
  out.Limits(limits);
  return out.Take();
}

std::string EncodeCommit(uint64_t version, std::string_view patch,
                         std::optional<uint64_t> seq) {
  Out out;
  out.Array(seq.has_value() ? 4 : 3);
  out.Uint(kCommit);
  out.Uint(version);
  out.Bin(patch);
  if (seq.has_value()) out.Uint(*seq);
  return out.Take();
}

// The entries follow a gap of kCommitsHead bytes, which Take fills with
// the shortest header from its end (fixarray 2, the type, the entries'
// array header of 1, 3 or 5 bytes) and cuts in front of.
namespace {
constexpr size_t kCommitsHead = 2 + 5;
}  // namespace

CommitsWriter::CommitsWriter() { out_.Raw(std::string(kCommitsHead, '\0')); }

void CommitsWriter::Add(uint64_t version, std::string_view patch,
                        std::optional<uint64_t> seq) {
  out_.Array(seq.has_value() ? 3 : 2);
  out_.Uint(version);
  out_.Bin(patch);
  if (seq.has_value()) out_.Uint(*seq);
  ++count_;
}

void CommitsWriter::AddAck(uint64_t version, uint64_t seq) {
  out_.Array(3);
  out_.Uint(version);
  out_.Nil();
  out_.Uint(seq);
  ++count_;
}

std::string CommitsWriter::Take() {
  MsgWriter head;
  head.Array(2);
  head.Uint(kCommits);
  head.Array(count_);
  const std::string bytes = head.Take();
  std::string message = out_.Take();
  const size_t start = kCommitsHead - bytes.size();
  message.replace(start, bytes.size(), bytes);
  message.erase(0, start);
  out_ = MsgWriter();
  out_.Reserve(message.size() + kCommitsHead);  // the next is much the same
  out_.Raw(std::string(kCommitsHead, '\0'));
  count_ = 0;
  return message;
}

std::string EncodeAck(uint64_t seq, uint64_t version) {
  Out out;
  out.Array(3);
  out.Uint(kAck);
  out.Uint(seq);
  out.Uint(version);
  return out.Take();
}

std::string EncodeReject(uint64_t seq, std::string_view code,
                         std::string_view message) {
  Out out;
  out.Array(4);
  out.Uint(kReject);
  out.Uint(seq);
  out.Str(code);
  out.Str(message);
  return out.Take();
}

Result<ServerMessage> DecodeServerMessage(std::span<const uint8_t> bytes) {
  In in(bytes);
  uint64_t type = 0;
  TESSERA_RETURN_IF_ERROR(in.Open(&type));
  std::string_view text, blob;
  switch (type) {
    case kHydrate: {
      Hydrate msg;
      TESSERA_RETURN_IF_ERROR(in.Integer("epoch", &msg.epoch));
      TESSERA_RETURN_IF_ERROR(in.Integer("version", &msg.version));
      TESSERA_RETURN_IF_ERROR(in.Text("avatar", &text));
      TESSERA_RETURN_IF_ERROR(in.Limits("limits", &msg.limits));
      TESSERA_RETURN_IF_ERROR(in.Bin("state", &blob));
      TESSERA_RETURN_IF_ERROR(in.Close());
      msg.avatar = text;
      msg.state = blob;
      return ServerMessage(std::move(msg));
    }
    case kResume: {
      Resume msg;
      TESSERA_RETURN_IF_ERROR(in.Integer("epoch", &msg.epoch));
      TESSERA_RETURN_IF_ERROR(in.Integer("from", &msg.from));
      TESSERA_RETURN_IF_ERROR(in.Integer("head", &msg.head));
      TESSERA_RETURN_IF_ERROR(in.Text("avatar", &text));
      TESSERA_RETURN_IF_ERROR(in.Limits("limits", &msg.limits));
      TESSERA_RETURN_IF_ERROR(in.Close());
      msg.avatar = text;
      return ServerMessage(std::move(msg));
    }
    case kCommit: {
      Commit msg;
      TESSERA_RETURN_IF_ERROR(in.Integer("version", &msg.version));
      TESSERA_RETURN_IF_ERROR(in.Bin("patch", &blob));
      if (in.more()) {
        uint64_t seq = 0;
        TESSERA_RETURN_IF_ERROR(in.Integer("seq", &seq));
        msg.seq = seq;
      }
      TESSERA_RETURN_IF_ERROR(in.Close());
      msg.patch = blob;
      return ServerMessage(std::move(msg));
    }
    case kCommits: {
      Commits msg;
      TESSERA_RETURN_IF_ERROR(in.Entries(&msg.entries));
      TESSERA_RETURN_IF_ERROR(in.Close());
      return ServerMessage(std::move(msg));
    }
    case kAck: {
      Ack msg;
      TESSERA_RETURN_IF_ERROR(in.Integer("seq", &msg.seq));
      TESSERA_RETURN_IF_ERROR(in.Integer("version", &msg.version));
      TESSERA_RETURN_IF_ERROR(in.Close());
      return ServerMessage(msg);
    }
    case kReject: {
      Reject msg;
      TESSERA_RETURN_IF_ERROR(in.Integer("seq", &msg.seq));
      TESSERA_RETURN_IF_ERROR(in.Text("code", &text));
      TESSERA_RETURN_IF_ERROR(in.Text("message", &blob));
      TESSERA_RETURN_IF_ERROR(in.Close());
      msg.code = text;
      msg.message = blob;
      return ServerMessage(std::move(msg));
    }
    case kPing: {
      Result<Ping> msg = DecodeNonce<Ping>(in);
      if (!msg.ok()) return msg.status();
      return ServerMessage(*msg);
    }
    case kPong: {
      Result<Pong> msg = DecodeNonce<Pong>(in);
      if (!msg.ok()) return msg.status();
      return ServerMessage(*msg);
    }
    default:
      return UnknownType(type);
  }
}

}  // namespace tessera::realm::wire
