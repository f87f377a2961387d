// tessera-run --autotune: the search (or the cached choice) before the
// compile, and its report (docs/autotune.md).
#ifndef TESSERA_TOOLS_RUN_TUNE_HPP_
#define TESSERA_TOOLS_RUN_TUNE_HPP_

#include "options.hpp"
#include "tessera/program_compiler.hpp"

namespace tessera::run {

// Searches (or reads the cache), prints what it chose, and sets
// options->schedule to it.  Returns an exit code (kExitOk to go on).
int Autotune(const RunArgs& args, const ProgramSource& source, const std::vector<Device>& devices,
             ProgramCompileOptions* options);

}  // namespace tessera::run

#endif
