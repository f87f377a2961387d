//===- TileDialect.cpp - Tessera Tile IR ----------------------------------===//
#include "tessera/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/FunctionInterfaces.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace tessera::tile;

#include "tessera/Dialect/Tile/IR/TileOpsDialect.cpp.inc"
#include "tessera/Dialect/Tile/IR/TileOpsEnums.cpp.inc"
#define GET_OP_CLASSES
#include "tessera/Dialect/Tile/IR/TileOps.cpp.inc"

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessera/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
}

SmallVector<int64_t, 3> tessera::tile::getGroupSize(Operation *kernel) {
  SmallVector<int64_t, 3> size{1, 1, 1};
  if (auto a = kernel->getAttrOfType<DenseI64ArrayAttr>(kGroupSizeAttr))
    for (auto [i, v] : llvm::enumerate(a.asArrayRef())) size[i] = v;
  return size;
}

bool tessera::tile::isSharedMemory(MemRefType type) {
  auto space = type.getMemorySpace().dyn_cast_or_null<IntegerAttr>();
  return space && space.getInt() == kSharedMemorySpace;
}

LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kGroupSizeAttr) {
    auto a = attr.getValue().dyn_cast<DenseI64ArrayAttr>();
    if (!a || a.empty() || a.size() > 3)
      return op->emitError() << kGroupSizeAttr
                             << " must be array<i64: X[, Y[, Z]]>";
    int64_t n = 1;
    for (int64_t v : a.asArrayRef()) {
      if (v <= 0) return op->emitError() << kGroupSizeAttr << " entries must be positive";
      n *= v;
    }
    if (n > 1024)
      return op->emitError() << "group of " << n << " lanes exceeds the limit of 1024";
    return success();
  }
  if (name == kGridAttr) {
    auto a = attr.getValue().dyn_cast<DenseI64ArrayAttr>();
    if (!a || a.empty() || a.size() > 3)
      return op->emitError() << kGridAttr << " must be array<i64: X[, Y[, Z]]>";
    for (int64_t v : a.asArrayRef()) {
      if (v <= 0) return op->emitError() << kGridAttr << " entries must be positive";
      // The launch ABI carries 32-bit grid dimensions (TsDim3): a larger
      // value was once truncated silently by the code generators.
      if (v > int64_t{UINT32_MAX})
        return op->emitError() << kGridAttr << " entry " << v
                               << " is larger than 4294967295, the most a launch can carry (TsDim3 is 32-bit)";
    }
    return success();
  }
  if (name == kMaxSharedAttr) {
    auto a = attr.getValue().dyn_cast<IntegerAttr>();
    if (!a || a.getInt() <= 0)
      return op->emitError() << kMaxSharedAttr << " must be a positive integer";
    return success();
  }
  return op->emitError() << "unknown tessera_tile attribute '" << name << "'";
}

//===--- ids --------------------------------------------------------------===//

static LogicalResult verifyDim(Operation *op, int64_t dim) {
  if (dim < 0 || dim > 2)
    return op->emitOpError() << "dim must be 0, 1 or 2, got " << dim;
  return success();
}
LogicalResult GroupIdOp::verify() { return verifyDim(*this, getDim()); }
LogicalResult GroupCountOp::verify() { return verifyDim(*this, getDim()); }
LogicalResult LaneIdOp::verify() { return verifyDim(*this, getDim()); }
LogicalResult LaneCountOp::verify() { return verifyDim(*this, getDim()); }
LogicalResult TileIdOp::verify() { return success(); }
LogicalResult SubgroupSizeOp::verify() { return success(); }

//===--- shared memory ----------------------------------------------------===//

static int64_t byteSize(MemRefType t) {
  return t.getNumElements() *
         std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
}

