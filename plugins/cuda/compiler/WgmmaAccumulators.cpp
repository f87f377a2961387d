//===- WgmmaAccumulators.cpp - one register per wgmma accumulator ---------===//
//
// See WgmmaAccumulators.h.
//===----------------------------------------------------------------------===//
#include "WgmmaAccumulators.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace tessera::cuda {

namespace {

/// The number of leading "=f" outputs of a wgmma block: its accumulators,
/// which are also its first operands (tied inputs, Wgmma.cpp).
unsigned accumulatorCount(const llvm::InlineAsm *asmOp) {
  unsigned n = 0;
  for (const llvm::InlineAsm::ConstraintInfo &c : asmOp->ParseConstraints()) {
    if (c.Type != llvm::InlineAsm::isOutput) break;
    ++n;
  }
  return n;
}

/// `mov.b32 $0, <bits of c>` before `before`: a definition of its own.
llvm::Value *ownDefinition(llvm::ConstantFP *c, llvm::Instruction *before) {
  char bits[16];
  std::snprintf(bits, sizeof bits, "0x%08llx",
                static_cast<unsigned long long>(c->getValueAPF().bitcastToAPInt().getZExtValue()));
  auto *type = llvm::FunctionType::get(c->getType(), false);
  auto *mov = llvm::InlineAsm::get(type, std::string("mov.b32 $0, ") + bits + ";", "=f", /*hasSideEffects=*/true);
  return llvm::CallInst::Create(type, mov, "", before);
}

}  // namespace

unsigned separateWgmmaAccumulatorInits(llvm::Module &module) {
  unsigned rewritten = 0;
  llvm::SmallPtrSet<llvm::PHINode *, 32> done;
  for (llvm::Function &f : module)
    for (llvm::BasicBlock &bb : f)
      for (llvm::Instruction &inst : bb) {
        auto *call = llvm::dyn_cast<llvm::CallInst>(&inst);
        auto *asmOp = call ? llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand()) : nullptr;
        if (!asmOp || asmOp->getAsmString().find("wgmma.mma_async") == std::string::npos) continue;
        const unsigned n = std::min<unsigned>(accumulatorCount(asmOp), call->arg_size());
        for (unsigned i = 0; i < n; ++i) {
          llvm::Value *acc = call->getArgOperand(i);
          // Straight from a constant (no loop): a definition here.
          if (auto *c = llvm::dyn_cast<llvm::ConstantFP>(acc)) {
            call->setArgOperand(i, ownDefinition(c, call));
            ++rewritten;
            continue;
          }
          // Carried by a loop: the constants it enters with, defined at the
          // end of the block they come from.
          auto *phi = llvm::dyn_cast<llvm::PHINode>(acc);
          if (!phi || !done.insert(phi).second) continue;
          // (A block listed twice must give the same value both times.)
          llvm::DenseMap<llvm::BasicBlock *, llvm::Value *> made;
          for (unsigned k = 0; k < phi->getNumIncomingValues(); ++k)
            if (auto *c = llvm::dyn_cast<llvm::ConstantFP>(phi->getIncomingValue(k))) {
              llvm::BasicBlock *from = phi->getIncomingBlock(k);
              llvm::Value *&def = made[from];
              if (!def) def = ownDefinition(c, from->getTerminator()), ++rewritten;
              phi->setIncomingValue(k, def);
            }
        }
      }
  return rewritten;
}

}  // namespace tessera::cuda
