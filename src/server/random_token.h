// Random identifiers and secrets from the kernel's CSPRNG (getrandom(2)).
// Any thread.
#ifndef TESSERA_SERVER_RANDOM_TOKEN_H_
#define TESSERA_SERVER_RANDOM_TOKEN_H_

#include <cstddef>
#include <string>

#include "common/status.h"

namespace tessera::server {

// `bytes` random bytes as 2*bytes lower-case hex digits. Errors: kIo when
// the kernel refuses (practically never).
Result<std::string> RandomHex(size_t bytes);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_RANDOM_TOKEN_H_
