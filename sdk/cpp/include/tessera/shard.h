// What a shard class looks like. TESSERA_SHARD(Type) (tessera/export.h)
// checks these requirements and exports the class through the guest ABI.
//
//   class Arena {
//    public:
//     // Required. Params: any decodable type (see tessera/decode.h).
//     static tessera::Result<Arena> init(std::string_view shard_id,
//                                        Params params);
//     // Required. Input: usually a std::variant (see tessera/input.h).
//     // subscriber_id is empty for inputs sent by the server side.
//     tessera::Status apply_input(std::string_view subscriber_id,
//                                 Input input);
//     // Required. Either double seconds or a std::chrono duration.
//     void tick(double dt_seconds);
//     // Required. Snapshot: any encodable type.
//     Snapshot snapshot() const;
//     // Optional, but both or neither:
//     State save() const;
//     static tessera::Result<Arena> restore(std::string_view shard_id,
//                                           Params params, State state);
//     // Optional, but both or neither (lag compensation, tessera/rewind.h;
//     // needs replicated()):
//     std::optional<tessera::LagCompensation> lag_compensation() const;
//     tessera::Status apply_input_at(std::string_view subscriber_id,
//                                    Input input,
//                                    const tessera::Rewind& rewind);
//
//     // Optional, but both or neither: moving players between shards
//     // (tessera/transfer.h). transfer_out takes the subscriber's entity
//     // out and returns its state, nullopt when it has none here; it may
//     // also return std::optional<State>, and an error refuses the move.
//     // transfer_in adds it (auth: the subscriber, its ticket's claims for
//     // this shard and where it comes from); an error refuses the player.
//     // `returning` is true when a move failed and this shard takes its own
//     // player back (auth.from_shard() is the shard that refused it):
//     // always accept a returning player, or it is lost.
//     tessera::Result<std::optional<State>> transfer_out(
//         std::string_view subscriber_id);
//     tessera::Status transfer_in(std::string_view subscriber_id,
//                                 State state, const tessera::Auth& auth,
//                                 bool returning);
//     // Optional (needs both of the above): moves this shard asks for,
//     // taken after every tick.
//     std::vector<tessera::TransferRequest> transfer_requests();
//
//     // Optional, each on its own: messages between shards
//     // (tessera/messages.h). groups(): this shard's groups, read after
//     // init/restore and after every tick. outbox(): messages to send,
//     // taken after every tick. on_message(): each message for this shard,
//     // in order per sender, before the next tick's inputs (`from` is ""
//     // for a message the server published).
//     std::vector<std::string> groups() const;
//     std::vector<tessera::Outgoing> outbox();
//     void on_message(std::string_view from, std::string_view topic,
//                     std::string_view data);
//
//     // Optional, but both or neither: keyed calls to the app's functions
//     // (tessera/calls.h). calls(): every call the shard still waits for,
//     // read after every tick (the host sends each key once and skips the
//     // ones in flight, so list them until their result comes).
//     // on_call_result(): the outcome of one call, before the next tick's
//     // inputs, once per key per shard run; apply the call's effect here
//     // and stop listing the key. After a restore the shard is a new run:
//     // list the calls saved with the state again and their stored results
//     // come back without running the functions twice.
//     std::vector<tessera::Call> calls();
//     void on_call_result(std::string_view key,
//                         const tessera::CallOutcome& outcome);
//     // Optional: fields of the app's data to write (tessera/calls.h),
//     // taken after every tick and once more when the shard stops; return
//     // each change once (the host keeps the latest value per row and
//     // field until it writes them).
//     std::vector<tessera::Write> writes();
//   };
//
// Params, Input and State are deduced from these signatures, so init,
// apply_input, restore and transfer_in must not be overloaded. String views
// passed in are valid only during the call: copy what you keep.
//
// save() may return T, std::optional<T> (nullopt: nothing to save yet) or
// tessera::Result<T> / Result<std::optional<T>> (an error is reported to the
// host). When T is std::string or std::vector<std::uint8_t>, its bytes are
// saved as they are and restore() should take std::string_view (or the same
// type); any other T is encoded as MessagePack whatever the shard's codec, and
// restore() takes T. A transfer State follows the same rule: raw bytes as
// they are (transfer_in may take std::string_view), any other type as
// MessagePack; transfer_out and transfer_in agree on which.
#ifndef TESSERA_SHARD_H_
#define TESSERA_SHARD_H_

