// A user's schedule (ProgramCompileOptions::schedule, tessera-run
// --schedule, tessera.compile(schedule=)) checked against the options of
// --tessera-graph-to-schedule before any pass parses it: MLIR 16's option
// parser prints its own complaint to stderr ("<Pass-Options-Parser>: no such
// option ...") beside the error the caller gets, and names no alternative.
#ifndef TESSERA_PROGRAM_COMPILER_SCHEDULE_CHECK_HPP_
#define TESSERA_PROGRAM_COMPILER_SCHEDULE_CHECK_HPP_

#include <string>

namespace tessera::program {

// "" when every "key=value" (or bare boolean "key") of `schedule` names an
// option of the pass with a value of its kind (a whole number, true/false,
// or any text); else what is wrong, naming the key and listing the options.
std::string CheckSchedule(const std::string& schedule);

}  // namespace tessera::program

#endif
