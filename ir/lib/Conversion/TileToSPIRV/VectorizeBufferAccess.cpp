//===- VectorizeBufferAccess.cpp - vec4 loads/stores of buffers, shared -----===//
//
// Tile IR's vector loads and stores reach SPIR-V scalarized (a SPIR-V vector
// has at most 4 components; KernelLowering splits every vector<N>), so a
// lane that owns 8 consecutive floats issues 8 scalar loads per buffer.  A
// shader compiler that runs invocations in SIMD lanes (lavapipe's llvmpipe)
// turns each into a gather with its own bounds check: examples/saxpy.mlir
// ran at 1.73x the time of the same saxpy in GLSL with vec4 loads.
//
// This pass (on the ABI-lowered spirv.module of a Vulkan shader) gives a
// storage buffer or a workgroup array of 32-bit scalars a vec4 element
// type when at least one quad of its accesses can merge: 4 loads (or 4
// stores) in one block of elements 4q .. 4q+3, the index 4q provably a
// multiple of 4 (products and sums of constants, e.g. `lane * 8 + 4`).  The
// 4 loads become one vec4 load and 4 extracts, at the first load; the 4
// stores one vec4 store of the 4 values, at the last.  Accesses move only
// past ops that neither read nor write memory, so no other buffer access
// (which may alias: two bindings can be one VkBuffer) and no barrier is
// reordered.  Every other access keeps its place and reaches component
// e % 4 of vec4 e / 4.  A buffer with an access that is not a plain load or
// store (an atomic), or with no quad to merge, keeps its scalar type.
//
// Byte offsets are unchanged: element 4q+j is at 16q + 4j in both layouts
// (std430: a vec4 array has stride 16; workgroup memory has no explicit
// layout), so binding and shared-memory sizes and the plugin's descriptor
// setup do not change.
//
//===----------------------------------------------------------------------===//
#include <map>

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "tessera/Conversion/TileToSPIRV/Passes.h"

using namespace mlir;

namespace tessera::spv {
namespace {

constexpr int64_t kWidth = 4;  // components of the vector access

std::optional<int64_t> constantOf(Value v) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c))) return c.getSExtValue();
  return std::nullopt;
}

constexpr int64_t kCap = int64_t{1} << 30;

int64_t knownMultipleIn(Value v, int depth, DenseMap<Value, int64_t> &assumed);

/// A block argument (a loop's induction variable, a merged value): the
/// smallest factor over the values its predecessors pass.  A cycle (the
/// increment of an induction variable) is read with the argument assumed
/// to be the current answer, from optimistic down to the fixed point:
/// `k = 0; k = k + 16` is a multiple of 16.
int64_t blockArgumentMultiple(BlockArgument arg, int depth, DenseMap<Value, int64_t> &assumed) {
  if (auto it = assumed.find(arg); it != assumed.end()) return it->second;
  Block *block = arg.getOwner();
  if (block->isEntryBlock()) return 1;  // a function argument
  int64_t guess = kCap;
  for (int round = 0; round < 4; ++round) {
    assumed[arg] = guess;
    int64_t r = kCap;
    for (Block *pred : block->getPredecessors()) {
      auto br = dyn_cast<BranchOpInterface>(pred->getTerminator());
      if (!br) return assumed.erase(arg), 1;
      for (unsigned i = 0; i < br->getNumSuccessors(); ++i) {
        if (br->getSuccessor(i) != block) continue;
        SuccessorOperands ops = br.getSuccessorOperands(i);
        if (arg.getArgNumber() < ops.getProducedOperandCount()) return assumed.erase(arg), 1;
        Value in = ops[arg.getArgNumber()];
        if (!in) return assumed.erase(arg), 1;
        r = std::min(r, knownMultipleIn(in, depth + 1, assumed));
      }
    }
    if (r == guess) {  // a fixed point: the assumption holds
      assumed.erase(arg);
      return guess;
    }
    guess = r;
  }
  assumed.erase(arg);
  return 1;
}

