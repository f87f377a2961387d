//===- ConversionDriver.cpp - applyPartialConversion with useful errors ----===//
//
// See tessera/Conversion/ConversionDriver.h.
//===----------------------------------------------------------------------===//
#include "tessera/Conversion/ConversionDriver.h"

#include "llvm/ADT/DenseSet.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

using namespace mlir;

LogicalResult tessera::conversion::applyTilePatterns(Operation *root, ConversionTarget &target,
                                                     RewritePatternSet &&patterns, StringRef unsupported) {
  // The ops some pattern is written for.
  DenseSet<OperationName> handled;
  for (const std::unique_ptr<RewritePattern> &p : patterns.getNativePatterns())
    if (std::optional<OperationName> name = p->getRootKind()) handled.insert(*name);
  // The first illegal Tile IR op without a pattern, in program order.
  // (isIllegal: legality can depend on the op's operands or attributes;
  // generic patterns, for any op, are not for Tile IR ops.)
  WalkResult walk = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == root || !isa_and_nonnull<tessera::tile::TileDialect>(op->getDialect()) || !target.isIllegal(op) ||
        handled.contains(op->getName()))
      return WalkResult::advance();
    op->emitOpError(unsupported);
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted()) return failure();
  // A pattern's own error first; then the driver's generic one is dropped.
  bool reported = false;
  ScopedDiagnosticHandler handler(root->getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() != DiagnosticSeverity::Error) return failure();
    if (StringRef(d.str()).startswith("failed to legalize operation") && reported) return success();
    reported = true;
    return failure();  // on to the handlers before this one
  });
  FrozenRewritePatternSet frozen(std::move(patterns));
  return applyPartialConversion(root, target, frozen);
}
