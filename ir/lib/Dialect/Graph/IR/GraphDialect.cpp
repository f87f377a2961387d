//===- GraphDialect.cpp - Tessera Graph IR --------------------------------===//
//
// The dialect, LayoutSpec / ShardSpec attributes and the op verifiers.
//
//===----------------------------------------------------------------------===//
#include "tessera/Dialect/Graph/IR/Graph.h"

#include <cmath>


#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/FunctionInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tessera::graph;

std::optional<SmallVector<int64_t>> tessera::graph::broadcastShape(ArrayRef<int64_t> a,
                                                                   ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {  // k-th dim from the end
    int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1, y = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[rank - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

Type tessera::graph::broadcastType(Type lhs, Type rhs) {
  auto l = lhs.dyn_cast<RankedTensorType>(), r = rhs.dyn_cast<RankedTensorType>();
  if (!l || !r) return {};
  std::optional<SmallVector<int64_t>> shape = broadcastShape(l.getShape(), r.getShape());
  if (!shape) return {};
  if (ArrayRef<int64_t>(*shape) == l.getShape()) return l;
  return RankedTensorType::get(*shape, l.getElementType());
}

Type tessera::graph::compareType(Type lhs, Type rhs) {
  auto l = lhs.dyn_cast<RankedTensorType>(), r = rhs.dyn_cast<RankedTensorType>();
  if (!l || !r) return {};
  std::optional<SmallVector<int64_t>> shape = broadcastShape(l.getShape(), r.getShape());
  if (!shape) return {};
  return RankedTensorType::get(*shape, IntegerType::get(lhs.getContext(), 1));
}

Type tessera::graph::selectType(Type cond, Type a, Type b) {
  auto c = cond.dyn_cast<RankedTensorType>(), x = a.dyn_cast<RankedTensorType>(), y = b.dyn_cast<RankedTensorType>();
  if (!c || !x || !y) return {};
  std::optional<SmallVector<int64_t>> cx = broadcastShape(c.getShape(), x.getShape());
  if (!cx) return {};
  std::optional<SmallVector<int64_t>> shape = broadcastShape(*cx, y.getShape());
  if (!shape) return {};
  if (ArrayRef<int64_t>(*shape) == x.getShape()) return x;
  return RankedTensorType::get(*shape, x.getElementType());
}

int64_t tessera::graph::broadcastOffset(ArrayRef<int64_t> operand, ArrayRef<int64_t> result, int64_t flat) {
  int64_t off = 0, stride = 1;
  for (size_t k = 0; k < result.size(); ++k) {  // from the last dim
    int64_t n = result[result.size() - 1 - k], i = flat % n;
    flat /= n;
    if (k >= operand.size()) break;
    int64_t m = operand[operand.size() - 1 - k];
    if (m != 1) off += i * stride;
    stride *= m;
  }
  return off;
}

// `-> type` after a binary op's operand types when its result is not the lhs
// type (a broadcast lhs); omitted, the result is the broadcast of both.
static ParseResult parseBroadcastResult(OpAsmParser &p, Type &result, Type lhs, Type rhs) {
  if (succeeded(p.parseOptionalArrow())) return p.parseType(result);
  result = broadcastType(lhs, rhs);
  if (!result)
    return p.emitError(p.getNameLoc())
           << "operand shapes " << lhs << " and " << rhs
           << " do not broadcast (numpy rules: aligned at the last dim, each pair equal or 1)";
  return success();
}
static void printBroadcastResult(OpAsmPrinter &p, Operation *, Type result, Type lhs, Type) {
  if (result != lhs) p << " -> " << result;
}

// `-> type` after select's operand types when its result is not the type
// of `a`; omitted, the broadcast of the three shapes with a's element type.
static ParseResult parseSelectResult(OpAsmParser &p, Type &result, Type cond, Type a, Type b) {
  if (succeeded(p.parseOptionalArrow())) return p.parseType(result);
  result = selectType(cond, a, b);
  if (!result)
    return p.emitError(p.getNameLoc())
           << "operand shapes " << cond << ", " << a << " and " << b
           << " do not broadcast (numpy rules: aligned at the last dim, each dim equal or 1)";
  return success();
}
static void printSelectResult(OpAsmPrinter &p, Operation *, Type result, Type, Type a, Type) {
  if (result != a) p << " -> " << result;
}

#include "tessera/Dialect/Graph/IR/GraphOpsDialect.cpp.inc"
#include "tessera/Dialect/Graph/IR/GraphOpsEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "tessera/Dialect/Graph/IR/GraphOpsAttrs.cpp.inc"
#define GET_OP_CLASSES
#include "tessera/Dialect/Graph/IR/GraphOps.cpp.inc"

void GraphDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessera/Dialect/Graph/IR/GraphOpsAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tessera/Dialect/Graph/IR/GraphOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

static const char *layoutKeyword(LayoutKind k) {
  switch (k) {
  case LayoutKind::RowMajor: return "row_major";
  case LayoutKind::ColMajor: return "col_major";
  case LayoutKind::Blocked: return "blocked";
  case LayoutKind::Tiled: return "tiled";
  case LayoutKind::Interleaved: return "interleaved";
  }
  return "?";
}

Attribute LayoutAttr::parse(AsmParser &p, Type) {
  StringRef kw;
  SmallVector<int64_t> block, micro;
  int64_t factor = 0;
  LayoutKind kind;
  auto parseInts = [&](SmallVectorImpl<int64_t> &out) {
    return p.parseCommaSeparatedList([&]() -> ParseResult {
      int64_t v;
      if (p.parseInteger(v)) return failure();
      out.push_back(v);
      return success();
    });
  };
  if (p.parseLess() || p.parseKeyword(&kw)) return {};
  if (kw == "row_major") {
    kind = LayoutKind::RowMajor;
  } else if (kw == "col_major") {
    kind = LayoutKind::ColMajor;
  } else if (kw == "blocked") {
    kind = LayoutKind::Blocked;
    if (p.parseLess() || parseInts(block) || p.parseGreater()) return {};
  } else if (kw == "tiled") {
    kind = LayoutKind::Tiled;
    if (p.parseLess() || p.parseLSquare() || parseInts(block) ||
        p.parseRSquare() || p.parseComma() || p.parseLSquare() ||
        parseInts(micro) || p.parseRSquare() || p.parseGreater())
      return {};
  } else if (kw == "interleaved") {
    kind = LayoutKind::Interleaved;
    if (p.parseLess() || p.parseInteger(factor) || p.parseGreater()) return {};
  } else {
    p.emitError(p.getCurrentLocation(), "unknown layout '")
        << kw << "' (expected row_major, col_major, blocked, tiled or interleaved)";
    return {};
  }
  if (p.parseGreater()) return {};
  return getChecked([&] { return p.emitError(p.getNameLoc()); },
                    p.getContext(), kind, block, micro, factor);
}

void LayoutAttr::print(AsmPrinter &p) const {
  p << "<" << layoutKeyword(getKind());
  switch (getKind()) {
  case LayoutKind::Blocked:
    p << "<";
    llvm::interleaveComma(getBlock(), p);
    p << ">";
    break;
  case LayoutKind::Tiled:
    p << "<[";
    llvm::interleaveComma(getBlock(), p);
    p << "], [";
    llvm::interleaveComma(getMicro(), p);
    p << "]>";
    break;
  case LayoutKind::Interleaved:
    p << "<" << getFactor() << ">";
    break;
  default:
    break;
  }
  p << ">";
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 LayoutKind kind, ArrayRef<int64_t> block,
                                 ArrayRef<int64_t> micro, int64_t factor) {
  for (int64_t v : llvm::concat<const int64_t>(block, micro))
    if (v <= 0) return emitError() << "layout block sizes must be positive";
  if (kind == LayoutKind::Blocked && (block.size() < 2 || block.size() > 3))
    return emitError() << "blocked layout takes <BM, BN[, BK]>";
  if (kind == LayoutKind::Tiled) {
    if (block.size() != 2 || micro.size() != 2)
      return emitError() << "tiled layout takes <[TM, TN], [UM, UN]>";
    if (block[0] % micro[0] || block[1] % micro[1])
      return emitError() << "tiled layout: micro tile [" << micro[0] << ", "
                         << micro[1] << "] does not divide macro tile ["
                         << block[0] << ", " << block[1] << "]";
  }
  if (kind == LayoutKind::Interleaved && factor <= 0)
    return emitError() << "interleaved layout factor must be positive";
  return success();
}

LogicalResult LayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (isRowMajor()) return success();
  if (shape.size() < 2)
    return emitError() << "layout " << layoutKeyword(getKind())
                       << " needs a tensor of rank 2 or more";
  int64_t m = shape[shape.size() - 2], n = shape.back();
  auto divides = [&](int64_t b, int64_t d) {
    return ShapedType::isDynamic(d) || d % b == 0;
  };
  ArrayRef<int64_t> b = getBlock();
  switch (getKind()) {
  case LayoutKind::Blocked:
  case LayoutKind::Tiled:
    if (!divides(b[0], m) || !divides(b[1], n))
      return emitError() << "layout " << layoutKeyword(getKind()) << " block ["
                         << b[0] << ", " << b[1] << "] does not divide the shape ["
                         << m << ", " << n << "]";
    break;
  case LayoutKind::Interleaved:
    if (!divides(getFactor(), m))
      return emitError() << "interleaved layout factor " << getFactor()
                         << " does not divide dimension " << m;
    break;
  default:
    break;
  }
  return success();
}

int64_t LayoutAttr::offset(int64_t i, int64_t j, int64_t M, int64_t N) const {
  ArrayRef<int64_t> b = getBlock();
  switch (getKind()) {
  case LayoutKind::RowMajor: return i * N + j;
  case LayoutKind::ColMajor: return j * M + i;
  case LayoutKind::Blocked:
    return ((i / b[0]) * (N / b[1]) + j / b[1]) * b[0] * b[1] +
           (i % b[0]) * b[1] + j % b[1];
  case LayoutKind::Tiled: {
    ArrayRef<int64_t> u = getMicro();
    int64_t macro = ((i / b[0]) * (N / b[1]) + j / b[1]) * b[0] * b[1];
    int64_t ii = i % b[0], jj = j % b[1];
    int64_t microBlock = ((ii / u[0]) * (b[1] / u[1]) + jj / u[1]) * u[0] * u[1];
    return macro + microBlock + (ii % u[0]) * u[1] + jj % u[1];
  }
  case LayoutKind::Interleaved: {
    int64_t f = getFactor();
    return ((i / f) * N + j) * f + i % f;
  }
  }
  return 0;
}

LayoutAttr tessera::graph::getLayout(Type type) {
  if (auto t = type.dyn_cast<RankedTensorType>())
    return t.getEncoding().dyn_cast_or_null<LayoutAttr>();
  return {};
}

static bool sameLayout(Type a, Type b) {
  LayoutAttr la = getLayout(a), lb = getLayout(b);
  bool ra = !la || la.isRowMajor(), rb = !lb || lb.isRowMajor();
  if (ra || rb) return ra == rb;
  return la == lb;
}

//===----------------------------------------------------------------------===//
// Meshes and shardings
//===----------------------------------------------------------------------===//

int64_t MeshOp::axisSize(StringRef axis) {
  for (auto [i, a] : llvm::enumerate(getAxes()))
    if (a.cast<StringAttr>().getValue() == axis) return getShape()[i];
  return -1;
}

LogicalResult MeshOp::verify() {
  if (getAxes().size() != getShape().size())
    return emitOpError() << "has " << getAxes().size() << " axes but "
                         << getShape().size() << " sizes";
  llvm::StringSet<> seen;
  for (Attribute a : getAxes()) {
    StringRef name = a.cast<StringAttr>().getValue();
    if (name.empty()) return emitOpError("axis names must not be empty");
    if (!seen.insert(name).second)
      return emitOpError() << "axis '" << name << "' appears twice";
  }
  // Positive, and devices countable: the passes multiply the sizes (ranks,
  // groups), so a product past int32 is an error here, not an overflow there.
  int64_t devices = 1;
  for (int64_t s : getShape()) {
    if (s <= 0) return emitOpError("axis sizes must be positive");
    if (__builtin_mul_overflow(devices, s, &devices) || devices > INT32_MAX)
      return emitOpError() << "has more than " << INT32_MAX
                           << " devices (the product of its axis sizes)";
  }
  return success();
}

/// Finds the mesh `sym` from `from`; emits an error naming it if absent.
static MeshOp lookupMesh(Operation *from, FlatSymbolRefAttr sym,
                         function_ref<InFlightDiagnostic()> emitError) {
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, sym.getAttr());
  if (!mesh) emitError() << "mesh " << sym << " does not exist";
  return mesh;
}

static LogicalResult verifyAxes(Operation *from, FlatSymbolRefAttr meshSym,
                                ArrayRef<Attribute> axes, int64_t *ranks,
                                function_ref<InFlightDiagnostic()> emitError) {
  MeshOp mesh = lookupMesh(from, meshSym, emitError);
  if (!mesh) return failure();
  int64_t n = 1;
  for (Attribute a : axes) {
    auto s = a.dyn_cast<StringAttr>();
    if (!s) return emitError() << "mesh axes must be strings";
    if (s.getValue().empty()) continue;
    int64_t size = mesh.axisSize(s.getValue());
    if (size < 0)
      return emitError() << "mesh " << meshSym << " has no axis '"
                         << s.getValue() << "'";
    n *= size;
  }
  if (ranks) *ranks = n;
  return success();
}

SmallVector<StringRef> ShardAttr::getDimAxes(unsigned d) const {
  SmallVector<StringRef> out;
  if (d >= getDims().size()) return out;
  Attribute entry = getDims()[d];
  if (auto s = entry.dyn_cast<StringAttr>()) {
    if (!s.getValue().empty()) out.push_back(s.getValue());
  } else if (auto list = entry.dyn_cast<ArrayAttr>()) {
    for (Attribute a : list)
      if (auto s = a.dyn_cast<StringAttr>(); s && !s.getValue().empty())
        out.push_back(s.getValue());
  }
  return out;
}

static LogicalResult verifyShard(Operation *op, ShardAttr shard, Type type,
                                 function_ref<InFlightDiagnostic()> emitError) {
  // A dims entry is an axis name, "" or a list of axis names (a dim split
  // over several axes); the checks below read them flattened.
  SmallVector<Attribute> all;
  for (auto [d, entry] : llvm::enumerate(shard.getDims())) {
    if (entry.isa<StringAttr>()) {
      all.push_back(entry);
      continue;
    }
    auto list = entry.dyn_cast<ArrayAttr>();
    if (!list)
      return emitError() << "sharding dims entry " << d << " must be an axis name, \"\" or a list of "
                            "axis names (a dim split over several axes), not "
                         << entry;
    for (Attribute a : list) {
      auto s = a.dyn_cast<StringAttr>();
      if (!s || s.getValue().empty())
        return emitError() << "sharding dims entry " << d << " lists " << a
                           << ": each element of a list must be a mesh axis name";
      all.push_back(a);
    }
  }
  llvm::append_range(all, shard.getReplicate().getValue());
  llvm::append_range(all, shard.getReduce().getValue());
  if (failed(verifyAxes(op, shard.getMesh(), all, nullptr, emitError)))
    return failure();
  // An axis partitions one dim, replicates or reduces: never two of these.
  llvm::StringSet<> seen;
  for (Attribute a : all) {
    StringRef name = a.cast<StringAttr>().getValue();
    if (!name.empty() && !seen.insert(name).second)
      return emitError() << "sharding uses mesh axis '" << name
                         << "' twice: an axis partitions one dim, replicates or reduces";
  }
  if (auto t = type.dyn_cast_or_null<RankedTensorType>())
    if (t.getRank() != static_cast<int64_t>(shard.getDims().size()))
      return emitError() << "sharding has " << shard.getDims().size()
                         << " dims entries for a tensor of rank " << t.getRank();
  return success();
}

LogicalResult GraphDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  auto shard = attr.getValue().dyn_cast<ShardAttr>();
  if (attr.getName() != "tessera_graph.sharding" || !shard)
    return op->emitError() << "unknown tessera_graph attribute '"
                           << attr.getName().getValue()
                           << "' (expected tessera_graph.sharding = #tessera_graph.shard<...>)";
  Type t = op->getNumResults() == 1 ? op->getResult(0).getType() : Type();
  return verifyShard(op, shard, t, [&] { return op->emitOpError(); });
}

