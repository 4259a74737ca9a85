// Lexical checks of uploaded module sources (source_rules.cc calls them
// from CheckSources): what a C++ file may #include, and the Rust macros and
// attributes that would read the build machine's files or environment.
// Both lexers skip comments, string and character literals, so text there
// never counts; anything they cannot place is refused rather than guessed.
#ifndef TESSERA_COMPUTE_SOURCE_SCAN_H_
#define TESSERA_COMPUTE_SOURCE_SCAN_H_

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::compute {

// Every preprocessing directive of `content` (the file `path` of `files`):
// `#include <tessera/...>`, `#include <standard header>` (a fixed list of
// the C and C++ standard library headers) and `#include "uploaded file"`
// (resolved against the including file's directory, like the compiler) or
// `#include "tessera/..."` only; no computed includes, #include_next, #import
// or #embed; no inline assembly (`asm`, `__asm__`: `.incbin` reads files),
// no __has_include (it probes the build machine's files).
// Errors: kInvalidArgument "<path>:<line>: ...".
Status CheckCppSource(std::string_view path, std::string_view content,
                      const std::map<std::string, std::string>& files);

// Refuses the macros include!, include_str!, include_bytes!, env! and
// option_env! (their names anywhere as identifiers, so a `use ... as` or a
// macro argument cannot smuggle them) and the #[path] attribute (also via
// cfg_attr or a macro-built attribute). Errors: kInvalidArgument
// "<path>:<line>: ...".
Status CheckRustSource(std::string_view path, std::string_view content);

// Whether `name` is on the C / C++ standard header list CheckCppSource
// accepts in `#include <...>`.
bool IsAllowedStandardHeader(std::string_view name);

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_SOURCE_SCAN_H_
