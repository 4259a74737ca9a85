// The documented conformance exceptions: commands tessera's runtime does
// not pass, each with the reason docs/guest-abi.md ("Conformance
// exceptions") gives. A listed command that passes is reported as a
// failure, so the list cannot go stale.
#ifndef TESSERA_TESTS_SPEC_EXCEPTIONS_H_
#define TESSERA_TESTS_SPEC_EXCEPTIONS_H_

#include <string>

namespace tessera::spec {

// The reason command `line` of `script` ("imports0.wast") is an exception,
// or nullptr when it is expected to pass.
const char* FindException(const std::string& script, int line);

}  // namespace tessera::spec

#endif  // TESSERA_TESTS_SPEC_EXCEPTIONS_H_