LogicalResult GraphDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  auto shard = attr.getValue().dyn_cast<ShardAttr>();
  if (attr.getName() != "tessera_graph.sharding" || !shard)
    return op->emitError() << "unknown tessera_graph argument attribute '"
                           << attr.getName().getValue() << "'";
  // The attribute is verified before the entry block is checked against the
  // signature: the block may have fewer arguments than the function type
  // (found by fuzz/ir_fuzzer.cpp).
  Type t;
  if (op->getNumRegions() && !op->getRegion(0).empty() &&
      argIndex < op->getRegion(0).getNumArguments())
    t = op->getRegion(0).getArgument(argIndex).getType();
  return verifyShard(op, shard, t, [&] {
    return op->emitOpError() << "argument " << argIndex << ": ";
  });
}

LogicalResult GraphDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  auto shard = attr.getValue().dyn_cast<ShardAttr>();
  if (attr.getName() != "tessera_graph.sharding" || !shard)
    return op->emitError() << "unknown tessera_graph result attribute '"
                           << attr.getName().getValue() << "'";
  Type t;
  if (auto fn = dyn_cast<FunctionOpInterface>(op))
    t = fn.getResultTypes()[resultIndex];
  return verifyShard(op, shard, t, [&] {
    return op->emitOpError() << "result " << resultIndex << ": ";
  });
}