LogicalResult SharedAllocOp::verify() {
  auto t = getResult().getType().cast<MemRefType>();
  if (!isSharedMemory(t))
    return emitOpError() << "result must be in shared memory (memory space "
                         << kSharedMemorySpace << "), got " << t;
  if (!t.getLayout().isIdentity())
    return emitOpError("result must have the identity layout");
  int64_t sw = getSwizzle();
  if (sw != 0 && sw != 32 && sw != 64 && sw != 128)
    return emitOpError() << "swizzle must be 0, 32, 64 or 128 bytes, got " << sw;
  const int64_t align = getAlignment(), elemBytes = (t.getElementTypeBitWidth() + 7) / 8;
  if (align != 0 && (align < elemBytes || align > 1024 || (align & (align - 1))))
    return emitOpError() << "alignment must be 0 or a power of two from the element's " << elemBytes
                         << " bytes to 1024, got " << align;
  auto fn = (*this)->getParentOfType<FunctionOpInterface>();
  if (!fn) return emitOpError("must be inside a kernel function");
  int64_t limit = kDefaultMaxSharedMemory;
  if (auto a = fn->getAttrOfType<IntegerAttr>(kMaxSharedAttr)) limit = a.getInt();
  // Cumulative size up to this allocation; only the one that crosses the
  // limit reports, so one kernel gets one error.
  int64_t before = 0;
  bool found = false;
  fn->walk([&](SharedAllocOp a) {
    if (found) return;
    if (a == *this) { found = true; return; }
    before += byteSize(a.getType().cast<MemRefType>());
  });
  int64_t after = before + byteSize(t);
  if (after > limit && before <= limit)
    return emitOpError() << "kernel needs " << after
                         << " bytes of shared memory, more than the limit of "
                         << limit << " bytes";
  return success();
}

LogicalResult BarrierOp::verify() {
  if (!(*this)->getParentOfType<FunctionOpInterface>())
    return emitOpError("must be inside a kernel function");
  return success();
}

static LogicalResult verifyIndices(Operation *op, MemRefType t, size_t n,
                                   StringRef what) {
  if (static_cast<int64_t>(n) != t.getRank())
    return op->emitOpError() << what << " needs " << t.getRank()
                             << " indices, got " << n;
  return success();
}

LogicalResult CpAsyncOp::verify() {
  auto src = getSource().getType().cast<MemRefType>();
  auto dst = getTarget().getType().cast<MemRefType>();
  if (failed(verifyIndices(*this, src, getSrcIndices().size(), "source")) ||
      failed(verifyIndices(*this, dst, getDstIndices().size(), "target")))
    return failure();
  if (src.getElementType() != dst.getElementType())
    return emitOpError("source and target element types differ");
  if (!isSharedMemory(dst)) return emitOpError("target must be shared memory");
  if (isSharedMemory(src)) return emitOpError("source must be global memory");
  int64_t bytes = getElements() * std::max<int64_t>(1, src.getElementTypeBitWidth() / 8);
  if (bytes != 4 && bytes != 8 && bytes != 16)
    return emitOpError() << "copies 4, 8 or 16 bytes per lane, got " << bytes;
  return success();
}

LogicalResult TileLoadAsyncOp::verify() {
  auto src = getSource().getType().cast<MemRefType>(), dst = getTarget().getType().cast<MemRefType>();
  if (isSharedMemory(src) || src.getRank() != 1 || !src.hasStaticShape())
    return emitOpError() << "source must be a static 1-D global buffer, not " << src;
  if (!isSharedMemory(dst) || dst.getRank() != 1 || !dst.hasStaticShape())
    return emitOpError() << "target must be a static 1-D shared buffer (space 3), not " << dst;
  if (src.getElementType() != dst.getElementType() || src.getElementTypeBitWidth() != 16)
    return emitOpError() << "copies 16-bit elements between buffers of one type; source holds "
                         << src.getElementType() << ", target " << dst.getElementType();
  const int64_t rows = getRows(), cols = getCols(), ld = getLd(), sourceRows = getSourceRows();
  if (cols != 64) return emitOpError() << "cols must be 64 (one 128-byte swizzled row), got " << cols;
  if (rows < 1 || rows > 256) return emitOpError() << "rows must be 1..256, got " << rows;
  if (ld < cols || ld % 8 || sourceRows < rows || src.getNumElements() != ld * sourceRows)
    return emitOpError() << "the source (" << src.getNumElements() << " elements) must be source_rows ("
                         << sourceRows << ") >= rows x ld (" << ld
                         << ") elements, ld a multiple of 8 (16-byte rows) no smaller than cols";
  if (dst.getNumElements() < rows * cols)
    return emitOpError() << "the target holds " << dst.getNumElements() << " elements; the box is "
                         << rows * cols;
  if (getStages() < 1) return emitOpError() << "stages must be at least 1";
  return success();
}