/// The largest power-of-two factor of `v` known from its definition, capped
/// at 2^30 (constants, IMul, IAdd, ShiftLeftLogical by a constant, block
/// arguments through what their predecessors pass).
int64_t knownMultipleIn(Value v, int depth, DenseMap<Value, int64_t> &assumed) {
  if (auto c = constantOf(v)) return *c == 0 ? kCap : std::min<int64_t>(kCap, *c & -*c);
  if (depth > 12) return 1;
  if (auto arg = v.dyn_cast<BlockArgument>()) return blockArgumentMultiple(arg, depth, assumed);
  Operation *d = v.getDefiningOp();
  if (auto m = dyn_cast<spirv::IMulOp>(d))
    return std::min(kCap, knownMultipleIn(m.getOperand1(), depth + 1, assumed) *
                              knownMultipleIn(m.getOperand2(), depth + 1, assumed));
  if (auto a = dyn_cast<spirv::IAddOp>(d))
    return std::min(knownMultipleIn(a.getOperand1(), depth + 1, assumed),
                    knownMultipleIn(a.getOperand2(), depth + 1, assumed));
  if (auto sh = dyn_cast<spirv::ShiftLeftLogicalOp>(d))
    if (auto c = constantOf(sh.getOperand2()); c && *c >= 0 && *c < 30)
      return std::min(kCap, knownMultipleIn(sh.getOperand1(), depth + 1, assumed) << *c);
  return 1;
}

int64_t knownMultiple(Value v) {
  DenseMap<Value, int64_t> assumed;
  return knownMultipleIn(v, 0, assumed);
}

/// `idx` as base + offset with a constant offset, looking through the
/// memref linearization's `0 + 1 * x` and `x + c`.
std::pair<Value, int64_t> splitConstant(Value idx) {
  int64_t off = 0;
  for (int i = 0; i < 8; ++i) {
    Operation *d = idx.getDefiningOp();
    if (auto a = dyn_cast_or_null<spirv::IAddOp>(d)) {
      if (auto c = constantOf(a.getOperand2())) { off += *c; idx = a.getOperand1(); continue; }
      if (auto c = constantOf(a.getOperand1())) { off += *c; idx = a.getOperand2(); continue; }
    }
    if (auto m = dyn_cast_or_null<spirv::IMulOp>(d)) {
      if (constantOf(m.getOperand1()) == 1) { idx = m.getOperand2(); continue; }
      if (constantOf(m.getOperand2()) == 1) { idx = m.getOperand1(); continue; }
    }
    break;
  }
  return {idx, off};
}

/// One load or store of element base + off through the variable.
struct Access {
  Operation *op;                  // spirv.Load or spirv.Store
  spirv::AccessChainOp chain;
  Value base;
  int64_t off;
};

/// The accesses of one vec4: same block, kind, base and off / 4.
struct Group {
  Access *lanes[kWidth] = {};        // by off % 4
  SmallVector<Access *, 4> members;  // every access of the quad
  bool duplicate = false;            // an element accessed twice: not merged
};

/// Whether `op` may be moved across: it neither reads nor writes memory
/// and has no regions (a selection or loop could hide either).
bool inert(Operation *op) { return op->getNumRegions() == 0 && isMemoryEffectFree(op); }

/// The ops strictly between `a` and `b` (same block, a before b) are all
/// inert or in `allowed`.
bool onlyInertBetween(Operation *a, Operation *b, const SmallPtrSetImpl<Operation *> &allowed) {
  for (Operation *op = a->getNextNode(); op && op != b; op = op->getNextNode())
    if (!inert(op) && !allowed.contains(op)) return false;
  return true;
}

/// floor(off / 4): a negative offset still names an aligned quad.
int64_t quadOf(int64_t off) { return off >= 0 ? off / kWidth : -((-off + kWidth - 1) / kWidth); }

class Vectorizer {
 public:
  explicit Vectorizer(spirv::GlobalVariableOp var) : var(var) {}