//===----------------------------------------------------------------------===//
// Op verifiers
//===----------------------------------------------------------------------===//

static bool isI1(Type t) { return getElementTypeOrSelf(t).isInteger(1); }

/// i1 is a truth value (compare's result, select's condition): the ops that
/// compute with numbers refuse it, naming what to write instead.
static LogicalResult rejectI1(Operation *op, StringRef instead) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types)
    if (isI1(t))
      return op->emitOpError() << "does not take i1 tensors (" << instead << "), got " << t;
  return success();
}
static constexpr const char *kI1Arith = "i1 is a truth value: use select, or cast it to a number type first";

static bool isNarrowFloat(Type t) {
  return t.isF16() || t.isBF16() || t.isFloat8E4M3FN() || t.isFloat8E5M2();
}

// `accum = T` (a numerics policy): a float type for float operands, an
// integer type for integer ones.  Whether a backend honours it is decided
// at compile time (tessera::graph::checkAccumPolicies).
static LogicalResult verifyAccumPolicy(Operation *op, std::optional<Type> accum, Type operand) {
  if (!accum) return success();
  Type t = *accum;
  bool fl = operand.isa<FloatType>();
  if (fl ? !t.isa<FloatType>() : !t.isSignlessInteger())
    return op->emitOpError() << "accum = " << typeText(t) << " for " << operand << " operands: the accumulator of "
                             << (fl ? "a float" : "an integer") << " computation must be "
                             << (fl ? "a float type (accum = f32)" : "a signless integer type (accum = i32)");
  return success();
}

