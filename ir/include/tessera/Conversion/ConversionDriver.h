//===- ConversionDriver.h - applyPartialConversion with useful errors ------===//
//
// The Tile IR lowerings (TileToGPU's kernel bodies, the cpu plugin's
// TileToCPU) are per-op conversion patterns under a ConversionTarget. MLIR's
// driver reports an op it could not convert as "failed to legalize
// operation": true, but not what a user can act on. Here
//  - an illegal Tile IR op that no pattern handles is named first with the
//    caller's message (`unsupported`, e.g. "has no cpu lowering"), before
//    anything is rewritten;
//  - a pattern that refuses an op emits its own error (what was wrong, how
//    to fix it); the driver's generic line after it adds nothing and is
//    dropped.
// Stateless; diagnostics go through the context's handlers.
//===----------------------------------------------------------------------===//
#ifndef TESSERA_CONVERSION_CONVERSIONDRIVER_H
#define TESSERA_CONVERSION_CONVERSIONDRIVER_H

#include "mlir/Transforms/DialectConversion.h"

namespace tessera::conversion {

/// applyPartialConversion of `root` under `target` with `patterns`, with the
/// diagnostics described above.
mlir::LogicalResult applyTilePatterns(mlir::Operation *root, mlir::ConversionTarget &target,
                                      mlir::RewritePatternSet &&patterns, llvm::StringRef unsupported);

}  // namespace tessera::conversion

#endif
