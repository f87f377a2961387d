//===- OutlineStage.cpp - a run of a function's ops into a function -------===//
#include "tessera/Dialect/Graph/Transforms/OutlineStage.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

LogicalResult tessera::graph::outlineStage(func::FuncOp fn, ArrayRef<Operation *> ops, Operation *before,
                                          StringRef name, SymbolTable &symbols, Operation *&lastStage) {
  llvm::SmallPtrSet<Operation *, 16> inStage(ops.begin(), ops.end());
  llvm::SetVector<Value> liveIn, liveOut;
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      if (!inStage.contains(v.getDefiningOp())) liveIn.insert(v);
    // Values used inside regions (a hand-written schedule.tile) but defined
    // above them.
    for (Region &r : op->getRegions()) {
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(r, above);
      for (Value v : above)
        if (!inStage.contains(v.getDefiningOp())) liveIn.insert(v);
    }
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers())
        if (!inStage.contains(user)) { liveOut.insert(r); break; }
  }
  if (liveOut.empty()) {  // nothing of it is used: drop it
    for (Operation *op : llvm::reverse(ops)) op->erase();
    return success();
  }
  for (Value v : liveIn)
    if (!v.getType().isa<RankedTensorType>())
      return ops.front()->emitOpError() << "uses a value of type " << v.getType()
                                        << " across a collective: only tensors can cross";
  OpBuilder b(fn);
  b.setInsertionPointAfter(lastStage);
  SmallVector<Type> inTypes, outTypes;
  for (Value v : liveIn) inTypes.push_back(v.getType());
  for (Value v : liveOut) outTypes.push_back(v.getType());
  auto stage = b.create<func::FuncOp>(fn.getLoc(), name,
                                      b.getFunctionType(inTypes, outTypes));
  stage.setPrivate();
  symbols.insert(stage);  // renames it if the name is taken
  lastStage = stage;
  Block *body = stage.addEntryBlock();
  IRMapping map;
  for (auto [v, arg] : llvm::zip(liveIn, body->getArguments())) map.map(v, arg);
  b.setInsertionPointToStart(body);
  for (Operation *op : ops) b.clone(*op, map);
  SmallVector<Value> rets;
  for (Value v : liveOut) rets.push_back(map.lookup(v));
  b.create<func::ReturnOp>(fn.getLoc(), rets);

  b.setInsertionPoint(before);
  auto call = b.create<func::CallOp>(ops.front()->getLoc(), stage, liveIn.getArrayRef());
  for (auto [out, r] : llvm::zip(liveOut, call.getResults()))
    Value(out).replaceUsesWithIf(r, [&](OpOperand &use) { return !inStage.contains(use.getOwner()); });
  for (Operation *op : llvm::reverse(ops)) op->erase();
  return success();
}