LogicalResult TileLoadReleaseOp::verify() {
  if (getStages() < 1) return emitOpError() << "stages must be at least 1";
  return success();
}

LogicalResult TileLoadAcquireOp::verify() {
  if (getStages() < 1) return emitOpError() << "stages must be at least 1";
  const int64_t r = getReleasers();
  if (r < 32 || r % 32 || r > 1024)
    return emitOpError() << "releasers must be a multiple of 32 (whole subgroups release a stage) in 32..1024, got "
                         << r;
  return success();
}

LogicalResult SetMaxRegistersOp::verify() {
  const int64_t r = getRegisters();
  if (r < 24 || r > 256 || r % 8) return emitOpError() << "registers must be a multiple of 8 in 24..256, got " << r;
  return success();
}

LogicalResult CpAsyncWaitOp::verify() {
  if (getPendingAttr().getInt() < 0) return emitOpError("pending must be >= 0");
  return success();
}

//===--- compute ----------------------------------------------------------===//

static bool accumulates(Type in, Type acc) {
  if (in == acc) return true;
  if ((in.isF16() || in.isBF16() || in.isFloat8E4M3FN() || in.isFloat8E5M2()) && acc.isF32())
    return true;
  return in.isInteger(8) && acc.isInteger(32);
}

LogicalResult MmaOp::verify() {
  auto a = getA().getType().cast<VectorType>();
  auto b = getB().getType().cast<VectorType>();
  auto c = getAcc().getType().cast<VectorType>();
  int64_t m = a.getDimSize(0), k = a.getDimSize(1);
  if (b.getDimSize(0) != k)
    return emitOpError() << "fragment shapes are incompatible: a is " << m << "x" << k
                         << ", b is " << b.getDimSize(0) << "x" << b.getDimSize(1)
                         << " (K differs)";
  int64_t n = b.getDimSize(1);
  if (c.getDimSize(0) != m || c.getDimSize(1) != n)
    return emitOpError() << "accumulator must be " << m << "x" << n << ", got "
                         << c.getDimSize(0) << "x" << c.getDimSize(1);
  if (a.getElementType() != b.getElementType())
    return emitOpError("a and b element types differ");
  if (!accumulates(a.getElementType(), c.getElementType()))
    return emitOpError() << c.getElementType() << " cannot accumulate "
                         << a.getElementType();
  if (getResult().getType() != c) return emitOpError("result type must be the accumulator type");
  return success();
}

/// a and b of the matrix ops: static 1-D shared buffers of `ot` or its
/// bits (i16).
static LogicalResult verifySharedOperands(Operation *op, Value a, Value b, Type ot) {
  for (auto [name, v] : {std::pair<const char *, Value>{"a", a}, {"b", b}}) {
    auto mt = v.getType().cast<MemRefType>();
    if (!isSharedMemory(mt)) return op->emitOpError() << name << " must be shared memory (space 3)";
    if (mt.getRank() != 1 || !mt.hasStaticShape())
      return op->emitOpError() << name << " must be a static 1-D buffer, not " << mt;
    Type e = mt.getElementType();
    if (e != ot && !(e.isInteger(16) && ot.getIntOrFloatBitWidth() == 16))
      return op->emitOpError() << name << " holds " << e << "; it must hold " << ot
                               << (ot.getIntOrFloatBitWidth() == 16 ? " or its bits (i16)" : "");
  }
  return success();
}

