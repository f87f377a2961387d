//===- NarrowIntegerLiterals.h - 8/16-bit constant literals made valid ----===//
//
// MLIR 16's SPIR-V serializer writes the literal of an 8- or 16-bit integer
// OpConstant sign-extended to 32 bits whatever the type's signedness, so a
// negative i16 (a bf16 constant's bit pattern such as -2.0 = 0xC000) of
// the signless (Signedness 0) type the lowering uses comes out as
// 0xFFFFC000, which spirv-val rejects ("the high-order bits of a literal
// number ... must be 0"). The SPIR-V rules: the literal's high bits are 0
// for Signedness 0 and copies of the sign bit for Signedness 1.
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

#include "llvm/ADT/SmallVector.h"

namespace tessera::spv {

/// Rewrites, in place, the literal of every OpConstant and OpSpecConstant
/// whose type is an integer narrower than 32 bits, per the SPIR-V rules
/// above. Words that are not a well-formed module are left as they are.
void fixNarrowIntegerLiterals(llvm::SmallVectorImpl<uint32_t> &words);

}  // namespace tessera::spv
