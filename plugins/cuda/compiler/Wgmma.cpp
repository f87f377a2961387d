//===- Wgmma.cpp - tessera_tile.warpgroup_mma on Hopper tensor cores ------===//
#include "Wgmma.h"

#include "MmaSync.h"

#include <string>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace tessera::cuda {

uint64_t wgmmaDescriptorBits(uint64_t leadingBytes, uint64_t strideBytes) {
  const uint64_t swizzle128 = 1;
  return ((leadingBytes >> 4) & 0x3fff) << 16 | ((strideBytes >> 4) & 0x3fff) << 32 | swizzle128 << 62;
}

namespace {

/// The descriptor of the 16-bit element `index` of the shared buffer `m`:
/// its shared-window byte address >> 4 in bits 0-13, `bits` above.
Value descriptor(OpBuilder &b, Location l, Value m, Value index, uint64_t bits) {
  Value a64 = b.create<arith::ExtUIOp>(l, b.getI64Type(), sharedAddress(b, l, m, index, 2));
  Value field = b.create<arith::AndIOp>(l, b.create<arith::ShRUIOp>(l, a64, b.create<arith::ConstantIntOp>(l, 4, 64)),
                                        b.create<arith::ConstantIntOp>(l, 0x3fff, 64));
  return b.create<arith::OrIOp>(l, field, b.create<arith::ConstantIntOp>(l, static_cast<int64_t>(bits), 64));
}

}  // namespace

FailureOr<SmallVector<Value>> lowerWarpgroupMmaToWgmma(OpBuilder &b, tile::WarpgroupMmaOp op, ArrayRef<Value> acc,
                                                       Value /*lane*/) {
  Location l = op.getLoc();
  const int64_t n = op.getN(), steps = op.getK() / 16, regs = n / 2;
  const uint64_t strideBytes = 2 * op.getBBlockStride();
  if (static_cast<int64_t>(acc.size()) != regs) return op.emitOpError("accumulator size does not match n / 2");
  auto c = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(l, v); };
  const uint64_t aBits = wgmmaDescriptorBits(/*leading, unused=*/16, /*stride=*/1024);
  const uint64_t bBits = wgmmaDescriptorBits(/*leading=*/strideBytes, /*stride=*/1024);
  SmallVector<Value> descs;
  for (int64_t s = 0; s < steps; ++s) {
    descs.push_back(descriptor(b, l, op.getA(), b.create<arith::AddIOp>(l, op.getAIndex(), c(16 * s)), aBits));
    descs.push_back(descriptor(b, l, op.getB(), b.create<arith::AddIOp>(l, op.getBIndex(), c(16 * 64 * s)), bBits));
  }
  // Operands: $0..$regs-1 the results, tied to the accumulator inputs
  // $regs..2*regs-1; then the descriptors; then scale-d (1: D += A x B).
  std::string constraints, dRegs;
  for (int64_t i = 0; i < regs; ++i) {
    constraints += "=f,";
    dRegs += (i ? ",$" : "$") + std::to_string(i);
  }
  for (int64_t i = 0; i < regs; ++i) constraints += std::to_string(i) + ",";
  for (size_t i = 0; i < descs.size(); ++i) constraints += "l,";
  constraints += "r";
  const std::string type = op.getOperandType().isBF16() ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(2 * regs + descs.size()) +
                     ", 0;\nwgmma.fence.sync.aligned;\n";
  for (int64_t s = 0; s < steps; ++s)
    text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + type + "." + type + " {" +
            dRegs + "}, $" + std::to_string(2 * regs + 2 * s) + ", $" + std::to_string(2 * regs + 2 * s + 1) +
            ", p, 1, 1, 0, 1;\n";
  text += "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned " + std::to_string(op.getPending()) +
          ";\n}";
  SmallVector<Value> operands(acc.begin(), acc.end());
  operands.append(descs.begin(), descs.end());
  operands.push_back(b.create<arith::ConstantIntOp>(l, 1, 32));
  SmallVector<Type> outs(regs, b.getF32Type());
  Type result = LLVM::LLVMStructType::getLiteral(b.getContext(), outs);
  auto asmOp = b.create<LLVM::InlineAsmOp>(l, result, operands, text, constraints, /*has_side_effects=*/true,
                                           /*is_align_stack=*/false, LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> r;
  for (int64_t i = 0; i < regs; ++i)
    r.push_back(b.create<LLVM::ExtractValueOp>(l, asmOp.getResult(0), ArrayRef<int64_t>{i}));
  return r;
}

FailureOr<SmallVector<Value>> lowerWarpgroupMmaWait(OpBuilder &b, tile::WarpgroupMmaWaitOp op, ArrayRef<Value> acc) {
  Location l = op.getLoc();
  const size_t regs = acc.size();
  std::string constraints;
  for (size_t i = 0; i < regs; ++i) constraints += "=f,";
  for (size_t i = 0; i < regs; ++i) constraints += std::to_string(i) + (i + 1 < regs ? "," : "");
  SmallVector<Type> outs(regs, b.getF32Type());
  Type result = LLVM::LLVMStructType::getLiteral(b.getContext(), outs);
  auto asmOp = b.create<LLVM::InlineAsmOp>(l, result, acc, "wgmma.wait_group.sync.aligned " +
                                                                std::to_string(op.getPending()) + ";",
                                           constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
                                           LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> r;
  for (size_t i = 0; i < regs; ++i)
    r.push_back(b.create<LLVM::ExtractValueOp>(l, asmOp.getResult(0), ArrayRef<int64_t>{static_cast<int64_t>(i)}));
  return r;
}

}  // namespace tessera::cuda