  /// Retypes the variable and rewrites its accesses when at least one quad
  /// merges; else leaves it as it is.
  void run(ArrayRef<spirv::AddressOfOp> addrs) {
    auto ptr = var.getType().dyn_cast<spirv::PointerType>();
    if (!ptr) return;
    const spirv::StorageClass sc = ptr.getStorageClass();
    // Storage buffers have an explicit layout (Offset 0, ArrayStride 4);
    // workgroup memory has none.
    const bool explicitLayout = sc == spirv::StorageClass::StorageBuffer;
    if (!explicitLayout && sc != spirv::StorageClass::Workgroup) return;
    auto st = ptr.getPointeeType().dyn_cast<spirv::StructType>();
    if (!st || st.getNumElements() != 1) return;
    if (explicitLayout && (!st.hasOffset() || st.getMemberOffset(0) != 0)) return;
    Type arr = st.getElementType(0), elem;
    int64_t length = -1, stride = 0;  // length -1: a runtime array
    if (auto a = arr.dyn_cast<spirv::ArrayType>()) {
      elem = a.getElementType();
      length = a.getNumElements();
      stride = a.getArrayStride();
    } else if (auto r = arr.dyn_cast<spirv::RuntimeArrayType>()) {
      elem = r.getElementType();
      stride = r.getArrayStride();
    } else {
      return;
    }
    if (!elem.isIntOrFloat() || elem.getIntOrFloatBitWidth() != 32) return;
    if (stride != (explicitLayout ? 4 : 0) || (length >= 0 && length % kWidth)) return;
    if (!collect(addrs)) return;
    group();
    if (merged.empty()) return;

    auto vec = VectorType::get({kWidth}, elem);
    const unsigned newStride = explicitLayout ? 16 : 0;
    Type newArr = length >= 0 ? Type(spirv::ArrayType::get(vec, length / kWidth, newStride))
                              : Type(spirv::RuntimeArrayType::get(vec, newStride));
    auto newStruct = explicitLayout ? spirv::StructType::get({newArr}, {0}) : spirv::StructType::get({newArr});
    auto newPtr = spirv::PointerType::get(newStruct, sc);
    var.setTypeAttr(TypeAttr::get(newPtr));
    for (spirv::AddressOfOp a : addrs) a.getPointer().setType(newPtr);
    for (Group *g : merged) rewrite(*g, vec);
    for (Access *a : lone) rewriteLone(*a);
    llvm::SetVector<Operation *> chains;
    for (Access &a : accesses) chains.insert(a.chain);
    // The scalar accesses' index arithmetic is dead now: erase it (the
    // pipeline runs no canonicalizer after the SPIR-V conversion).
    SmallVector<Operation *> dead;
    for (Operation *c : chains)
      if (c->use_empty()) dead.push_back(c);
    while (!dead.empty()) {
      Operation *op = dead.pop_back_val();
      SmallVector<Value> operands(op->getOperands());
      op->erase();
      for (Value v : operands)
        if (Operation *d = v.getDefiningOp(); d && d->use_empty() && isOpTriviallyDead(d)) dead.push_back(d);
    }
  }

 private:
  spirv::GlobalVariableOp var;
  SmallVector<Access> accesses;
  // (block, is-store, base, off / 4) -> its group.  Iteration order does
  // not matter: each group's new ops go at its own accesses.
  std::map<std::tuple<Block *, bool, void *, int64_t>, Group> groups;
  SmallVector<Group *> merged;  // whole quads, safe to merge
  SmallVector<Access *> lone;   // the rest: one component each

  bool collect(ArrayRef<spirv::AddressOfOp> addrs) {
    for (spirv::AddressOfOp a : addrs)
      for (Operation *u : a->getUsers()) {
        auto chain = dyn_cast<spirv::AccessChainOp>(u);
        if (!chain || chain.getBasePtr() != a.getPointer() || chain.getIndices().size() != 2 ||
            constantOf(chain.getIndices()[0]) != 0)
          return false;
        for (Operation *cu : chain->getUsers()) {
          auto [base, off] = splitConstant(chain.getIndices()[1]);
          if (auto ld = dyn_cast<spirv::LoadOp>(cu)) {
            accesses.push_back({ld, chain, base, off});
          } else if (auto s = dyn_cast<spirv::StoreOp>(cu); s && s.getPtr() == chain.getResult() &&
                                                               s.getValue() != chain.getResult()) {
            accesses.push_back({s, chain, base, off});
          } else {
            return false;  // an atomic, a copy, a pointer passed on
          }
        }
      }
    return !accesses.empty();
  }