LogicalResult MatmulOp::verify() {
  if (failed(rejectI1(*this, "cast i1 to a number type first"))) return failure();
  auto a = getLhs().getType().cast<RankedTensorType>();
  auto b = getRhs().getType().cast<RankedTensorType>();
  auto c = getResult().getType().cast<RankedTensorType>();
  if (a.getRank() < 2 || b.getRank() != a.getRank() || c.getRank() != a.getRank())
    return emitOpError() << "operands and result must have the same rank >= 2, got "
                         << a.getRank() << ", " << b.getRank() << " and " << c.getRank();
  int64_t r = a.getRank();
  auto sa = a.getShape(), sb = b.getShape(), sc = c.getShape();
  for (int64_t i = 0; i < r - 2; ++i)
    if (sa[i] != sb[i] || sa[i] != sc[i])
      return emitOpError() << "batch dimension " << i << " differs: " << sa[i]
                           << ", " << sb[i] << ", " << sc[i];
  if (sa[r - 1] != sb[r - 2])
    return emitOpError() << "contraction dimensions differ: lhs has K = "
                         << sa[r - 1] << ", rhs has K = " << sb[r - 2];
  if (sc[r - 2] != sa[r - 2] || sc[r - 1] != sb[r - 1])
    return emitOpError() << "result shape must be [" << sa[r - 2] << ", "
                         << sb[r - 1] << "], got [" << sc[r - 2] << ", "
                         << sc[r - 1] << "]";
  Type ea = a.getElementType(), eb = b.getElementType(), ec = c.getElementType();
  // fp8 operands may differ (e4m3 activations or weights times e5m2
  // gradients, as fp8 training multiplies them).
  const bool fp8Pair = (ea.isFloat8E4M3FN() || ea.isFloat8E5M2()) && (eb.isFloat8E4M3FN() || eb.isFloat8E5M2());
  if (ea != eb && !fp8Pair)
    return emitOpError() << "operand element types differ: " << ea << " and " << eb
                         << " (only fp8 operands may mix: f8E4M3FN with f8E5M2)";
  bool ok = ec == ea || (isNarrowFloat(ea) && ec.isF32()) ||
            (ea.isInteger(8) && ec.isInteger(32));
  if (!ok)
    return emitOpError() << "result element type " << ec
                         << " cannot accumulate " << ea;
  if ((ea.isFloat8E4M3FN() || ea.isFloat8E5M2()) && !ec.isF32())
    return emitOpError("fp8 is a storage type: accumulate in f32");
  return verifyAccumPolicy(*this, getAccum(), ea);
}

static LogicalResult verifyBinary(Operation *op) {
  if (failed(rejectI1(op, kI1Arith))) return failure();
  auto l = op->getOperand(0).getType().cast<RankedTensorType>();
  auto r = op->getOperand(1).getType().cast<RankedTensorType>();
  auto res = op->getResult(0).getType().cast<RankedTensorType>();
  if (l.getElementType() != r.getElementType())
    return op->emitOpError() << "element types differ: " << l.getElementType()
                             << " and " << r.getElementType();
  std::optional<SmallVector<int64_t>> shape = broadcastShape(l.getShape(), r.getShape());
  if (!shape)
    return op->emitOpError() << "operand shapes " << l << " and " << r
                             << " do not broadcast (numpy rules: aligned at the last dim, "
                                "each pair of dims equal or one of them 1)";
  if (res.getShape() != ArrayRef<int64_t>(*shape) || res.getElementType() != l.getElementType())
    return op->emitOpError() << "result type " << res << " must be "
                             << RankedTensorType::get(*shape, l.getElementType(), res.getEncoding())
                             << " (the broadcast of the operands)";
  if (l.getShape() == res.getShape()) {
    if (!sameLayout(l, res))
      return op->emitOpError() << "result layout must be the lhs layout: " << l;
  } else if (!isRowMajor(l) || !isRowMajor(res)) {
    return op->emitOpError() << "a broadcast lhs and its result must be row-major";
  }
  if (r.getShape() != res.getShape() && !isRowMajor(r))
    return op->emitOpError() << "a broadcast rhs must be row-major";
  return success();
}
LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult MaxOp::verify() { return verifyBinary(*this); }
LogicalResult MinOp::verify() { return verifyBinary(*this); }

static LogicalResult verifyFloatOnly(Operation *op) {
  Type e = op->getOperand(0).getType().cast<RankedTensorType>().getElementType();
  if (!e.isa<FloatType>())
    return op->emitOpError() << "needs a floating-point tensor, got " << e;
  return success();
}
LogicalResult PowOp::verify() {
  if (failed(verifyBinary(*this))) return failure();
  return verifyFloatOnly(*this);
}
LogicalResult ExpOp::verify() { return verifyFloatOnly(*this); }
LogicalResult GeluOp::verify() {
  if (getApproximate() != "tanh" && getApproximate() != "none")
    return emitOpError() << "approximate must be \"tanh\" or \"none\" (exact), got \""
                         << getApproximate() << "\"";
  return verifyFloatOnly(*this);
}
LogicalResult ReluOp::verify() { return rejectI1(*this, kI1Arith); }
LogicalResult NegOp::verify() { return rejectI1(*this, kI1Arith); }
LogicalResult AbsOp::verify() { return rejectI1(*this, kI1Arith); }

/// Row-major operands and result (compare, select: the builders infer
/// row-major results).
static LogicalResult verifyAllRowMajor(Operation *op) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types)
    if (!isRowMajor(t)) return op->emitOpError() << "needs row-major tensors (insert a convert_layout), got " << t;
  return success();
}

LogicalResult CompareOp::verify() {
  auto l = getLhs().getType().cast<RankedTensorType>(), r = getRhs().getType().cast<RankedTensorType>();
  auto res = getResult().getType().cast<RankedTensorType>();
  if (l.getElementType() != r.getElementType())
    return emitOpError() << "element types differ: " << l.getElementType() << " and " << r.getElementType();
  std::optional<SmallVector<int64_t>> shape = broadcastShape(l.getShape(), r.getShape());
  if (!shape)
    return emitOpError() << "operand shapes " << l << " and " << r
                         << " do not broadcast (numpy rules: aligned at the last dim, "
                            "each pair of dims equal or one of them 1)";
  auto want = RankedTensorType::get(*shape, IntegerType::get(getContext(), 1));
  if (res.getShape() != want.getShape() || !res.getElementType().isInteger(1))
    return emitOpError() << "result type " << res << " must be " << want
                         << " (the broadcast of the operands, i1)";
  if (isI1(l) && getPredicate() != ComparePredicate::eq && getPredicate() != ComparePredicate::ne)
    return emitOpError() << "compares i1 values with eq or ne only, got " << stringifyComparePredicate(getPredicate());
  return verifyAllRowMajor(*this);
}