#include <chrono>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/calls.h"
#include "tessera/messages.h"
#include "tessera/result.h"
#include "tessera/rewind.h"
#include "tessera/transfer.h"

namespace tessera {
namespace detail {

template <class F>
struct InitSignature {};
template <class S, class P>
struct InitSignature<Result<S> (*)(std::string_view, P)> {
  using Shard = S;
  using Params = std::remove_cvref_t<P>;
};
template <class S, class P>
struct InitSignature<Result<S> (*)(std::string_view, P) noexcept>
    : InitSignature<Result<S> (*)(std::string_view, P)> {};

template <class F>
struct ApplyInputSignature {};
template <class S, class I>
struct ApplyInputSignature<Status (S::*)(std::string_view, I)> {
  using Input = std::remove_cvref_t<I>;
};
template <class S, class I>
struct ApplyInputSignature<Status (S::*)(std::string_view, I) noexcept>
    : ApplyInputSignature<Status (S::*)(std::string_view, I)> {};

template <class F>
struct ApplyInputAtSignature {};
template <class S, class I>
struct ApplyInputAtSignature<Status (S::*)(std::string_view, I,
                                           const Rewind&)> {
  using Input = std::remove_cvref_t<I>;
};
template <class S, class I>
struct ApplyInputAtSignature<Status (S::*)(std::string_view, I,
                                           const Rewind&) noexcept>
    : ApplyInputAtSignature<Status (S::*)(std::string_view, I, const Rewind&)> {
};

template <class F>
struct RestoreSignature {};
template <class S, class P, class T>
struct RestoreSignature<Result<S> (*)(std::string_view, P, T)> {
  using Shard = S;
  using Params = std::remove_cvref_t<P>;
  using State = std::remove_cvref_t<T>;
};
template <class S, class P, class T>
struct RestoreSignature<Result<S> (*)(std::string_view, P, T) noexcept>
    : RestoreSignature<Result<S> (*)(std::string_view, P, T)> {};

template <class F>
struct TransferInSignature {};
template <class S, class T>
struct TransferInSignature<Status (S::*)(std::string_view, T, const Auth&,
                                         bool)> {
  using State = std::remove_cvref_t<T>;
};
template <class S, class T>
struct TransferInSignature<Status (S::*)(std::string_view, T, const Auth&,
                                         bool) noexcept>
    : TransferInSignature<Status (S::*)(std::string_view, T, const Auth&,
                                        bool)> {};

// The State of transfer_out's Result<std::optional<State>> or
// std::optional<State>; no Type for anything else.
template <class T>
struct TransferOutState {};
template <class T>
struct TransferOutState<std::optional<T>> {
  using Type = T;
};
template <class T>
struct TransferOutState<Result<std::optional<T>>> {
  using Type = T;
};

template <class T>
inline constexpr bool kIsResult = false;
template <class T>
inline constexpr bool kIsResult<Result<T>> = true;

// Types saved and restored as raw bytes rather than encoded.
template <class T>
inline constexpr bool kIsRawBytes =
    std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view> ||
    std::is_same_v<T, std::vector<std::uint8_t>>;

// The T inside save()'s Result<std::optional<T>> (or any subset of those).
template <class T>
struct SavedType {
  using Type = T;
};
template <class T>
struct SavedType<Result<T>> : SavedType<T> {};
template <class T>
struct SavedType<std::optional<T>> : SavedType<T> {};

}  // namespace detail

template <class S>
concept HasInit = requires {
  typename detail::InitSignature<decltype(&S::init)>::Params;
}
&&std::is_same_v<typename detail::InitSignature<decltype(&S::init)>::Shard, S>;

template <class S>
concept HasApplyInput = requires {
  typename detail::ApplyInputSignature<decltype(&S::apply_input)>::Input;
};

template <class S>
concept HasChronoTick = requires(S& s) {
  s.tick(std::chrono::microseconds(0));
};
template <class S>
concept HasTick = HasChronoTick<S> || requires(S& s) {
  s.tick(0.0);
};

template <class S>
concept HasSnapshot = requires(S& s) {
  s.snapshot();
};

template <class S>
concept HasSave = requires(S& s) {
  s.save();
};

template <class S>
concept HasRestore = requires {
  typename detail::RestoreSignature<decltype(&S::restore)>::State;
}
&&std::is_same_v<
    typename detail::RestoreSignature<decltype(&S::restore)>::Shard, S>;

// Lag compensation: a class declaring either member, and one declaring it
// with the signature TESSERA_SHARD exports.
template <class S>
concept DeclaresLagCompensation = requires {
  &S::lag_compensation;
};
template <class S>
concept HasLagCompensation = requires(const S& s) {
  { s.lag_compensation() } -> std::same_as<std::optional<LagCompensation>>;
};
template <class S>
concept DeclaresApplyInputAt = requires {
  &S::apply_input_at;
};
template <class S>
concept HasApplyInputAt = requires {
  typename detail::ApplyInputAtSignature<decltype(&S::apply_input_at)>::Input;
};

// Transfers and messages: a class declaring a member function (a data
// member of the same name is not one), and one declaring it with a
// signature TESSERA_SHARD exports.
template <auto Member>
inline constexpr bool kIsMemberFunction =
    std::is_member_function_pointer_v<decltype(Member)>;
template <class S>
concept DeclaresTransferOut = requires {
  &S::transfer_out;
}
&&kIsMemberFunction<&S::transfer_out>;
template <class S>
concept HasTransferOut = requires(S& s, std::string_view sid) {
  typename detail::TransferOutState<
      std::remove_cvref_t<decltype(s.transfer_out(sid))>>::Type;
};
template <class S>
concept DeclaresTransferIn = requires {
  &S::transfer_in;
}
&&kIsMemberFunction<&S::transfer_in>;
template <class S>
concept HasTransferIn = requires {
  typename detail::TransferInSignature<decltype(&S::transfer_in)>::State;
};
template <class S>
concept DeclaresTransferRequests = requires {
  &S::transfer_requests;
}
&&kIsMemberFunction<&S::transfer_requests>;
template <class S>
concept HasTransferRequests = requires(S& s) {
  {
    s.transfer_requests()
    } -> std::convertible_to<std::vector<TransferRequest>>;
};
template <class S>
concept DeclaresGroups = requires {
  &S::groups;
}
&&kIsMemberFunction<&S::groups>;
template <class S>
concept HasGroups = requires(S& s) {
  { s.groups() } -> std::convertible_to<std::vector<std::string>>;
};
template <class S>
concept DeclaresOutbox = requires {
  &S::outbox;
}
&&kIsMemberFunction<&S::outbox>;
template <class S>
concept HasOutbox = requires(S& s) {
  { s.outbox() } -> std::convertible_to<std::vector<Outgoing>>;
};
template <class S>
concept DeclaresOnMessage = requires {
  &S::on_message;
}
&&kIsMemberFunction<&S::on_message>;
template <class S>
concept HasOnMessage = requires(S& s, std::string_view v) {
  s.on_message(v, v, v);
};

// Keyed calls and entity writes (tessera/calls.h).
template <class S>
concept DeclaresCalls = requires {
  &S::calls;
}
&&kIsMemberFunction<&S::calls>;
template <class S>
concept HasCalls = requires(S& s) {
  { s.calls() } -> std::convertible_to<std::vector<Call>>;
};
template <class S>
concept DeclaresOnCallResult = requires {
  &S::on_call_result;
}
&&kIsMemberFunction<&S::on_call_result>;
template <class S>
concept HasOnCallResult = requires(S& s, std::string_view key,
                                   const CallOutcome& outcome) {
  s.on_call_result(key, outcome);
};
template <class S>
concept DeclaresWrites = requires {
  &S::writes;
}
&&kIsMemberFunction<&S::writes>;
template <class S>
concept HasWrites = requires(S& s) {
  { s.writes() } -> std::convertible_to<std::vector<Write>>;
};
// calls() and on_call_result() both or neither.
template <class S>
concept CallsComplete = HasCalls<S>
== HasOnCallResult<S>;

template <HasInit S>
using ParamsOf = typename detail::InitSignature<decltype(&S::init)>::Params;
template <HasApplyInput S>
using InputOf =
    typename detail::ApplyInputSignature<decltype(&S::apply_input)>::Input;
template <HasApplyInputAt S>
using InputAtOf =
    typename detail::ApplyInputAtSignature<decltype(&S::apply_input_at)>::Input;
template <HasSnapshot S>
using SnapshotOf = std::remove_cvref_t<decltype(std::declval<S&>().snapshot())>;
template <HasSave S>
using SavedOf = typename detail::SavedType<
    std::remove_cvref_t<decltype(std::declval<S&>().save())>>::Type;
template <HasRestore S>
using RestoreStateOf =
    typename detail::RestoreSignature<decltype(&S::restore)>::State;

template <HasTransferOut S>
using TransferOutStateOf =
    typename detail::TransferOutState<std::remove_cvref_t<
        decltype(std::declval<S&>().transfer_out(std::string_view()))>>::Type;
template <HasTransferIn S>
using TransferInStateOf =
    typename detail::TransferInSignature<decltype(&S::transfer_in)>::State;

// transfer_out() and transfer_in() both or neither, agreeing on raw bytes
// versus an encoded value; transfer_requests() only with both.
template <class S>
concept TransferComplete = HasTransferOut<S>
== HasTransferIn<S>;
template <class S>
concept TransferStatesMatch = !HasTransferOut<S> || !HasTransferIn<S> ||
                              detail::kIsRawBytes<TransferOutStateOf<S>> ==
                                  detail::kIsRawBytes<TransferInStateOf<S>>;
template <class S>
concept TransferRequestsNeedTransfers =
    !HasTransferRequests<S> || (HasTransferOut<S> && HasTransferIn<S>);

// save() and restore() agree on raw bytes versus an encoded value.
template <class S>
concept SaveMatchesRestore = (!HasSave<S> && !HasRestore<S>) ||
                             (HasSave<S> && HasRestore<S> &&
                              detail::kIsRawBytes<SavedOf<S>> ==
                                  detail::kIsRawBytes<RestoreStateOf<S>>);

// lag_compensation() and apply_input_at() both or neither, apply_input_at
// taking apply_input's Input.
template <class S>
concept LagCompensationComplete = (!HasLagCompensation<S> &&
                                   !HasApplyInputAt<S>) ||
                                  (HasLagCompensation<S> && HasApplyInputAt<S>);
template <class S>
concept ApplyInputAtMatches = !HasApplyInputAt<S> || !HasApplyInput<S> ||
                              std::is_same_v<InputAtOf<S>, InputOf<S>>;

// Calls s.tick with `dt_us` microseconds in the form it takes.
template <HasTick S>
void call_tick(S& s, std::int64_t dt_us) {
  if constexpr (HasChronoTick<S>) {
    s.tick(std::chrono::microseconds(dt_us));
  } else {
    s.tick(static_cast<double>(dt_us) * 1e-6);
  }
}

}  // namespace tessera

#endif  // TESSERA_SHARD_H_