  /// Sorts the accesses into merged quads and lone elements.
  void group() {
    for (Access &a : accesses) {
      if (knownMultiple(a.base) % kWidth) {
        lone.push_back(&a);
        continue;
      }
      int64_t q = quadOf(a.off), lane = a.off - q * kWidth;
      bool store = isa<spirv::StoreOp>(a.op);
      Group &g = groups[{a.op->getBlock(), store, a.base.getAsOpaquePointer(), q}];
      if (g.lanes[lane]) g.duplicate = true;
      g.lanes[lane] = &a;
      g.members.push_back(&a);
    }
    for (auto &entry : groups) {
      Group &g = entry.second;
      bool whole = g.members.size() == kWidth && !g.duplicate;
      // Memory order: the quad becomes one access at its first load / last
      // store; only inert ops (and the quad's own accesses) may lie between.
      if (whole) {
        SmallPtrSet<Operation *, 4> own;
        Operation *first = g.lanes[0]->op, *last = g.lanes[0]->op;
        for (Access *a : g.lanes) {
          own.insert(a->op);
          if (a->op->isBeforeInBlock(first)) first = a->op;
          if (last->isBeforeInBlock(a->op)) last = a->op;
        }
        whole = onlyInertBetween(first, last, own);
      }
      if (whole) {
        merged.push_back(&g);
        continue;
      }
      lone.append(g.members.begin(), g.members.end());
    }
  }

  Value constant(OpBuilder &b, Location l, Type t, int64_t v) {
    return b.create<spirv::ConstantOp>(l, t, b.getIntegerAttr(t, v));
  }

  /// base / 4 + q where base is a known multiple of 4.
  Value quarter(OpBuilder &b, Location l, Value base, int64_t q) {
    Type t = base.getType();
    if (auto c = constantOf(base)) return constant(b, l, t, *c / kWidth + q);
    Value r = quarterOf(b, l, base, 0);
    return q ? b.create<spirv::IAddOp>(l, r, constant(b, l, t, q)).getResult() : r;
  }

  /// v / 4 for v a known multiple of 4, taken through the arithmetic that
  /// built it: a constant factor that divides (lane * 8 -> lane * 2), a
  /// factor that is a multiple of 4, both terms of a sum, a left shift;
  /// else an exact shift right.  `k * 128 + ty * 4` becomes `k * 32 + ty`,
  /// the index GLSL gives a vec4 array, rather than `(k * 128 + ty * 4) >> 2`,
  /// which a shader compiler cannot simplify (the sum might wrap) and pays
  /// per access (3 integer ops per shared load of the GEMM's inner loop on
  /// llvmpipe).  Equal wherever the index does not wrap 2^32, which an index
  /// in bounds of a buffer never does.
  Value quarterOf(OpBuilder &b, Location l, Value v, int depth) {
    Type t = v.getType();
    if (auto c = constantOf(v)) return constant(b, l, t, *c / kWidth);
    auto divisible = [](Value x) { return knownMultiple(x) % kWidth == 0; };
    if (depth < 8) {
      if (auto m = v.getDefiningOp<spirv::IMulOp>()) {
        for (int i = 0; i < 2; ++i) {
          Value f = m->getOperand(i), other = m->getOperand(1 - i);
          if (auto c = constantOf(f); c && *c % kWidth == 0)
            return *c == kWidth ? other : b.create<spirv::IMulOp>(l, other, constant(b, l, t, *c / kWidth)).getResult();
        }
        for (int i = 0; i < 2; ++i)
          if (divisible(m->getOperand(i)))
            return b.create<spirv::IMulOp>(l, quarterOf(b, l, m->getOperand(i), depth + 1), m->getOperand(1 - i));
      }
      if (auto a = v.getDefiningOp<spirv::IAddOp>(); a && divisible(a.getOperand1()) && divisible(a.getOperand2())) {
        // `0 + x` (the memref linearization's) is x: no constant is made for the 0.
        if (constantOf(a.getOperand1()) == 0) return quarterOf(b, l, a.getOperand2(), depth + 1);
        if (constantOf(a.getOperand2()) == 0) return quarterOf(b, l, a.getOperand1(), depth + 1);
        return b.create<spirv::IAddOp>(l, quarterOf(b, l, a.getOperand1(), depth + 1),
                                       quarterOf(b, l, a.getOperand2(), depth + 1));
      }
      if (auto sh = v.getDefiningOp<spirv::ShiftLeftLogicalOp>())
        if (auto c = constantOf(sh.getOperand2()); c && *c >= 2 && *c < 30)
          return *c == 2 ? sh.getOperand1()
                         : b.create<spirv::ShiftLeftLogicalOp>(l, sh.getOperand1(), constant(b, l, sh.getOperand2().getType(), *c - 2))
                               .getResult();
    }
    return b.create<spirv::ShiftRightLogicalOp>(l, v, constant(b, l, t, 2));
  }

