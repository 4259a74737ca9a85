// The optional transfer and message exports (docs/guest-abi.md, "Transfers
// and messages"), defined by TESSERA_SHARD for the members a shard class has
// (tessera/shard.h):
//
//   tessera_transfer_out, tessera_transfer_in   with transfer_out() and
//                                                transfer_in()
//   tessera_transfer_requests                   with transfer_requests()
//   tessera_groups                              with groups()
//   tessera_outbox                              with outbox()
//   tessera_on_messages                         with on_message()
//
// A malformed argument from the host is answered with kError
// ("<export>: malformed argument: ..."); a transfer state that does not
// decode with kError ("invalid transfer state: ...").
#ifndef TESSERA_DETAIL_TALK_EXPORT_H_
#define TESSERA_DETAIL_TALK_EXPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/abi.h"
#include "tessera/codec.h"
#include "tessera/detail/binary_io.h"
#include "tessera/detail/runtime.h"
#include "tessera/messages.h"
#include "tessera/shard.h"
#include "tessera/transfer.h"

namespace tessera::detail {

inline void write_str(BinaryWriter& w, std::string_view s) {
  w.u32(static_cast<std::uint32_t>(s.size()));
  w.bytes(s);
}

inline std::int32_t malformed_arg(const char* call, const BinaryReader& r) {
  return fail_with(std::string(call) + ": malformed argument: " + r.error());
}

// Writes transfer_out()'s result: kOk with the state (raw bytes as they
// are, anything else as MessagePack), kNoState, or kError with its error.
template <class T>
std::int32_t write_transfer_state(const T& out) {
  std::string& buffer = runtime().output;
  if constexpr (kIsResult<T>) {
    if (!out.ok()) return fail_with(out.error());
    return write_transfer_state(out.value());
  } else if constexpr (kIsOptional<T>) {
    if (!out) return abi::kNoState;
    return write_transfer_state(*out);
  } else if constexpr (kIsRawBytes<T>) {
    buffer.assign(reinterpret_cast<const char*>(out.data()), out.size());
    return abi::kOk;
  } else {
    encode(abi::kCodecMsgpack, out, buffer);
    return abi::kOk;
  }
}

// tessera_transfer_out and tessera_transfer_in.
template <class S>
struct TransferExports {};
template <class S>
requires HasTransferOut<S> && HasTransferIn<S>
struct TransferExports<S> {
  // kOk with the state, kNoState (no entity for sid), or kError (refused).
  TESSERA_DETAIL_EXPORT("tessera_transfer_out")
  static std::int32_t transfer_out(GuestPtr sid_ptr, GuestLen sid_len) {
    const ArgBuffer sid(sid_ptr, sid_len);
    S& s = started_shard<S>("tessera_transfer_out");
    runtime().output.clear();
    return write_transfer_state(s.transfer_out(sid.view()));
  }

