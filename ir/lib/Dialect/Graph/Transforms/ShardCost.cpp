//===- ShardCost.cpp - what an SPMD function costs one device -------------===//
#include "ShardCost.h"

#include <algorithm>

using namespace mlir;

namespace tessera::graph {

namespace {

double bytesOf(Type t) {
  auto r = t.dyn_cast<RankedTensorType>();
  if (!r || !r.hasStaticShape()) return 0;
  return static_cast<double>(r.getNumElements()) * std::max<int64_t>(1, r.getElementTypeBitWidth() / 8);
}

double elementsOf(Type t) {
  auto r = t.dyn_cast<RankedTensorType>();
  return r && r.hasStaticShape() ? static_cast<double>(r.getNumElements()) : 0;
}

// Devices in the group a collective over `axes` spans.
double groupSize(Operation* op, MeshOp mesh) {
  double n = 1;
  if (auto axes = op->getAttrOfType<ArrayAttr>("axes"))
    for (Attribute a : axes)
      if (auto s = a.dyn_cast<StringAttr>()) n *= std::max<int64_t>(1, mesh.axisSize(s.getValue()));
  return n;
}

}  // namespace

double spmdCost(func::FuncOp fn, MeshOp mesh) {
  double bytes = 0, flops = 0;
  fn.walk([&](Operation* op) {
    if (op->getNumResults() != 1) return;
    Type result = op->getResult(0).getType();
    if (isa<AllReduceOp, AllGatherOp, ReduceScatterOp, BroadcastOp>(op)) {
      const double n = groupSize(op, mesh), share = (n - 1) / n;
      if (isa<AllReduceOp>(op)) bytes += 2 * share * bytesOf(result);
      else if (isa<AllGatherOp>(op)) bytes += share * bytesOf(result);
      else if (isa<ReduceScatterOp>(op)) bytes += share * bytesOf(op->getOperand(0).getType());
      else bytes += n > 1 ? bytesOf(result) : 0;
      return;
    }
    if (auto mm = dyn_cast<MatmulOp>(op)) {
      auto lhs = mm.getLhs().getType().cast<RankedTensorType>();
      flops += 2 * elementsOf(result) * static_cast<double>(lhs.getDimSize(lhs.getRank() - 1));
      return;
    }
    flops += elementsOf(result);
  });
  return bytes + flops / kFlopsPerCollectiveByte;
}

}  // namespace tessera::graph
