// TESSERA_SHARD(Type): defines every export of the guest ABI
// (docs/guest-abi.md) for a shard class as described in tessera/shard.h,
// and the optional interest and replication exports for the hooks it has
// (tessera/interest.h, tessera/replicated.h, tessera/interest_export.h),
// lag compensation's two exports (tessera/rewind.h), and the transfer and
// message exports (tessera/transfer.h, tessera/messages.h,
// tessera/detail/talk_export.h), and the keyed call and entity write
// exports (tessera/calls.h, tessera/detail/calls_export.h).
// Use it once per module, at global namespace scope, after the class.
//
// Threading: a guest is single-threaded; the host makes one call at a time.
// Buffers: every call frees the argument buffers it is given (they came from
// tessera_alloc); the output buffer belongs to the guest and stays valid until
// the next call into the guest.
//
// In a native build the exports are ordinary static member functions of
// tessera::detail::Exports<Type> (pointers are then 64-bit), so tests can
// drive a shard through the same code the host calls.
#ifndef TESSERA_EXPORT_H_
#define TESSERA_EXPORT_H_

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tessera/abi.h"
#include "tessera/codec.h"
#include "tessera/detail/binary_io.h"
#include "tessera/detail/calls_export.h"
#include "tessera/detail/runtime.h"
#include "tessera/detail/talk_export.h"
#include "tessera/finish.h"
#include "tessera/interest_export.h"
#include "tessera/log.h"
#include "tessera/result.h"
#include "tessera/rewind.h"
#include "tessera/shard.h"

namespace tessera {
namespace detail {

// Decodes params and constructs the shard with `make(id, params)`.
template <class S, class Make>
std::int32_t start_shard(std::int32_t codec, std::string_view id,
                         std::string_view params_bytes, Make&& make) {
  Runtime& rt = runtime();
  rt.output.clear();
  if (shard_instance<S>()) return fail_with("the shard has already started");
  if (!is_known_codec(codec)) {
    return fail_with("unknown codec " + std::to_string(codec));
  }
  rt.codec = static_cast<Codec>(codec);
  ParamsOf<S> params{};
  // An empty params buffer means "no params": every field keeps its default.
  if (!params_bytes.empty()) {
    const Status decoded = decode(rt.codec, params_bytes, params);
    if (!decoded.ok()) return fail_with("invalid params: " + decoded.message());
  }
  Result<S> made = make(id, std::move(params));
  if (!made.ok()) return fail_with(made.error());
  shard_instance<S>().emplace(std::move(made).value());
  return abi::kOk;
}

// Exports every shard has.
template <class S>
struct Exports {
  TESSERA_DETAIL_EXPORT("tessera_abi_v1") static void abi_marker() {}

  // A fresh buffer of `len` bytes for the host to write an argument into;
  // 0 when memory is exhausted.
  TESSERA_DETAIL_EXPORT("tessera_alloc")
  static GuestPtr alloc(GuestLen len) {
    return reinterpret_cast<GuestPtr>(std::malloc(len == 0 ? 1 : len));
  }

  TESSERA_DETAIL_EXPORT("tessera_output_ptr") static GuestPtr output_ptr() {
    return reinterpret_cast<GuestPtr>(runtime().output.data());
  }
  TESSERA_DETAIL_EXPORT("tessera_output_len") static GuestLen output_len() {
    return static_cast<GuestLen>(runtime().output.size());
  }

  // kOk, or kError with the reason (bad codec, bad params, init's error).
  TESSERA_DETAIL_EXPORT("tessera_init")
  static std::int32_t init(std::int32_t codec, GuestPtr id_ptr, GuestLen id_len,
                           GuestPtr params_ptr, GuestLen params_len) {
    const ArgBuffer id(id_ptr, id_len);
    const ArgBuffer params(params_ptr, params_len);
    return start_shard<S>(codec, id.view(), params.view(),
                          [](std::string_view shard_id, ParamsOf<S> p) {
                            return S::init(shard_id, std::move(p));
                          });
  }

  // kOk, or kError with "invalid input: ..." or apply_input's error.
  TESSERA_DETAIL_EXPORT("tessera_apply_input")
  static std::int32_t apply_input(GuestPtr sid_ptr, GuestLen sid_len,
                                  GuestPtr input_ptr, GuestLen input_len) {
    const ArgBuffer sid(sid_ptr, sid_len);
    const ArgBuffer input_bytes(input_ptr, input_len);
    S& s = started_shard<S>("tessera_apply_input");
    Runtime& rt = runtime();
    rt.output.clear();
    InputOf<S> input{};
    const Status decoded = decode(rt.codec, input_bytes.view(), input);
    if (!decoded.ok()) return fail_with("invalid input: " + decoded.message());
    const Status applied = s.apply_input(sid.view(), std::move(input));
    if (!applied.ok()) return fail_with(applied.message());
    return abi::kOk;
  }