/// What subgroup_mma, wavefront_mma and wave32_mma check alike: bf16 / f16
/// operands; m and n multiples of the instruction's tile (tileM x tileN);
/// lda >= k and ldb >= n, multiples of `ldMultiple` (`why` says what for);
/// the shared operands; m*n/lanes accumulator elements per lane.
template <class Op>
LogicalResult verifyCooperativeMma(Op op, int64_t tileM, int64_t tileN, int64_t k, int64_t ldMultiple,
                                   const char *why, int64_t lanes, bool f32 = false, bool i8 = false) {
  const int64_t m = op.getM(), n = op.getN(), lda = op.getLda(), ldb = op.getLdb();
  Type ot = op.getOperandType();
  if (!ot.isBF16() && !ot.isF16() && !(f32 && ot.isF32()) && !(i8 && ot.isInteger(8)))
    return op.emitOpError() << "operand_type must be "
                            << (f32 ? "bf16, f16, f32 or i8" : i8 ? "bf16, f16 or i8" : "bf16 or f16") << ", not "
                            << ot;
  // i8 products accumulate in i32, the others in f32.
  Type accElem = op.getAcc().getType().template cast<VectorType>().getElementType();
  if (accElem != (ot.isInteger(8) ? Type(IntegerType::get(op.getContext(), 32)) : Type(Float32Type::get(op.getContext()))))
    return op.emitOpError() << (ot.isInteger(8) ? "i8 operands accumulate in i32" : "the accumulator must be f32")
                            << ", not " << accElem;
  if (m <= 0 || n <= 0 || m % tileM || n % tileN) {
    if (tileM == tileN)
      return op.emitOpError() << "m and n must be positive multiples of " << tileM << ", got m = " << m
                              << ", n = " << n;
    return op.emitOpError() << "m must be a positive multiple of " << tileM << " and n of " << tileN
                            << ", got m = " << m << ", n = " << n;
  }
  if (lda < k || ldb < n || lda % ldMultiple || ldb % ldMultiple)
    return op.emitOpError() << "lda (" << lda << ") must be >= " << k << " and ldb (" << ldb << ") >= n (" << n
                            << "), both multiples of " << ldMultiple << " (" << why << ")";
  if (failed(verifySharedOperands(op, op.getA(), op.getB(), ot))) return failure();
  const int64_t elems = m * n / lanes;
  const int64_t have = op.getAcc().getType().template cast<VectorType>().getNumElements();
  if (have != elems)
    return op.emitOpError() << "a " << m << "x" << n << " tile is " << elems << (ot.isInteger(8) ? " i32" : " f32")
                            << " per lane, the accumulator has " << have;
  return success();
}

LogicalResult SubgroupMmaOp::verify() {
  return verifyCooperativeMma(*this, 16, 8, 16, 8, "rows of 16 bytes", 32, /*f32=*/false, /*i8=*/true);
}

LogicalResult WavefrontMmaOp::verify() {
  // i8 steps are 16 deep (a lane still reads 8 bytes of a row per
  // instruction), the others 8.
  const int64_t depth = getOperandType().isInteger(8) ? 16 : 8;
  return verifyCooperativeMma(*this, 32, 32, depth, 4, "a lane reads 8 bytes of a row", 64, /*f32=*/true, /*i8=*/true);
}

LogicalResult Wave32MmaOp::verify() {
  return verifyCooperativeMma(*this, 16, 16, 16, 8, "rows of 16 bytes", 32, /*f32=*/false, /*i8=*/true);
}

LogicalResult WarpgroupMmaOp::verify() {
  const int64_t n = getN(), k = getK(), stride = getBBlockStride();
  Type ot = getOperandType();
  if (!ot.isBF16() && !ot.isF16()) return emitOpError() << "operand_type must be bf16 or f16, not " << ot;
  if (n <= 0 || n > 256 || n % 64) return emitOpError() << "n must be 64, 128, 192 or 256, got " << n;
  if (k <= 0 || k > 64 || k % 16) return emitOpError() << "k must be 16, 32, 48 or 64, got " << k;
  if (stride < 64 * k || stride % 512)
    return emitOpError() << "b_block_stride (" << stride << ") must be a multiple of 512 (1024 bytes) "
                         << "and at least 64*k = " << 64 * k << " (a block of k rows of 64 columns)";
  if (failed(verifySharedOperands(*this, getA(), getB(), ot))) return failure();
  if (getPending() > 7)
    return emitOpError() << "pending must be 0..7 (wgmma groups in flight), got " << getPending();
  const int64_t elems = n / 2;
  if (getAcc().getType().cast<VectorType>().getNumElements() != elems)
    return emitOpError() << "a 64x" << n << " tile is " << elems << " f32 per lane, the accumulator has "
                         << getAcc().getType().cast<VectorType>().getNumElements();
  return success();
}

LogicalResult WarpgroupMmaWaitOp::verify() {
  if (getPending() > 7)
    return emitOpError() << "pending must be 0..7 (wgmma groups in flight), got " << getPending();
  return success();
}