LogicalResult SelectOp::verify() {
  auto c = getCond().getType().cast<RankedTensorType>(), a = getA().getType().cast<RankedTensorType>(),
       b = getB().getType().cast<RankedTensorType>(), res = getResult().getType().cast<RankedTensorType>();
  if (!c.getElementType().isInteger(1))
    return emitOpError() << "condition must be an i1 tensor (a compare result), got " << c;
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "element types of the two choices differ: " << a.getElementType() << " and "
                         << b.getElementType();
  Type want = selectType(c, a, b);
  if (!want)
    return emitOpError() << "operand shapes " << c << ", " << a << " and " << b
                         << " do not broadcast (numpy rules: aligned at the last dim, "
                            "each dim equal or 1)";
  auto w = want.cast<RankedTensorType>();
  if (res.getShape() != w.getShape() || res.getElementType() != w.getElementType())
    return emitOpError() << "result type " << res << " must be "
                         << RankedTensorType::get(w.getShape(), w.getElementType())
                         << " (the broadcast of the operands, the choices' element type)";
  return verifyAllRowMajor(*this);
}
LogicalResult SqrtOp::verify() { return verifyFloatOnly(*this); }
LogicalResult RsqrtOp::verify() { return verifyFloatOnly(*this); }
LogicalResult LogOp::verify() { return verifyFloatOnly(*this); }
LogicalResult TanhOp::verify() { return verifyFloatOnly(*this); }
LogicalResult SigmoidOp::verify() { return verifyFloatOnly(*this); }
LogicalResult ErfOp::verify() { return verifyFloatOnly(*this); }
LogicalResult SiluOp::verify() { return verifyFloatOnly(*this); }

LogicalResult CastOp::verify() {
  auto a = getInput().getType().cast<RankedTensorType>();
  auto b = getResult().getType().cast<RankedTensorType>();
  if (a.getShape() != b.getShape())
    return emitOpError("cast cannot change the shape");
  if (!sameLayout(a, b))
    return emitOpError("cast cannot change the layout (use convert_layout)");
  if (getRounding() && *getRounding() != "stochastic" && *getRounding() != "nearest_even")
    return emitOpError() << "rounding = \"" << *getRounding()
                         << "\": write \"nearest_even\" (the default) or \"stochastic\"";
  if (isStochastic()) {
    Type ea = a.getElementType(), eb = b.getElementType();
    if (!ea.isF32() || !(eb.isBF16() || eb.isF16() || eb.isFloat8E4M3FN() || eb.isFloat8E5M2()))
      return emitOpError() << "stochastic rounding narrows f32 to bf16, f16, f8E4M3FN or f8E5M2, not " << ea << " to "
                           << eb;
    if (!getSeed())
      return emitOpError("stochastic rounding needs a seed (seed = S): the result is reproducible for a given seed");
    if (a.getEncoding())
      return emitOpError("stochastic rounding keys its random bits by the row-major element index: "
                         "cast a row-major tensor (convert_layout first)");
  } else if (getSeed()) {
    return emitOpError("seed applies to rounding = \"stochastic\" only");
  }
  // The global index of an SPMD part: all of position, global_strides,
  // mesh_shape and mesh_offsets, or none.
  const bool global = getPosition() || getGlobalStrides() || getMeshShape() || getMeshOffsets();
  if (!global) return success();
  if (!isStochastic())
    return emitOpError("a mesh position and global strides key stochastic rounding's random bits: they apply to "
                       "rounding = \"stochastic\" only");
  if (!getPosition() || !getGlobalStrides() || !getMeshShape() || !getMeshOffsets())
    return emitOpError("an SPMD part's global index needs the device's position (an operand from "
                       "tessera_graph.mesh_position) and global_strides, mesh_shape and mesh_offsets together");
  auto pos = getPosition().getType().cast<RankedTensorType>();
  if (pos.getShape() != ArrayRef<int64_t>{1} || !pos.getElementType().isInteger(32))
    return emitOpError() << "the mesh position must be a tensor<1xi32> (tessera_graph.mesh_position), not " << pos;
  if (static_cast<int64_t>(getGlobalStrides()->size()) != a.getRank())
    return emitOpError() << "global_strides has " << getGlobalStrides()->size() << " entries for a rank-" << a.getRank()
                         << " tensor: give one per dim";
  if (getMeshShape()->size() != getMeshOffsets()->size() || getMeshShape()->empty())
    return emitOpError() << "mesh_shape and mesh_offsets need one entry per mesh axis (" << getMeshShape()->size()
                         << " and " << getMeshOffsets()->size() << ")";
  // (Copies of the ArrayRefs: a range over *getMeshShape() would outlive
  // the optional that holds it.)
  ArrayRef<int64_t> meshShape = *getMeshShape(), strides = *getGlobalStrides(), offsets = *getMeshOffsets();
  if (llvm::any_of(meshShape, [](int64_t s) { return s <= 0; }))
    return emitOpError("mesh_shape entries must be positive");
  if (llvm::any_of(strides, [](int64_t s) { return s < 0; }) || llvm::any_of(offsets, [](int64_t s) { return s < 0; }))
    return emitOpError("global_strides and mesh_offsets must not be negative");
  return success();
}

SmallVector<int64_t> CastOp::indexStrides() {
  if (auto g = getGlobalStrides()) return SmallVector<int64_t>(g->begin(), g->end());
  ArrayRef<int64_t> shape = getInput().getType().cast<RankedTensorType>().getShape();
  SmallVector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

LogicalResult MeshPositionOp::verify() {
  auto t = getResult().getType().cast<RankedTensorType>();
  if (t.getShape() != ArrayRef<int64_t>{1} || !t.getElementType().isInteger(32))
    return emitOpError() << "result must be a tensor<1xi32>, not " << t;
  auto emit = [&]() { return emitOpError(); };
  return success(lookupMesh(*this, getMeshAttr(), emit) != nullptr);
}

namespace {
// The scale of quantize / dequantize: f32, [1] per tensor, or [C] per
// channel along `axis` (C = the input's size there).
LogicalResult verifyScale(Operation* op, RankedTensorType in, Value scale, std::optional<int64_t> axis) {
  auto s = scale.getType().cast<RankedTensorType>();
  if (!s.getElementType().isF32() || s.getRank() != 1)
    return op->emitOpError() << "scale must be a tensor<1xf32> (per tensor) or tensor<Cxf32> (per channel), not "
                             << s;
  if (!axis) {
    if (s.getDimSize(0) != 1)
      return op->emitOpError() << "scale " << s << " has " << s.getDimSize(0)
                               << " values: per channel, say along which dim (axis = d)";
    return success();
  }
  if (*axis < 0 || *axis >= in.getRank())
    return op->emitOpError() << "axis " << *axis << " out of range for rank " << in.getRank();
  if (s.getDimSize(0) != in.getDimSize(*axis))
    return op->emitOpError() << "per-channel scale has " << s.getDimSize(0) << " values; dim " << *axis
                             << " of the input has " << in.getDimSize(*axis);
  return success();
}
}  // namespace

LogicalResult QuantizeOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>();
  auto out = getResult().getType().cast<RankedTensorType>();
  if (!in.getElementType().isF32() || !out.getElementType().isInteger(8))
    return emitOpError() << "quantizes f32 to i8, not " << in.getElementType() << " to " << out.getElementType();
  if (in.getShape() != out.getShape()) return emitOpError("cannot change the shape");
  if (!sameLayout(in, out) || !isRowMajor(in)) return emitOpError("takes and gives row-major tensors");
  return verifyScale(*this, in, getScale(), getAxis());
}