  // kOk, or kFinished with finish()'s reason. Negative dt counts as 0.
  TESSERA_DETAIL_EXPORT("tessera_tick")
  static std::int32_t tick(std::int64_t dt_us) {
    S& s = started_shard<S>("tessera_tick");
    Runtime& rt = runtime();
    rt.output.clear();
    if (!finished()) call_tick(s, dt_us < 0 ? 0 : dt_us);
    if (!finished()) return abi::kOk;
    rt.output = finish_state().reason;
    return abi::kFinished;
  }

  // kOk; the output holds the snapshot in the shard's codec.
  TESSERA_DETAIL_EXPORT("tessera_snapshot") static std::int32_t snapshot() {
    S& s = started_shard<S>("tessera_snapshot");
    Runtime& rt = runtime();
    rt.output.clear();
    encode(rt.codec, s.snapshot(), rt.output);
    return abi::kOk;
  }

  // Native tests only: forgets the shard and all SDK state.
  static void reset_for_testing() {
    shard_instance<S>().reset();
    runtime() = Runtime();
    finish_state() = FinishState();
  }
};

// tessera_save, only for shards with save().
template <class S>
struct SaveExport {};
template <HasSave S>
struct SaveExport<S> {
  // kOk with the state, kNoState, or kError with save()'s error.
  TESSERA_DETAIL_EXPORT("tessera_save") static std::int32_t save() {
    S& s = started_shard<S>("tessera_save");
    runtime().output.clear();
    return write(s.save());
  }

 private:
  template <class T>
  static std::int32_t write(const T& saved) {
    std::string& out = runtime().output;
    if constexpr (kIsResult<T>) {
      if (!saved.ok()) return fail_with(saved.error());
      return write(saved.value());
    } else if constexpr (kIsOptional<T>) {
      if (!saved) return abi::kNoState;
      return write(*saved);
    } else if constexpr (kIsRawBytes<T>) {
      out.assign(reinterpret_cast<const char*>(saved.data()), saved.size());
      return abi::kOk;
    } else {
      encode(abi::kCodecMsgpack, saved, out);
      return abi::kOk;
    }
  }
};

// tessera_restore, only for shards with restore().
template <class S>
struct RestoreExport {};
template <HasRestore S>
struct RestoreExport<S> {
  // As tessera_init, plus the bytes a tessera_save returned. kError with
  // "invalid saved state: ..." or restore()'s error.
  TESSERA_DETAIL_EXPORT("tessera_restore")
  static std::int32_t restore(std::int32_t codec, GuestPtr id_ptr,
                              GuestLen id_len, GuestPtr params_ptr,
                              GuestLen params_len, GuestPtr state_ptr,
                              GuestLen state_len) {
    const ArgBuffer id(id_ptr, id_len);
    const ArgBuffer params(params_ptr, params_len);
    const ArgBuffer state(state_ptr, state_len);
    using State = RestoreStateOf<S>;
    const std::string_view bytes = state.view();
    return start_shard<S>(
        codec, id.view(), params.view(),
        [bytes](std::string_view shard_id, ParamsOf<S> p) -> Result<S> {
          if constexpr (std::is_same_v<State, std::string_view>) {
            return S::restore(shard_id, std::move(p), bytes);
          } else if constexpr (kIsRawBytes<State>) {
            return S::restore(shard_id, std::move(p),
                              State(bytes.begin(), bytes.end()));
          } else {
            State decoded{};
            const Status status = decode(abi::kCodecMsgpack, bytes, decoded);
            if (!status.ok()) {
              return Error("invalid saved state: " + status.message());
            }
            return S::restore(shard_id, std::move(p), std::move(decoded));
          }
        });
  }
};

// tessera_lag_compensation and tessera_apply_input_at, only for shards with
// lag_compensation() and apply_input_at().
template <class S>
struct LagCompensationExports {};
template <class S>
requires HasLagCompensation<S> && HasApplyInputAt<S>
struct LagCompensationExports<S> {
  // kOk with `u32 history_ticks, u32 max_view_delay_ms`, or kNoState (off).
  // A history_ticks outside 1..256 panics (the host would refuse it).
  TESSERA_DETAIL_EXPORT("tessera_lag_compensation")
  static std::int32_t lag_compensation() {
    S& s = started_shard<S>("tessera_lag_compensation");
    Runtime& rt = runtime();
    rt.output.clear();
    const std::optional<LagCompensation> config = s.lag_compensation();
    if (!config) return abi::kNoState;
    if (config->history_ticks < 1 ||
        config->history_ticks > abi::kMaxHistoryTicks) {
      panic("lag_compensation(): history_ticks must be 1.." +
            std::to_string(abi::kMaxHistoryTicks) + " (got " +
            std::to_string(config->history_ticks) + ")");
    }
    BinaryWriter w(rt.output);
    w.u32(config->history_ticks);
    w.u32(config->max_view_delay_ms);
    return abi::kOk;
  }

