// libFuzzer target: the transfer and message layouts (src/shard/talk_abi.h,
// docs/guest-abi.md "Transfers and messages"): the decoders of what a guest
// returns from tessera_transfer_requests, tessera_groups and tessera_outbox
// (untrusted bytes) and the encoders of what the host passes to
// tessera_transfer_in and tessera_on_messages.
//
// The first byte picks the decoder, the rest is its input. Besides memory
// safety it checks:
//  - a refusal is kInvalidArgument, names the export and says why;
//  - the same bytes always give the same verdict and message;
//  - whatever a decoder accepts re-encodes (by this file's own writer) to
//    the same bytes, so nothing is dropped or reinterpreted, and the strict
//    prefix without its last byte is refused;
//  - the encoders' output has the documented layout and reads back to what
//    was encoded.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shard/talk_abi.h"

namespace {

using namespace tessera;
using namespace tessera::shard;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "talk_abi_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void PutStr(std::string& out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// Reads the encoders' output back.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  uint32_t U32() {
    Check(s_.size() >= 4, "an encoder's output is short");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      v |= static_cast<uint32_t>(static_cast<uint8_t>(s_[i])) << (8 * i);
    }
    s_.remove_prefix(4);
    return v;
  }
  std::string_view Str() {
    const uint32_t n = U32();
    Check(s_.size() >= n, "an encoded string is short");
    std::string_view out = s_.substr(0, n);
    s_.remove_prefix(n);
    return out;
  }
  bool AtEnd() const { return s_.empty(); }

 private:
  std::string_view s_;
};

void CheckRefusal(const Status& s, const char* what) {
  Check(s.code() == StatusCode::kInvalidArgument,
        "a refusal is not kInvalidArgument");
  const std::string prefix = std::string(what) + " output: ";
  Check(s.message().rfind(prefix, 0) == 0,
        "a refusal does not name its export");
  Check(s.message().size() > prefix.size(), "a refusal does not say why");
}

// Decodes twice, checks the verdicts agree and a refusal's shape; returns
// the first result.
template <typename T, typename Decode>
Result<T> DecodeChecked(Decode decode, std::string_view in, const char* what) {
  Result<T> r = decode(in);
  Result<T> again = decode(in);
  Check(r.ok() == again.ok(), "the same bytes got two verdicts");
  if (!r.ok()) {
    CheckRefusal(r.status(), what);
    Check(r.status().message() == again.status().message(),
          "the same bytes got two messages");
  } else if (!in.empty()) {
    Check(!decode(in.substr(0, in.size() - 1)).ok(),
          "accepted a strict prefix of accepted bytes");
  }
  return r;
}

void FuzzRequests(std::string_view in) {
  auto r = DecodeChecked<std::vector<TransferRequestOut>>(
      DecodeTransferRequests, in, "tessera_transfer_requests");
  if (!r.ok()) return;
  std::string out;
  PutU32(out, static_cast<uint32_t>(r->size()));
  for (const TransferRequestOut& req : *r) {
    PutStr(out, req.subscriber);
    PutStr(out, req.to);
  }
  Check(out == in, "accepted requests do not re-encode to their bytes");
}

void FuzzGroups(std::string_view in) {
  auto r = DecodeChecked<std::vector<std::string>>(DecodeGroups, in,
                                                   "tessera_groups");
  if (!r.ok()) return;
  std::string out;
  PutU32(out, static_cast<uint32_t>(r->size()));
  for (const std::string& g : *r) PutStr(out, g);
  Check(out == in, "accepted groups do not re-encode to their bytes");
}

void FuzzOutbox(std::string_view in) {
  auto r = DecodeChecked<std::vector<OutgoingMessage>>(DecodeOutbox, in,
                                                       "tessera_outbox");
  if (!r.ok()) return;
  std::string out;
  PutU32(out, static_cast<uint32_t>(r->size()));
  for (const OutgoingMessage& m : *r) {
    const uint8_t kind = static_cast<uint8_t>(m.to.kind);
    Check(kind <= 2, "accepted an unknown target kind");
    Check(m.to.kind != TargetKind::kAll || m.to.name.empty(),
          "accepted an All target with a name");
    out.push_back(static_cast<char>(kind));
    PutStr(out, m.to.name);
    PutStr(out, m.topic);
    PutStr(out, m.data);
  }
  Check(out == in, "an accepted outbox does not re-encode to its bytes");
}

// Splits the input into strings (a length byte, then up to that many
// bytes) for the encoders.
void FuzzEncoders(std::string_view in) {
  std::vector<std::string> parts;
  while (!in.empty() && parts.size() < 64) {
    const size_t n =
        std::min<size_t>(static_cast<uint8_t>(in[0]), in.size() - 1);
    parts.emplace_back(in.substr(1, n));
    in.remove_prefix(1 + n);
  }
  while (parts.size() < 4) parts.emplace_back();

  const bool returning = !parts[0].empty() && (parts[0][0] & 1) != 0;
  const std::string arg =
      EncodeTransferIn(parts[0], parts[3], parts[2], returning, parts[1]);
  Reader t(arg);
  Check(t.U32() == (returning ? 1u : 0u), "transfer_in flags");
  Check(t.Str() == parts[0], "transfer_in subscriber reads back");
  Check(t.Str() == parts[1], "transfer_in peer reads back");
  Check(t.Str() == parts[2], "transfer_in claims read back");
  Check(t.Str() == parts[3], "transfer_in state reads back");
  Check(t.AtEnd(), "trailing bytes after transfer_in's argument");

  std::vector<std::shared_ptr<const ShardMessage>> batch;
  for (size_t i = 0; i + 2 < parts.size(); i += 3) {
    batch.push_back(std::make_shared<const ShardMessage>(
        ShardMessage{parts[i], parts[i + 1], parts[i + 2]}));
  }
  const std::string messages = EncodeMessages(batch);
  Reader m(messages);
  Check(m.U32() == batch.size(), "message count");
  for (const auto& msg : batch) {
    Check(m.Str() == msg->from, "a message's from reads back");
    Check(m.Str() == msg->topic, "a message's topic reads back");
    Check(m.Str() == msg->data, "a message's data reads back");
  }
  Check(m.AtEnd(), "trailing bytes after the messages");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      FuzzRequests(in);
      break;
    case 1:
      FuzzGroups(in);
      break;
    case 2:
      FuzzOutbox(in);
      break;
    default:
      FuzzEncoders(in);
      break;
  }
  return 0;
}
