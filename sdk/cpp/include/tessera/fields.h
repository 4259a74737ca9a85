// TESSERA_FIELDS: makes a struct encodable and decodable in both codecs with
// no hand-written serialisation, as serde's derive does in Rust.
//
//   struct Player { std::string id; float x = 0; float y = 0; };
//   TESSERA_FIELDS(Player, id, x, y);
//
// Use it at namespace scope, in the namespace of the struct, after the struct
// is complete; list public data members. Each member is encoded under its own
// name (a key of a MessagePack map or JSON object). When decoding, unknown
// keys are skipped and missing ones keep the value the struct was constructed
// with (its default member initialisers). Supported member types: see
// tessera/decode.h.
//
// The macro also gives the struct a tag: its name in snake_case (an
// underscore before each capital but the first, then lowercase, as serde's
// rename_all = "snake_case"): MoveTo -> "move_to". Tags name the alternatives
// of a std::variant (see tessera/input.h).
#ifndef TESSERA_FIELDS_H_
#define TESSERA_FIELDS_H_

#include <cstddef>
#include <string_view>
#include <tuple>

#include "tessera/detail/for_each.h"

namespace tessera {
namespace detail {

// One member of a described struct: its key and member pointer.
template <class C, class M>
struct Field {
  constexpr Field(std::string_view field_name, M C::*field_member)
      : name(field_name), member(field_member) {}
  std::string_view name;
  M C::*member;
};

// The description TESSERA_FIELDS returns: tag plus a tuple of Field.
template <class Tuple>
struct Description {
  std::string_view tag;
  Tuple fields;
};
template <class Tuple>
Description(std::string_view, Tuple) -> Description<Tuple>;

// A type name converted to snake_case at compile time. N counts the NUL.
template <std::size_t N>
class SnakeName {
 public:
  constexpr explicit SnakeName(const char (&name)[N]) {
    std::size_t start = 0;
    for (std::size_t i = 0; i + 1 < N; ++i) {
      if (name[i] == ':') start = i + 1;  // drop namespace qualifiers
    }
    for (std::size_t i = start; i + 1 < N; ++i) {
      const char c = name[i];
      if (c >= 'A' && c <= 'Z') {
        if (i > start) data_[size_++] = '_';
        data_[size_++] = static_cast<char>(c - 'A' + 'a');
      } else if (c != ' ') {
        data_[size_++] = c;
      }
    }
  }
  constexpr std::string_view view() const { return {data_, size_}; }

 private:
  char data_[2 * N] = {};
  std::size_t size_ = 0;
};

}  // namespace detail

// True for types given fields with TESSERA_FIELDS.
template <class T>
concept HasFields = requires {
  tessera_describe(static_cast<const T*>(nullptr));
};

// The tag and fields of T.
template <HasFields T>
auto describe() {
  return tessera_describe(static_cast<const T*>(nullptr));
}

// T's tag ("move_to" for MoveTo).
template <HasFields T>
std::string_view tag_of() {
  return describe<T>().tag;
}

}  // namespace tessera

#define TESSERA_DETAIL_FIELD(member) \
  ::tessera::detail::Field(#member, &TesseraSelf::member)

// The declarations end with static_assert so the macro takes a semicolon.
#define TESSERA_FIELDS(Type, ...)                                             \
  [[maybe_unused]] inline auto tessera_describe(const Type*) {                \
    using TesseraSelf [[maybe_unused]] = Type;                                \
    static constexpr ::tessera::detail::SnakeName<sizeof(#Type)> kTag(#Type); \
    return ::tessera::detail::Description{                                    \
        kTag.view(), std::make_tuple(TESSERA_DETAIL_FOR_EACH(                 \
                         TESSERA_DETAIL_FIELD, __VA_ARGS__))};                \
  }                                                                           \
  static_assert(true)

#endif  // TESSERA_FIELDS_H_
