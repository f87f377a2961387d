#include "training.hpp"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tessera::run {

std::string FindStateUpdates(mlir::ModuleOp source, const std::string& function,
                             const std::vector<ParamSpec>& params, std::vector<StateUpdate>* out) {
  out->clear();
  if (!source) return "";
  auto fn = source.lookupSymbol<mlir::func::FuncOp>(function);
  if (!fn) return "";
  const size_t args = fn.getNumArguments();
  std::vector<bool> taken(args, false);
  for (unsigned r = 0; r < fn.getNumResults(); ++r) {
    auto mark = fn.getResultAttrOfType<mlir::IntegerAttr>(r, kUpdateAttr);
    if (!mark) {
      if (fn.getResultAttr(r, kUpdateAttr))
        return "result " + std::to_string(r) + " of " + function + ": " + kUpdateAttr +
               " must be an argument number (an integer)";
      continue;
    }
    const int64_t a = mark.getInt();
    if (a < 0 || static_cast<size_t>(a) >= args)
      return "result " + std::to_string(r) + " of " + function + " updates argument " + std::to_string(a) + ", and " +
             function + " has " + std::to_string(args) + " (numbered from 0)";
    if (fn.getArgumentTypes()[a] != fn.getResultTypes()[r])
      return "result " + std::to_string(r) + " of " + function + " updates argument " + std::to_string(a) +
             " of another type: a result that replaces an argument must have its type";
    if (taken[a]) return "argument " + std::to_string(a) + " of " + function + " is updated by two results";
    taken[a] = true;
    const size_t rp = args + r;
    if (rp >= params.size() || params[rp].role != ParamRole::kOutput || params[a].bytes != params[rp].bytes)
      return "the compiled " + function + " does not have the parameters its source declares (recompile it)";
    out->push_back({rp, static_cast<size_t>(a)});
  }
  return "";
}

std::string FindStepOk(mlir::ModuleOp source, const std::string& function, const std::vector<ParamSpec>& params,
                       int* param) {
  *param = -1;
  if (!source) return "";
  auto fn = source.lookupSymbol<mlir::func::FuncOp>(function);
  if (!fn) return "";
  for (unsigned r = 0; r < fn.getNumResults(); ++r) {
    if (!fn.getResultAttr(r, kStepOkAttr)) continue;
    auto t = fn.getResultTypes()[r].dyn_cast<mlir::RankedTensorType>();
    if (!t || !t.getElementType().isInteger(1) || t.getNumElements() != 1)
      return "result " + std::to_string(r) + " of " + function + " is marked " + kStepOkAttr +
             ": it must be a tensor<1xi1> (true: apply the step's updates)";
    if (*param >= 0) return std::string("two results of ") + function + " are marked " + kStepOkAttr;
    const size_t rp = fn.getNumArguments() + r;
    if (rp >= params.size() || params[rp].role != ParamRole::kOutput)
      return "the compiled " + function + " does not have the parameters its source declares (recompile it)";
    *param = static_cast<int>(rp);
  }
  return "";
}

Status ApplyStateUpdates(const std::vector<StateUpdate>& updates, const std::vector<ParamSpec>& params,
                         std::vector<std::vector<Buffer>>& buffers, std::vector<Stream>& streams) {
  for (size_t d = 0; d < buffers.size(); ++d) {
    for (const StateUpdate& u : updates)
      if (Status st = streams[d].copy_async(buffers[d][u.arg_param], buffers[d][u.result_param],
                                            params[u.arg_param].bytes);
          !st.ok())
        return st;
    if (Status st = streams[d].synchronize(); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace tessera::run