  // Argument: u32 flags | str subscriber | str peer_shard | str claims_json
  // | str state. kOk (added) or kError (refused, or a malformed argument).
  TESSERA_DETAIL_EXPORT("tessera_transfer_in")
  static std::int32_t transfer_in(GuestPtr ptr, GuestLen len) {
    const ArgBuffer arg(ptr, len);
    S& s = started_shard<S>("tessera_transfer_in");
    runtime().output.clear();
    BinaryReader r(arg.view());
    const std::uint32_t flags = r.u32("flags");
    const std::string_view sid = r.str("subscriber");
    const std::string_view peer = r.str("peer shard");
    const std::string_view claims = r.str("claims");
    const std::string_view bytes = r.str("state");
    if (!r.finish()) return malformed_arg("tessera_transfer_in", r);
    const Auth auth(sid, claims, peer);
    const bool returning = (flags & abi::kTransferInReturning) != 0;
    using State = TransferInStateOf<S>;
    Status added;
    if constexpr (std::is_same_v<State, std::string_view>) {
      added = s.transfer_in(sid, bytes, auth, returning);
    } else if constexpr (kIsRawBytes<State>) {
      added = s.transfer_in(sid, State(bytes.begin(), bytes.end()), auth,
                            returning);
    } else {
      State state{};
      const Status decoded = decode(abi::kCodecMsgpack, bytes, state);
      if (!decoded.ok()) {
        return fail_with("invalid transfer state: " + decoded.message());
      }
      added = s.transfer_in(sid, std::move(state), auth, returning);
    }
    if (!added.ok()) return fail_with(added.message());
    return abi::kOk;
  }
};

// tessera_transfer_requests, for shards with transfer_requests().
template <class S>
struct TransferRequestsExport {};
template <HasTransferRequests S>
struct TransferRequestsExport<S> {
  // kOk with u32 count | count x (str subscriber, str to), or kNoState.
  TESSERA_DETAIL_EXPORT("tessera_transfer_requests")
  static std::int32_t transfer_requests() {
    S& s = started_shard<S>("tessera_transfer_requests");
    Runtime& rt = runtime();
    rt.output.clear();
    const std::vector<TransferRequest> list = s.transfer_requests();
    if (list.empty()) return abi::kNoState;
    BinaryWriter w(rt.output);
    w.u32(static_cast<std::uint32_t>(list.size()));
    for (const TransferRequest& req : list) {
      write_str(w, req.subscriber);
      write_str(w, req.to);
    }
    return abi::kOk;
  }
};

// tessera_groups, for shards with groups().
template <class S>
struct GroupsExport {};
template <HasGroups S>
struct GroupsExport<S> {
  // kOk with u32 count | count x str, or kNoState (no groups).
  TESSERA_DETAIL_EXPORT("tessera_groups") static std::int32_t groups() {
    S& s = started_shard<S>("tessera_groups");
    Runtime& rt = runtime();
    rt.output.clear();
    const std::vector<std::string> list = s.groups();
    if (list.empty()) return abi::kNoState;
    BinaryWriter w(rt.output);
    w.u32(static_cast<std::uint32_t>(list.size()));
    for (const std::string& group : list) write_str(w, group);
    return abi::kOk;
  }
};

// tessera_outbox, for shards with outbox().
template <class S>
struct OutboxExport {};
template <HasOutbox S>
struct OutboxExport<S> {
  // kOk with u32 count | count x (u8 target_kind, str target, str topic,
  // str data), or kNoState (nothing to send). An All target is written
  // with an empty name.
  TESSERA_DETAIL_EXPORT("tessera_outbox") static std::int32_t outbox() {
    S& s = started_shard<S>("tessera_outbox");
    Runtime& rt = runtime();
    rt.output.clear();
    const std::vector<Outgoing> list = s.outbox();
    if (list.empty()) return abi::kNoState;
    BinaryWriter w(rt.output);
    w.u32(static_cast<std::uint32_t>(list.size()));
    for (const Outgoing& m : list) {
      w.u8(static_cast<std::uint8_t>(m.to.kind));
      write_str(w, m.to.kind == TargetKind::kAll ? std::string_view()
                                                 : std::string_view(m.to.name));
      write_str(w, m.topic);
      write_str(w, m.data);
    }
    return abi::kOk;
  }
};

// tessera_on_messages, for shards with on_message().
template <class S>
struct OnMessagesExport {};
template <HasOnMessage S>
struct OnMessagesExport<S> {
  // Argument: u32 count | count x (str from, str topic, str data). The whole
  // argument is checked before the first on_message() call. kOk, or kError
  // for a malformed argument (no message is then applied).
  TESSERA_DETAIL_EXPORT("tessera_on_messages")
  static std::int32_t on_messages(GuestPtr ptr, GuestLen len) {
    const ArgBuffer arg(ptr, len);
    S& s = started_shard<S>("tessera_on_messages");
    Runtime& rt = runtime();
    rt.output.clear();
    BinaryReader r(arg.view());
    const std::uint32_t count = r.u32("message count");
    if (!r.can_hold(count, 12)) {
      r.fail("count larger than the argument", "message count");
    }
    static std::vector<std::string_view>* fields =
        new std::vector<std::string_view>();
    fields->clear();
    for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
      fields->push_back(r.str("from"));
      fields->push_back(r.str("topic"));
      fields->push_back(r.str("data"));
    }
    if (!r.finish()) return malformed_arg("tessera_on_messages", r);
    for (std::size_t i = 0; i + 2 < fields->size(); i += 3) {
      s.on_message((*fields)[i], (*fields)[i + 1], (*fields)[i + 2]);
    }
    return abi::kOk;
  }
};

}  // namespace tessera::detail

