// TESSERA_DETAIL_FOR_EACH(m, a, b, c) expands to `m(a), m(b), m(c)`, and to
// nothing for no arguments. Up to 256 arguments (4^4 rescans, each taking
// one step; longer lists fail to compile). Needs C++20's __VA_OPT__.
#ifndef TESSERA_DETAIL_FOR_EACH_H_
#define TESSERA_DETAIL_FOR_EACH_H_

#define TESSERA_DETAIL_PARENS ()

#define TESSERA_DETAIL_EXPAND(...)               \
  TESSERA_DETAIL_EXPAND4(TESSERA_DETAIL_EXPAND4( \
      TESSERA_DETAIL_EXPAND4(TESSERA_DETAIL_EXPAND4(__VA_ARGS__))))
#define TESSERA_DETAIL_EXPAND4(...)              \
  TESSERA_DETAIL_EXPAND3(TESSERA_DETAIL_EXPAND3( \
      TESSERA_DETAIL_EXPAND3(TESSERA_DETAIL_EXPAND3(__VA_ARGS__))))
#define TESSERA_DETAIL_EXPAND3(...)              \
  TESSERA_DETAIL_EXPAND2(TESSERA_DETAIL_EXPAND2( \
      TESSERA_DETAIL_EXPAND2(TESSERA_DETAIL_EXPAND2(__VA_ARGS__))))
#define TESSERA_DETAIL_EXPAND2(...)              \
  TESSERA_DETAIL_EXPAND1(TESSERA_DETAIL_EXPAND1( \
      TESSERA_DETAIL_EXPAND1(TESSERA_DETAIL_EXPAND1(__VA_ARGS__))))
#define TESSERA_DETAIL_EXPAND1(...) __VA_ARGS__

#define TESSERA_DETAIL_FOR_EACH(macro, ...) \
  __VA_OPT__(                               \
      TESSERA_DETAIL_EXPAND(TESSERA_DETAIL_FOR_EACH_STEP(macro, __VA_ARGS__)))
#define TESSERA_DETAIL_FOR_EACH_STEP(macro, first, ...)                 \
  macro(first)                                                          \
      __VA_OPT__(, TESSERA_DETAIL_FOR_EACH_AGAIN TESSERA_DETAIL_PARENS( \
                       macro, __VA_ARGS__))
#define TESSERA_DETAIL_FOR_EACH_AGAIN() TESSERA_DETAIL_FOR_EACH_STEP

#endif  // TESSERA_DETAIL_FOR_EACH_H_