LogicalResult DequantizeOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>();
  auto out = getResult().getType().cast<RankedTensorType>();
  if (!(in.getElementType().isInteger(8) || in.getElementType().isInteger(32)) || !out.getElementType().isF32())
    return emitOpError() << "dequantizes i8 or i32 to f32, not " << in.getElementType() << " to "
                         << out.getElementType();
  if (in.getShape() != out.getShape()) return emitOpError("cannot change the shape");
  if (!sameLayout(in, out) || !isRowMajor(in)) return emitOpError("takes and gives row-major tensors");
  return verifyScale(*this, in, getScale(), getAxis());
}

LogicalResult ReduceOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>();
  auto out = getResult().getType().cast<RankedTensorType>();
  if (failed(rejectI1(*this, "to count true values, cast to i32 and reduce sum")))
    return failure();
  SmallVector<int64_t> dropped, kept;
  llvm::SmallBitVector reduced(in.getRank());
  for (int64_t d : getDims()) {
    if (d < 0 || d >= in.getRank())
      return emitOpError() << "reduction dimension " << d << " out of range for rank "
                           << in.getRank();
    if (reduced[d]) return emitOpError() << "dimension " << d << " listed twice";
    reduced.set(d);
  }
  for (int64_t i = 0; i < in.getRank(); ++i) {
    if (!reduced[i]) dropped.push_back(in.getDimSize(i));
    kept.push_back(reduced[i] ? 1 : in.getDimSize(i));
  }
  if ((out.getShape() != ArrayRef<int64_t>(dropped) && out.getShape() != ArrayRef<int64_t>(kept)) ||
      out.getElementType() != in.getElementType())
    return emitOpError() << "result must be " << RankedTensorType::get(dropped, in.getElementType())
                         << " or, keeping the reduced dims, "
                         << RankedTensorType::get(kept, in.getElementType());
  if (getKind() == ReduceKind::mean && !in.getElementType().isa<FloatType>())
    return emitOpError() << "mean needs a floating-point tensor, got " << in.getElementType()
                         << " (sum, then divide in the program)";
  if (getAccum() && getKind() != ReduceKind::sum && getKind() != ReduceKind::mean)
    return emitOpError() << "accum applies to sum and mean; " << stringifyReduceKind(getKind())
                         << " is exact in any type";
  return verifyAccumPolicy(*this, getAccum(), in.getElementType());
}

bool ReduceOp::keepsDims() {
  auto in = getInput().getType().cast<RankedTensorType>();
  return !getDims().empty() && getResult().getType().cast<RankedTensorType>().getRank() == in.getRank();
}

int64_t ReduceOp::reducedCount() {
  auto in = getInput().getType().cast<RankedTensorType>();
  int64_t n = 1;
  for (int64_t d : getDims()) n *= in.getDimSize(d);
  return n;
}

LogicalResult SoftmaxOp::verify() {
  auto t = getInput().getType().cast<RankedTensorType>();
  if (getDim() < 0 || getDim() >= t.getRank())
    return emitOpError() << "dim " << getDim() << " out of range for rank " << t.getRank();
  return verifyFloatOnly(*this);
}

LogicalResult tessera::graph::verifyAttentionGradOperands(Operation *op, Value query, Value keyT, Value value,
                                                          Value out, Value dout) {
  auto q = query.getType().cast<RankedTensorType>();
  const int64_t rank = q.getRank();
  for (auto [name, v] : {std::pair<const char *, Value>{"query", query}, {"key_t", keyT},
                         {"value", value}, {"out", out}, {"dout", dout}}) {
    auto t = v.getType().cast<RankedTensorType>();
    if (t.getRank() != 2 && t.getRank() != 3)
      return op->emitOpError() << name << " must be rank 2 ([S, d]) or 3 ([batch, S, d]), got " << t;
    if (t.getRank() != rank) return op->emitOpError() << name << " must have the query's rank " << rank << ", got " << t;
    if (!t.getElementType().isF32()) return op->emitOpError() << name << " must be f32, got " << t;
    if (!isRowMajor(t)) return op->emitOpError() << name << " must be row-major (insert a convert_layout), got " << t;
    if (rank == 3 && t.getDimSize(0) != q.getDimSize(0))
      return op->emitOpError() << "batch dims differ: query has " << q.getDimSize(0) << ", " << name << " has "
                               << t.getDimSize(0);
  }
  auto dim = [&](Value v, int64_t i) { return v.getType().cast<RankedTensorType>().getDimSize(rank - 2 + i); };
  const int64_t sq = dim(query, 0), d = dim(query, 1), skv = dim(keyT, 1), dv = dim(value, 1);
  if (dim(keyT, 0) != d)
    return op->emitOpError() << "key_t must have d = " << d << " rows (the query's head dim), got " << dim(keyT, 0);
  if (dim(value, 0) != skv)
    return op->emitOpError() << "value has " << dim(value, 0) << " rows but key_t has " << skv << " keys";
  for (auto [name, v] : {std::pair<const char *, Value>{"out", out}, {"dout", dout}})
    if (dim(v, 0) != sq || dim(v, 1) != dv)
      return op->emitOpError() << name << " must be [" << sq << ", " << dv << "] (queries x value dim), got "
                               << v.getType();
  return success();
}

LogicalResult AttentionGradOp::verify() {
  if (failed(verifyAttentionGradOperands(*this, getQuery(), getKeyT(), getValue(), getOut(), getDout())))
    return failure();
  if (!std::isfinite(getScale().convertToFloat())) return emitOpError("scale must be finite");
  return success();
}