// Used by TESSERA_SHARD: the transfer and message members with the
// signatures exported, in workable sets; then their exports.
#define TESSERA_DETAIL_TALK_EXPORTS(Type)                                     \
  static_assert(!::tessera::DeclaresTransferOut<Type> ||                      \
                    ::tessera::HasTransferOut<Type>,                          \
                "TESSERA_SHARD(" #Type                                        \
                "): transfer_out() must be `tessera::Result<std::optional<"   \
                "State>> transfer_out(std::string_view subscriber_id)` (or "  \
                "return std::optional<State>)");                              \
  static_assert(                                                              \
      !::tessera::DeclaresTransferIn<Type> || ::tessera::HasTransferIn<Type>, \
      "TESSERA_SHARD(" #Type                                                  \
      "): transfer_in() must be `tessera::Status transfer_in("                \
      "std::string_view subscriber_id, State state, const "                   \
      "tessera::Auth& auth, bool returning)`");                               \
  static_assert(::tessera::TransferComplete<Type>,                            \
                "TESSERA_SHARD(" #Type                                        \
                "): transfer_out() and transfer_in() come together");         \
  static_assert(::tessera::TransferStatesMatch<Type>,                         \
                "TESSERA_SHARD(" #Type                                        \
                "): transfer_out() and transfer_in() agree on raw bytes "     \
                "(std::string, std::vector<std::uint8_t>, std::string_view) " \
                "versus an encoded value");                                   \
  static_assert(!::tessera::DeclaresTransferRequests<Type> ||                 \
                    ::tessera::HasTransferRequests<Type>,                     \
                "TESSERA_SHARD(" #Type                                        \
                "): transfer_requests() must be `std::vector<"                \
                "tessera::TransferRequest> transfer_requests()`");            \
  static_assert(::tessera::TransferRequestsNeedTransfers<Type>,               \
                "TESSERA_SHARD(" #Type                                        \
                "): transfer_requests() needs transfer_out() and "            \
                "transfer_in()");                                             \
  static_assert(                                                              \
      !::tessera::DeclaresGroups<Type> || ::tessera::HasGroups<Type>,         \
      "TESSERA_SHARD(" #Type                                                  \
      "): groups() must be `std::vector<std::string> groups() const`");       \
  static_assert(                                                              \
      !::tessera::DeclaresOutbox<Type> || ::tessera::HasOutbox<Type>,         \
      "TESSERA_SHARD(" #Type                                                  \
      "): outbox() must be `std::vector<tessera::Outgoing> outbox()`");       \
  static_assert(                                                              \
      !::tessera::DeclaresOnMessage<Type> || ::tessera::HasOnMessage<Type>,   \
      "TESSERA_SHARD(" #Type                                                  \
      "): on_message() must be `void on_message(std::string_view "            \
      "from, std::string_view topic, std::string_view data)`");               \
  template struct ::tessera::detail::TransferExports<Type>;                   \
  template struct ::tessera::detail::TransferRequestsExport<Type>;            \
  template struct ::tessera::detail::GroupsExport<Type>;                      \
  template struct ::tessera::detail::OutboxExport<Type>;                      \
  template struct ::tessera::detail::OnMessagesExport<Type>

#endif  // TESSERA_DETAIL_TALK_EXPORT_H_