  void rewrite(Group &g, VectorType vec) {
    bool store = isa<spirv::StoreOp>(g.lanes[0]->op);
    Operation *at = g.lanes[0]->op;
    for (Access *a : g.lanes)
      if (store ? at->isBeforeInBlock(a->op) : a->op->isBeforeInBlock(at)) at = a->op;
    OpBuilder b(at);
    Location l = at->getLoc();
    spirv::AccessChainOp c0 = g.lanes[0]->chain;
    Value idx = quarter(b, l, g.lanes[0]->base, quadOf(g.lanes[0]->off));
    auto chain = b.create<spirv::AccessChainOp>(l, c0.getBasePtr(), ValueRange{c0.getIndices()[0], idx});
    if (!store) {
      Value v = b.create<spirv::LoadOp>(l, chain);
      SmallVector<Value, 4> parts;
      for (int32_t j = 0; j < kWidth; ++j)
        parts.push_back(b.create<spirv::CompositeExtractOp>(l, v, ArrayRef<int32_t>{j}));
      for (int j = 0; j < kWidth; ++j) {
        g.lanes[j]->op->getResult(0).replaceAllUsesWith(parts[j]);
        g.lanes[j]->op->erase();
      }
      return;
    }
    SmallVector<Value, 4> parts;
    for (Access *a : g.lanes) parts.push_back(cast<spirv::StoreOp>(a->op).getValue());
    Value v = b.create<spirv::CompositeConstructOp>(l, vec, parts);
    b.create<spirv::StoreOp>(l, chain, v);
    for (Access *a : g.lanes) a->op->erase();
  }

  /// One element of the vec4 array: component e % 4 of vec4 e / 4 (static
  /// where e is an aligned base plus a constant).
  void rewriteLone(Access &a) {
    OpBuilder b(a.op);
    Location l = a.op->getLoc();
    Value e = a.chain.getIndices()[1], q, comp;
    Type t = e.getType();
    if (knownMultiple(a.base) % kWidth == 0) {
      int64_t qo = quadOf(a.off);
      q = quarter(b, l, a.base, qo);
      comp = constant(b, l, t, a.off - qo * kWidth);
    } else {
      q = b.create<spirv::ShiftRightLogicalOp>(l, e, constant(b, l, t, 2));
      comp = b.create<spirv::BitwiseAndOp>(l, e, constant(b, l, t, kWidth - 1));
    }
    auto chain = b.create<spirv::AccessChainOp>(l, a.chain.getBasePtr(), ValueRange{a.chain.getIndices()[0], q, comp});
    a.op->setOperand(0, chain);
  }
};

struct VectorizeBufferAccessPass
    : PassWrapper<VectorizeBufferAccessPass, OperationPass<spirv::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VectorizeBufferAccessPass)
  StringRef getArgument() const final { return "tessera-spirv-vectorize-buffer-access"; }
  StringRef getDescription() const final {
    return "Storage buffers of 32-bit scalars accessed only in aligned groups of 4 -> vec4 loads/stores";
  }
  void runOnOperation() override {
    spirv::ModuleOp m = getOperation();
    std::map<std::string, SmallVector<spirv::AddressOfOp>> uses;
    m.walk([&](spirv::AddressOfOp a) { uses[a.getVariable().str()].push_back(a); });
    SmallVector<spirv::GlobalVariableOp> vars(m.getOps<spirv::GlobalVariableOp>());
    for (spirv::GlobalVariableOp v : vars) {
      auto it = uses.find(v.getSymName().str());
      if (it != uses.end()) Vectorizer(v).run(it->second);
    }
  }
};

}  // namespace

std::unique_ptr<Pass> createVectorizeBufferAccessPass() { return std::make_unique<VectorizeBufferAccessPass>(); }

}  // namespace tessera::spv
