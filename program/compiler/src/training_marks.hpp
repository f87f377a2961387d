// Training programs (docs/autodiff.md): a Graph IR result marked
// `{tessera.update = N}` is the next value of argument N, and a tensor<1xi1>
// result marked `tessera.step_ok` says whether a step's updates apply.  The
// marks are read from the function before it is lowered and recorded in
// the ProgramImage (state_updates, step_ok_param), so a compiled program
// trains the same way without its source.
#ifndef TESSERA_PROGRAM_COMPILER_TRAINING_MARKS_HPP_
#define TESSERA_PROGRAM_COMPILER_TRAINING_MARKS_HPP_

#include <string>
#include <utility>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tessera/program.hpp"

namespace tessera::program {

inline constexpr const char* kUpdateAttr = "tessera.update";
inline constexpr const char* kStepOkAttr = "tessera.step_ok";

struct TrainingMarks {
  size_t num_args = 0;
  std::vector<std::pair<unsigned, unsigned>> updates;  // (result, argument)
  int step_ok_result = -1;
};

// The marks of `fn`, checked: an update names an argument of the result's
// type, at most once; step_ok marks one tensor<1xi1>.  Returns "" or what
// is wrong, naming the result.
std::string ReadTrainingMarks(mlir::func::FuncOp fn, TrainingMarks* out);

// Into `im` (whose params are the function's arguments, then its results):
// "" or what does not match.
std::string RecordTrainingMarks(const TrainingMarks& marks, ProgramImage* im);

}  // namespace tessera::program

#endif