/// A norm: `input` of rank >= 1 and a float type, row-major; each of
/// `params` (gamma, beta) `[N]` of the same element type; result = input.
static LogicalResult verifyNorm(Operation *op, ValueRange params) {
  auto in = op->getOperand(0).getType().cast<RankedTensorType>();
  if (in.getRank() < 1) return op->emitOpError("needs a tensor of rank >= 1 (it normalizes the last dim)");
  if (!in.getElementType().isa<FloatType>())
    return op->emitOpError() << "needs a floating-point tensor, got " << in.getElementType();
  if (op->getResult(0).getType() != in)
    return op->emitOpError() << "result type must be the input type " << in;
  if (!isRowMajor(in)) return op->emitOpError("input must be row-major (insert a convert_layout)");
  auto want = RankedTensorType::get({in.getShape().back()}, in.getElementType());
  for (Value p : params)
    if (p.getType().cast<RankedTensorType>() != want)
      return op->emitOpError() << "scale and shift must be " << want << " (the last dim), got " << p.getType();
  return success();
}
LogicalResult LayerNormOp::verify() {
  if (!(getEpsilon().convertToFloat() >= 0.f)) return emitOpError("epsilon must be >= 0");
  return verifyNorm(*this, {getGamma(), getBeta()});
}
LogicalResult RmsNormOp::verify() {
  if (!(getEpsilon().convertToFloat() >= 0.f)) return emitOpError("epsilon must be >= 0");
  return verifyNorm(*this, {getGamma()});
}

/// Shape ops move row-major elements.
static LogicalResult verifyRowMajor(Operation *op) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types)
    if (!isRowMajor(t)) return op->emitOpError() << "needs row-major tensors (insert a convert_layout), got " << t;
  for (Type t : op->getOperandTypes())
    if (getElementTypeOrSelf(t) != getElementTypeOrSelf(op->getResult(0).getType()))
      return op->emitOpError() << "keeps the element type: " << t << " -> " << op->getResult(0).getType();
  return success();
}

LogicalResult TransposeOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>(), out = getResult().getType().cast<RankedTensorType>();
  ArrayRef<int64_t> perm = getPerm();
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return emitOpError() << "perm has " << perm.size() << " entries for a tensor of rank " << in.getRank();
  llvm::SmallBitVector seen(in.getRank());
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError() << "perm must be a permutation of [0, " << in.getRank() << "), got " << p;
    seen.set(p);
    shape.push_back(in.getDimSize(p));
  }
  if (out.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result must be " << RankedTensorType::get(shape, in.getElementType());
  return verifyRowMajor(*this);
}

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>(), out = getResult().getType().cast<RankedTensorType>();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "changes the element count: " << in.getNumElements() << " -> " << out.getNumElements();
  return verifyRowMajor(*this);
}

LogicalResult SliceOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>(), out = getResult().getType().cast<RankedTensorType>();
  ArrayRef<int64_t> off = getOffsets(), st = getStrides();
  if (static_cast<int64_t>(off.size()) != in.getRank() || static_cast<int64_t>(st.size()) != in.getRank() ||
      out.getRank() != in.getRank())
    return emitOpError() << "offsets, strides and the result need one entry per dim (rank " << in.getRank() << ")";
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (st[d] < 1) return emitOpError() << "stride " << st[d] << " of dim " << d << " must be >= 1";
    int64_t n = out.getDimSize(d), last = 0;
    // Checked arithmetic: a huge stride wrapped the last index negative,
    // which passed and read far outside the input.
    if (off[d] < 0 || (n > 0 && (__builtin_mul_overflow(n - 1, st[d], &last) ||
                                 __builtin_add_overflow(off[d], last, &last) || last >= in.getDimSize(d))))
      return emitOpError() << "dim " << d << ": offset " << off[d] << " + (" << n << " - 1) * stride " << st[d]
                           << " reads past the input's " << in.getDimSize(d) << " elements";
  }
  return verifyRowMajor(*this);
}

LogicalResult BroadcastInDimOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>(), out = getResult().getType().cast<RankedTensorType>();
  ArrayRef<int64_t> dims = getDims();
  if (static_cast<int64_t>(dims.size()) != in.getRank())
    return emitOpError() << "dims has " << dims.size() << " entries for an input of rank " << in.getRank();
  for (auto [k, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= out.getRank() || (k > 0 && d <= dims[k - 1]))
      return emitOpError() << "dims must be strictly increasing result dims, got " << d;
    if (in.getDimSize(k) != 1 && in.getDimSize(k) != out.getDimSize(d))
      return emitOpError() << "input dim " << k << " (" << in.getDimSize(k) << ") must be 1 or the size of result dim "
                           << d << " (" << out.getDimSize(d) << ")";
  }
  return verifyRowMajor(*this);
}

LogicalResult GatherOp::verify() {
  auto table = getTable().getType().cast<RankedTensorType>();
  auto idx = getIndices().getType().cast<RankedTensorType>();
  auto out = getResult().getType().cast<RankedTensorType>();
  if (table.getRank() < 1) return emitOpError("needs a table of rank >= 1");
  if (!idx.getElementType().isInteger(32))
    return emitOpError() << "indices must be i32, got " << idx.getElementType();
  SmallVector<int64_t> shape(idx.getShape());
  llvm::append_range(shape, table.getShape().drop_front());
  if (out.getShape() != ArrayRef<int64_t>(shape) || out.getElementType() != table.getElementType())
    return emitOpError() << "result must be " << RankedTensorType::get(shape, table.getElementType())
                         << " (the indices' shape, then the table's row)";
  for (Type t : {Type(table), Type(idx), Type(out)})
    if (!isRowMajor(t)) return emitOpError() << "needs row-major tensors, got " << t;
  return success();
}

LogicalResult ConcatOp::verify() {
  auto out = getResult().getType().cast<RankedTensorType>();
  if (getInputs().empty()) return emitOpError("needs at least one input");
  int64_t dim = getDim(), sum = 0;
  if (dim < 0 || dim >= out.getRank()) return emitOpError() << "dim " << dim << " out of range for rank " << out.getRank();
  for (Value v : getInputs()) {
    auto t = v.getType().cast<RankedTensorType>();
    if (t.getRank() != out.getRank()) return emitOpError() << "input " << t << " has another rank than the result " << out;
    for (int64_t d = 0; d < out.getRank(); ++d)
      if (d != dim && t.getDimSize(d) != out.getDimSize(d))
        return emitOpError() << "input " << t << " differs from the result " << out << " in dim " << d
                             << " (only dim " << dim << " may differ)";
    sum += t.getDimSize(dim);
  }
  if (sum != out.getDimSize(dim))
    return emitOpError() << "the inputs' dim " << dim << " sum to " << sum << ", the result has " << out.getDimSize(dim);
  return verifyRowMajor(*this);
}

