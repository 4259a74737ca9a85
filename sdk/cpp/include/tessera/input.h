// Tagged inputs: a shard's Input is usually a std::variant of structs with
// TESSERA_FIELDS, externally tagged by each struct's snake_case name:
//
//   struct MoveTo { float x = 0; float y = 0; };
//   TESSERA_FIELDS(MoveTo, x, y);
//   struct Stop {};
//   TESSERA_FIELDS(Stop);
//   using Input = std::variant<MoveTo, Stop>;
//
// decodes {"move_to":{"x":1,"y":2}}, {"stop":{}}, {"stop":null} and "stop"
// (see tessera/decode.h). match() below dispatches on the alternative:
//
//   return tessera::match(input,
//       [&](const MoveTo& m) { return move(sid, m.x, m.y); },
//       [&](const Stop&) { return tessera::Status(); });
#ifndef TESSERA_INPUT_H_
#define TESSERA_INPUT_H_

#include <cstddef>
#include <string_view>
#include <utility>
#include <variant>

#include "tessera/fields.h"

namespace tessera {

// A set of lambdas as one overloaded callable.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// Calls the handler that accepts the alternative `variant` holds and returns
// its result. Every alternative needs a handler (checked at compile time).
template <class Variant, class... Handlers>
decltype(auto) match(Variant&& variant, Handlers&&... handlers) {
  return std::visit(Overloaded{std::forward<Handlers>(handlers)...},
                    std::forward<Variant>(variant));
}

// The tag of the alternative `variant` holds ("move_to").
template <class... Alts>
std::string_view tag_of(const std::variant<Alts...>& variant) {
  std::string_view tag;
  std::size_t index = 0;
  ((index++ == variant.index() ? (tag = tag_of<Alts>(), 0) : 0), ...);
  return tag;
}

}  // namespace tessera

#endif  // TESSERA_INPUT_H_