  // As tessera_apply_input, plus the Rewind of what the subscriber drew.
  // kOk, or kError with "invalid input: ...", "abi: malformed rewind: ..."
  // or apply_input_at's error.
  TESSERA_DETAIL_EXPORT("tessera_apply_input_at")
  static std::int32_t apply_input_at(GuestPtr sid_ptr, GuestLen sid_len,
                                     GuestPtr input_ptr, GuestLen input_len,
                                     GuestPtr rewind_ptr, GuestLen rewind_len) {
    const ArgBuffer sid(sid_ptr, sid_len);
    const ArgBuffer input_bytes(input_ptr, input_len);
    const ArgBuffer rewind_bytes(rewind_ptr, rewind_len);
    S& s = started_shard<S>("tessera_apply_input_at");
    Runtime& rt = runtime();
    rt.output.clear();
    InputAtOf<S> input{};
    const Status decoded = decode(rt.codec, input_bytes.view(), input);
    if (!decoded.ok()) return fail_with("invalid input: " + decoded.message());
    Result<Rewind> rewind = Rewind::parse(rewind_bytes.view());
    if (!rewind.ok()) return fail_with("abi: " + rewind.error());
    const Status applied =
        s.apply_input_at(sid.view(), std::move(input), rewind.value());
    if (!applied.ok()) return fail_with(applied.message());
    return abi::kOk;
  }
};

}  // namespace detail
}  // namespace tessera

// Exports `Type` as this module's shard. The static_asserts name what is
// missing; the declarations end without a semicolon so the macro takes one.
#define TESSERA_SHARD(Type)                                                   \
  static_assert(::tessera::HasInit<Type>,                                     \
                "TESSERA_SHARD(" #Type                                        \
                "): needs `static tessera::Result<" #Type                     \
                "> init(std::string_view shard_id, Params params)`");         \
  static_assert(::tessera::HasApplyInput<Type>,                               \
                "TESSERA_SHARD(" #Type                                        \
                "): needs `tessera::Status "                                  \
                "apply_input(std::string_view subscriber_id, Input input)`"); \
  static_assert(::tessera::HasTick<Type>,                                     \
                "TESSERA_SHARD(" #Type                                        \
                "): needs `void tick(double "                                 \
                "dt_seconds)` or `void tick(std::chrono::microseconds dt)`"); \
  static_assert(::tessera::HasSnapshot<Type>,                                 \
                "TESSERA_SHARD(" #Type                                        \
                "): needs `Snapshot snapshot() const`");                      \
  static_assert(::tessera::SaveMatchesRestore<Type>,                          \
                "TESSERA_SHARD(" #Type                                        \
                "): save() and restore() come "                               \
                "together, and agree on raw bytes (std::string, "             \
                "std::vector<std::uint8_t>, std::string_view) versus an "     \
                "encoded value");                                             \
  static_assert(std::is_move_constructible_v<Type>,                           \
                "TESSERA_SHARD(" #Type "): the shard must be movable");       \
  TESSERA_DETAIL_LAG_COMPENSATION_CHECKS(Type);                               \
  template struct ::tessera::detail::Exports<Type>;                           \
  template struct ::tessera::detail::SaveExport<Type>;                        \
  template struct ::tessera::detail::RestoreExport<Type>;                     \
  template struct ::tessera::detail::LagCompensationExports<Type>;            \
  TESSERA_DETAIL_TALK_EXPORTS(Type);                                          \
  TESSERA_DETAIL_CALLS_EXPORTS(Type);                                         \
  TESSERA_DETAIL_INTEREST_EXPORTS(Type)

// Used by TESSERA_SHARD: lag_compensation() and apply_input_at() with the
// signatures exported, together, on a shard with replication.
#define TESSERA_DETAIL_LAG_COMPENSATION_CHECKS(Type)                          \
  static_assert(!::tessera::DeclaresLagCompensation<Type> ||                  \
                    ::tessera::HasLagCompensation<Type>,                      \
                "TESSERA_SHARD(" #Type                                        \
                "): lag_compensation() must be `std::optional<"               \
                "tessera::LagCompensation> lag_compensation() const`");       \
  static_assert(!::tessera::DeclaresApplyInputAt<Type> ||                     \
                    ::tessera::HasApplyInputAt<Type>,                         \
                "TESSERA_SHARD(" #Type                                        \
                "): apply_input_at() must be `tessera::Status "               \
                "apply_input_at(std::string_view subscriber_id, Input "       \
                "input, const tessera::Rewind& rewind)`");                    \
  static_assert(::tessera::LagCompensationComplete<Type>,                     \
                "TESSERA_SHARD(" #Type                                        \
                "): lag_compensation() and apply_input_at() come together "   \
                "(lag compensation sends inputs with a view tick to "         \
                "apply_input_at with their tessera::Rewind)");                \
  static_assert(::tessera::ApplyInputAtMatches<Type>,                         \
                "TESSERA_SHARD(" #Type                                        \
                "): apply_input_at() must take the same Input type as "       \
                "apply_input()");                                             \
  static_assert(                                                              \
      !::tessera::HasLagCompensation<Type> || ::tessera::HasReplicated<Type>, \
      "TESSERA_SHARD(" #Type                                                  \
      "): lag_compensation() needs `tessera::Replicated* "                    \
      "replicated()`: the history is what replication sent")

#endif  // TESSERA_EXPORT_H_