LogicalResult PadOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>(), out = getResult().getType().cast<RankedTensorType>();
  ArrayRef<int64_t> lo = getLow(), hi = getHigh();
  if (static_cast<int64_t>(lo.size()) != in.getRank() || static_cast<int64_t>(hi.size()) != in.getRank() ||
      out.getRank() != in.getRank())
    return emitOpError() << "low, high and the result need one entry per dim (rank " << in.getRank() << ")";
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (lo[d] < 0 || hi[d] < 0) return emitOpError() << "padding of dim " << d << " must be >= 0";
    int64_t size = 0;  // checked: 7 + 2 * INT64_MAX wrapped to a plausible 5
    if (__builtin_add_overflow(in.getDimSize(d), lo[d], &size) || __builtin_add_overflow(size, hi[d], &size))
      return emitOpError() << "padding of dim " << d << " makes it larger than 2^63 elements";
    shape.push_back(size);
  }
  if (out.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result must be " << RankedTensorType::get(shape, in.getElementType());
  return verifyRowMajor(*this);
}

LogicalResult ArgmaxOp::verify() {
  auto in = getInput().getType().cast<RankedTensorType>(), out = getResult().getType().cast<RankedTensorType>();
  if (failed(rejectI1(*this, "cast i1 to i8 or i32 first"))) return failure();
  if (getDim() < 0 || getDim() >= in.getRank())
    return emitOpError() << "dim " << getDim() << " out of range for rank " << in.getRank();
  SmallVector<int64_t> shape(in.getShape());
  shape.erase(shape.begin() + getDim());
  auto i32 = IntegerType::get(getContext(), 32);
  if (out.getShape() != ArrayRef<int64_t>(shape) || out.getElementType() != i32)
    return emitOpError() << "result must be " << RankedTensorType::get(shape, i32);
  if (!isRowMajor(in)) return emitOpError("needs a row-major input");
  return success();
}

LogicalResult IotaOp::verify() {
  auto out = getResult().getType().cast<RankedTensorType>();
  if (failed(rejectI1(*this, "an index does not fit in i1: iota in i32, then compare")))
    return failure();
  if (getDim() < 0 || getDim() >= out.getRank())
    return emitOpError() << "dim " << getDim() << " out of range for rank " << out.getRank();
  return verifyRowMajor(*this);
}

LogicalResult ConvertLayoutOp::verify() {
  auto a = getInput().getType().cast<RankedTensorType>();
  auto b = getResult().getType().cast<RankedTensorType>();
  if (a.getShape() != b.getShape() || a.getElementType() != b.getElementType())
    return emitOpError("convert_layout keeps shape and element type");
  for (Type t : {Type(a), Type(b)}) {
    Attribute enc = t.cast<RankedTensorType>().getEncoding();
    if (enc && !enc.isa<LayoutAttr>())
      return emitOpError() << "encoding " << enc << " is not a #tessera_graph.layout";
  }
  return success();
}

template <typename OpT>
static LogicalResult verifyCollective(OpT op, int64_t *ranks) {
  auto emit = [&] { return op.emitOpError(); };
  if (failed(rejectI1(op, "cast i1 to i8 before a collective"))) return failure();
  if (op.getAxes().empty()) return op.emitOpError("needs at least one mesh axis");
  return verifyAxes(op, op.getMeshAttr(), op.getAxes().getValue(), ranks, emit);
}

LogicalResult AllReduceOp::verify() {
  if (getKind() == ReduceKind::mean)
    return emitOpError("all_reduce takes sum, max or min (divide a sum by the group size for a mean)");
  if (getInput().getType() != getResult().getType())
    return emitOpError("result type must equal the input type");
  return verifyCollective(*this, nullptr);
}
LogicalResult BroadcastOp::verify() {
  if (getInput().getType() != getResult().getType())
    return emitOpError("result type must equal the input type");
  int64_t n;
  if (failed(verifyCollective(*this, &n))) return failure();
  if (getRoot() < 0 || getRoot() >= n)
    return emitOpError() << "root " << getRoot() << " out of range [0, " << n << ")";
  return success();
}

static LogicalResult verifyGatherScatter(Operation *op, RankedTensorType in,
                                         RankedTensorType out, int64_t dim,
                                         int64_t ranks, bool gather) {
  if (dim < 0 || dim >= in.getRank())
    return op->emitOpError() << "dim " << dim << " out of range";
  SmallVector<int64_t> expect(in.getShape());
  if (gather) {
    expect[dim] *= ranks;
  } else {
    if (expect[dim] % ranks)
      return op->emitOpError() << "dimension " << dim << " (" << expect[dim]
                               << ") is not divisible by the " << ranks << " ranks";
    expect[dim] /= ranks;
  }
  if (out.getShape() != ArrayRef<int64_t>(expect) ||
      out.getElementType() != in.getElementType())
    return op->emitOpError() << "result must be "
                             << RankedTensorType::get(expect, in.getElementType());
  return success();
}

LogicalResult AllGatherOp::verify() {
  int64_t n;
  if (failed(verifyCollective(*this, &n))) return failure();
  return verifyGatherScatter(*this, getInput().getType().cast<RankedTensorType>(),
                             getResult().getType().cast<RankedTensorType>(),
                             getDim(), n, true);
}
LogicalResult ReduceScatterOp::verify() {
  if (getKind() == ReduceKind::mean)
    return emitOpError("reduce_scatter takes sum, max or min (divide a sum by the group size for a mean)");
  int64_t n;
  if (failed(verifyCollective(*this, &n))) return failure();
  return verifyGatherScatter(*this, getInput().getType().cast<RankedTensorType>(),
                             getResult().getType().cast<RankedTensorType>(),
                             getDim(), n, false);
}

bool tessera::graph::isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, ExpOp, ReluOp, GeluOp, CastOp, NegOp,
             AbsOp, SqrtOp, RsqrtOp, LogOp, TanhOp, SigmoidOp, ErfOp, SiluOp, CompareOp, SelectOp>(op);
}

bool tessera::graph::isTileRoot(Operation *op) {
  return isa_and_nonnull<MatmulOp, SoftmaxOp, ReduceOp, LayerNormOp, RmsNormOp>(op);
}
bool tessera::graph::isShapeOp(Operation *op) {
  return isa_and_nonnull<TransposeOp, ReshapeOp, SliceOp, BroadcastInDimOp, IotaOp, GatherOp, ConcatOp, PadOp,
                         ArgmaxOp>(op);
}
bool tessera::graph::isRowOp(Operation *op) {
  return isa_and_nonnull<SoftmaxOp, ReduceOp, LayerNormOp, RmsNormOp>(op);
}

std::string tessera::graph::typeText(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return os.str();
}

bool tessera::graph::isRowMajor(Type type) {
  LayoutAttr l = getLayout(type);
  return !l || l.isRowMajor();
}

bool tessera::graph::isSplatConstant(Value v) {
  DenseElementsAttr d;
  return v && v.getType().isa<RankedTensorType>() && matchPattern(v, m_Constant(&d)) && d.isSplat();
}
