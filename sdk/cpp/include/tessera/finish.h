// finish(): how a shard ends itself (a race is over, a match was won).
#ifndef TESSERA_FINISH_H_
#define TESSERA_FINISH_H_

#include <string>
#include <string_view>

namespace tessera {
namespace detail {

struct FinishState {
  bool finished = false;
  std::string reason;
};

// Never destroyed: guests have no orderly exit.
inline FinishState& finish_state() {
  static FinishState* state = new FinishState();
  return *state;
}

}  // namespace detail

// Ends the shard. May be called from init, restore, apply_input or tick; the
// current call completes normally, and the next tessera_tick returns
// abi::kFinished with `reason` (UTF-8, may be empty) without calling the
// shard's tick again. The host then stops the shard with reason "finished".
// The first reason wins; later calls change nothing.
inline void finish(std::string_view reason = {}) {
  detail::FinishState& state = detail::finish_state();
  if (state.finished) return;
  state.finished = true;
  state.reason.assign(reason.data(), reason.size());
}

// Whether finish() has been called.
inline bool finished() { return detail::finish_state().finished; }

}  // namespace tessera

#endif  // TESSERA_FINISH_H_
