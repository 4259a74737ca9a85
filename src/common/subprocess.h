// Running a child process and capturing its output (compilers).
#ifndef TESSERA_COMMON_SUBPROCESS_H_
#define TESSERA_COMMON_SUBPROCESS_H_

#include <functional>
#include <string>
#include <string_view>
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
// As above, and calls `on_output` with each chunk of output as it arrives
// (for progress); the result still holds all of it.
Result<ProcessResult> RunProcess(
    const std::vector<std::string>& argv,
    const std::function<void(std::string_view)>& on_output);

// Joins argv for messages, quoting words with spaces.
std::string JoinCommand(const std::vector<std::string>& argv);

}  // namespace tessera

#endif  // TESSERA_COMMON_SUBPROCESS_H_
