// Running a child process and capturing its output (compilers).
#ifndef TESSERA_COMMON_SUBPROCESS_H_
#define TESSERA_COMMON_SUBPROCESS_H_

#include <string>
#include <vector>

#include "common/status.h"

namespace tessera {

struct ProcessResult {
  int exit_code = -1;  // -1 if killed by a signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (searched in PATH) with argv, waits, and captures output.
// Errors: kIo when the program cannot be started at all.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv);

// Joins argv for messages, quoting words with spaces.
std::string JoinCommand(const std::vector<std::string>& argv);

}  // namespace tessera

#endif  // TESSERA_COMMON_SUBPROCESS_H_
