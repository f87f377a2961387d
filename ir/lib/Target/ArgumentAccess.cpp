// ArgumentAccess: a use walk over a memref argument (see the header).
#include "tessera/Target/ArgumentAccess.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "tessera/plugin.h"

namespace tessera::target {

using namespace mlir;

namespace {

// Ops that only rename memory: their results alias their source.
bool Aliases(Operation *op) {
  if (isa<ViewLikeOpInterface>(op)) return true;
  llvm::StringRef name = op->getName().getStringRef();
  return name == "memref.cast" || name == "memref.reinterpret_cast" ||
         name == "memref.memory_space_cast" || name == "memref.assume_alignment" ||
         name == "bufferization.to_tensor";
}

}  // namespace

uint32_t ArgumentAccess(Value argument) {
  constexpr uint32_t kReadWrite = TS_PARAM_READ | TS_PARAM_WRITE;
  uint32_t access = 0;
  bool touched = false, all_atomic = true;
  llvm::SmallVector<Value, 8> work{argument};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second) continue;
    for (OpOperand &use : value.getUses()) {
      Operation *op = use.getOwner();
      if (Aliases(op)) {
        for (Value result : op->getResults())
          if (result.getType().isa<BaseMemRefType>()) work.push_back(result);
        continue;
      }
      llvm::StringRef name = op->getName().getStringRef();
      uint32_t here = 0;
      bool atomic = name.contains("atomic");
      if (name == "tessera_tile.load") {
        here = TS_PARAM_READ;
      } else if (name == "tessera_tile.store") {
        here = TS_PARAM_WRITE;
      } else if (name == "tessera_tile.atomic_rmw" || name == "memref.atomic_rmw" ||
                 name == "memref.generic_atomic_rmw") {
        here = kReadWrite;
      } else if (name == "tessera_tile.cp_async") {
        here = use.getOperandNumber() == 0 ? TS_PARAM_READ : TS_PARAM_WRITE;  // source first
      } else if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
        llvm::SmallVector<SideEffects::EffectInstance<MemoryEffects::Effect>, 4> list;
        effects.getEffectsOnValue(value, list);
        for (const auto &e : list) {
          if (isa<MemoryEffects::Read>(e.getEffect())) here |= TS_PARAM_READ;
          else if (isa<MemoryEffects::Write>(e.getEffect())) here |= TS_PARAM_WRITE;
          else here |= kReadWrite;  // allocate/free of an argument: be safe
        }
        // An op with the interface and no effect on it only looks at it
        // (memref.dim, extract_strided_metadata): nothing to record.
        if (list.empty() && !isPure(op) && op->getNumRegions() != 0) here = kReadWrite;
      } else {
        here = kReadWrite;  // a call, a pointer taken, an op we do not know
        atomic = false;
      }
      if (here == 0) continue;
      touched = true;
      access |= here;
      if (!atomic) all_atomic = false;
    }
  }
  if (!touched) return TS_PARAM_READ;
  if (all_atomic && (access & TS_PARAM_WRITE)) access |= TS_PARAM_ATOMIC;
  return access;
}

}  // namespace tessera::target
