#include "training_marks.hpp"

#include "mlir/IR/BuiltinTypes.h"

namespace tessera::program {

std::string ReadTrainingMarks(mlir::func::FuncOp fn, TrainingMarks* out) {
  *out = TrainingMarks();
  const std::string function = fn.getName().str();
  const size_t args = fn.getNumArguments();
  out->num_args = args;
  std::vector<bool> taken(args, false);
  for (unsigned r = 0; r < fn.getNumResults(); ++r) {
    if (fn.getResultAttr(r, kStepOkAttr)) {
      auto t = fn.getResultTypes()[r].dyn_cast<mlir::RankedTensorType>();
      if (!t || !t.getElementType().isInteger(1) || t.getNumElements() != 1)
        return "result " + std::to_string(r) + " of " + function + " is marked " + kStepOkAttr +
               ": it must be a tensor<1xi1> (true: apply the step's updates)";
      if (out->step_ok_result >= 0) return std::string("two results of ") + function + " are marked " + kStepOkAttr;
      out->step_ok_result = static_cast<int>(r);
    }
    auto mark = fn.getResultAttrOfType<mlir::IntegerAttr>(r, kUpdateAttr);
    if (!mark) {
      if (fn.getResultAttr(r, kUpdateAttr))
        return "result " + std::to_string(r) + " of " + function + ": " + kUpdateAttr +
               " must be an argument number (an integer)";
      continue;
    }
    const int64_t a = mark.getInt();
    if (a < 0 || static_cast<uint64_t>(a) >= args)
      return "result " + std::to_string(r) + " of " + function + " updates argument " + std::to_string(a) + ", and " +
             function + " has " + std::to_string(args) + " (numbered from 0)";
    if (fn.getArgumentTypes()[a] != fn.getResultTypes()[r])
      return "result " + std::to_string(r) + " of " + function + " updates argument " + std::to_string(a) +
             " of another type: a result that replaces an argument must have its type";
    if (taken[a]) return "argument " + std::to_string(a) + " of " + function + " is updated by two results";
    taken[a] = true;
    out->updates.push_back({r, static_cast<unsigned>(a)});
  }
  return "";
}

std::string RecordTrainingMarks(const TrainingMarks& marks, ProgramImage* im) {
  im->state_updates.clear();
  im->step_ok_param = -1;
  const auto& params = im->params;
  auto mismatch = [&] {
    return "the compiled " + im->function + " does not have the parameters its source declares: " +
           "a result marked " + kUpdateAttr + " or " + kStepOkAttr + " was lowered to something else";
  };
  for (const auto& [r, a] : marks.updates) {
    const size_t rp = marks.num_args + r;
    if (rp >= params.size() || a >= params.size() || params[rp].role != ParamRole::kOutput ||
        params[a].bytes != params[rp].bytes)
      return mismatch();
    im->state_updates.push_back({static_cast<uint32_t>(rp), a});
  }
  if (marks.step_ok_result >= 0) {
    const size_t rp = marks.num_args + static_cast<size_t>(marks.step_ok_result);
    if (rp >= params.size() || params[rp].role != ParamRole::kOutput) return mismatch();
    im->step_ok_param = static_cast<int32_t>(rp);
  }
  return "";
}

}  // namespace tessera::program
