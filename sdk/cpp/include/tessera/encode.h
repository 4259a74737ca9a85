// encode_value: writes any supported value with either codec's writer
// (tessera::msgpack::Writer or tessera::json::Writer, same API).
//
// Supported types and their encoding:
//   bool; integers (not char types); float (MessagePack float32); double;
//   std::string / std::string_view; std::vector<T> (array);
//   std::optional<T> (null when empty); std::map<std::string, T> (object);
//   structs with TESSERA_FIELDS (object keyed by member name);
//   std::variant of such structs (externally tagged: {"move_to":{...}}).
// Anything else fails to compile with a message naming TESSERA_FIELDS.
#ifndef TESSERA_ENCODE_H_
#define TESSERA_ENCODE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "tessera/detail/traits.h"
#include "tessera/fields.h"

namespace tessera {

template <class W, class T>
void encode_value(W& w, const T& value);

namespace detail {

template <class W, class T>
void encode_fields(W& w, const T& value) {
  const auto description = describe<T>();
  w.begin_object(std::tuple_size_v<decltype(description.fields)>);
  std::apply(
      [&](const auto&... field) {
        ((w.key(field.name), encode_value(w, value.*(field.member))), ...);
      },
      description.fields);
  w.end_object();
}

template <class W, class... Alts, std::size_t... I>
void encode_variant(W& w, const std::variant<Alts...>& value,
                    std::index_sequence<I...>) {
  const auto one = [&](const auto& alternative) {
    using Alt = std::remove_cvref_t<decltype(alternative)>;
    w.begin_object(1);
    w.key(tag_of<Alt>());
    encode_value(w, alternative);
    w.end_object();
  };
  ((value.index() == I ? one(*std::get_if<I>(&value)) : void()), ...);
}

}  // namespace detail

template <class W, class T>
void encode_value(W& w, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    w.boolean(value);
  } else if constexpr (detail::kIsInteger<T>) {
    if constexpr (std::is_signed_v<T>) {
      w.int64(value);
    } else {
      w.uint64(value);
    }
  } else if constexpr (std::is_same_v<T, float>) {
    w.float32(value);
  } else if constexpr (std::is_same_v<T, double>) {
    w.float64(value);
  } else if constexpr (std::is_same_v<T, std::string> ||
                       std::is_same_v<T, std::string_view>) {
    w.string(value);
  } else if constexpr (detail::kIsOptional<T>) {
    if (value) {
      encode_value(w, *value);
    } else {
      w.null();
    }
  } else if constexpr (detail::kIsVector<T>) {
    w.begin_array(value.size());
    for (const auto& element : value) {
      encode_value(w, static_cast<const typename T::value_type&>(element));
    }
    w.end_array();
  } else if constexpr (detail::kIsStringMap<T>) {
    w.begin_object(value.size());
    for (const auto& [key, element] : value) {
      w.key(key);
      encode_value(w, element);
    }
    w.end_object();
  } else if constexpr (detail::kIsVariant<T>) {
    detail::encode_variant(w, value,
                           std::make_index_sequence<std::variant_size_v<T>>());
  } else if constexpr (HasFields<T>) {
    detail::encode_fields(w, value);
  } else {
    static_assert(detail::kAlwaysFalse<T>,
                  "tessera: this type cannot be encoded; give structs "
                  "TESSERA_FIELDS(Type, members...)");
  }
}

}  // namespace tessera

#endif  // TESSERA_ENCODE_H_