LogicalResult DotOp::verify() {
  auto a = getA().getType().cast<VectorType>();
  if (getB().getType() != a) return emitOpError("a and b must have the same type");
  if (!accumulates(a.getElementType(), getAcc().getType()))
    return emitOpError() << getAcc().getType() << " cannot accumulate "
                         << a.getElementType();
  if (getResult().getType() != getAcc().getType())
    return emitOpError("result type must be the accumulator type");
  return success();
}

LogicalResult ShuffleOp::verify() {
  if (getResult().getType() != getValue().getType())
    return emitOpError("result type must equal the value type");
  return success();
}

LogicalResult SubgroupReduceOp::verify() {
  if (getResult().getType() != getValue().getType())
    return emitOpError("result type must equal the value type");
  return success();
}

// The most elements one lane's tessera_tile.load / store moves: the GPU
// lowerings unroll a lane vector into scalars and registers, so a
// vector<1048576xf32> ran a compile for minutes and gigabytes.  Kernels use
// 4 to 64.
static constexpr int64_t kMaxLaneVectorElements = 1024;

static LogicalResult verifyLaneVector(Operation *op, VectorType v) {
  if (v.getNumElements() > kMaxLaneVectorElements)
    return op->emitOpError() << "moves a " << v << " per lane; a lane moves at most "
                             << kMaxLaneVectorElements
                             << " elements at once (split it into several loads or stores, or spread it over lanes)";
  return success();
}

LogicalResult LoadOp::verify() {
  auto t = getMemref().getType().cast<MemRefType>();
  auto v = getResult().getType().cast<VectorType>();
  if (failed(verifyIndices(*this, t, getIndices().size(), "memref")) || failed(verifyLaneVector(*this, v)))
    return failure();
  if (v.getElementType() != t.getElementType())
    return emitOpError() << "vector element type " << v.getElementType()
                         << " differs from memref element type " << t.getElementType();
  return success();
}

LogicalResult StoreOp::verify() {
  auto t = getMemref().getType().cast<MemRefType>();
  auto v = getValue().getType().cast<VectorType>();
  if (failed(verifyIndices(*this, t, getIndices().size(), "memref")) || failed(verifyLaneVector(*this, v)))
    return failure();
  if (v.getElementType() != t.getElementType())
    return emitOpError() << "vector element type " << v.getElementType()
                         << " differs from memref element type " << t.getElementType();
  return success();
}

LogicalResult AtomicRMWOp::verify() {
  auto t = getMemref().getType().cast<MemRefType>();
  if (failed(verifyIndices(*this, t, getIndices().size(), "memref")))
    return failure();
  if (getValue().getType() != t.getElementType() ||
      getResult().getType() != t.getElementType())
    return emitOpError() << "value and result must have the element type "
                         << t.getElementType();
  return success();
}

LogicalResult MathOp::verify() {
  size_t arity = 1;
  switch (getFn()) {
  case MathFn::max:
  case MathFn::min: arity = 2; break;
  case MathFn::fma: arity = 3; break;
  default: break;
  }
  if (getOperands().size() != arity)
    return emitOpError() << stringifyMathFn(getFn()) << " takes " << arity
                         << " operand(s), got " << getOperands().size();
  for (Value v : getOperands())
    if (v.getType() != getResult().getType())
      return emitOpError("operands must have the result type");
  return success();
}

// `tessera_tile.math fn(%a, ...) : type` (every operand has the result type).
ParseResult MathOp::parse(OpAsmParser &p, OperationState &state) {
  StringRef kw;
  SMLoc loc = p.getCurrentLocation();
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  Type type;
  if (p.parseKeyword(&kw)) return failure();
  std::optional<MathFn> fn = symbolizeMathFn(kw);
  if (!fn) return p.emitError(loc) << "unknown math function '" << kw << "'";
  state.addAttribute("fn", MathFnAttr::get(p.getContext(), *fn));
  if (p.parseOperandList(operands, OpAsmParser::Delimiter::Paren) ||
      p.parseOptionalAttrDict(state.attributes) || p.parseColonType(type) ||
      p.resolveOperands(operands, type, state.operands))
    return failure();
  state.addTypes(type);
  return success();
}

void MathOp::print(OpAsmPrinter &p) {
  p << " " << stringifyMathFn(getFn()) << "(" << getOperands() << ")";
  p.printOptionalAttrDict((*this)->getAttrs(), {"fn"});
  p << " : " << getResult().getType();
}
