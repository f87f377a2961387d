//===- ScheduleDialect.cpp - Tessera Schedule IR --------------------------===//
#include "tessera/Dialect/Schedule/IR/Schedule.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/FunctionInterfaces.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace tessera::schedule;

#include "tessera/Dialect/Schedule/IR/ScheduleOpsDialect.cpp.inc"
#define GET_OP_CLASSES
#include "tessera/Dialect/Schedule/IR/ScheduleOps.cpp.inc"

void ScheduleDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessera/Dialect/Schedule/IR/ScheduleOps.cpp.inc"
      >();
}

//===--- tile -------------------------------------------------------------===//

void TileOp::build(OpBuilder &b, OperationState &state, TypeRange results,
                   ValueRange operands, ArrayRef<int64_t> tileSizes,
                   ArrayRef<int64_t> microTile) {
  state.addOperands(operands);
  state.addTypes(results);
  state.addAttribute(getTileSizesAttrName(state.name), b.getDenseI64ArrayAttr(tileSizes));
  state.addAttribute(getMicroTileAttrName(state.name), b.getDenseI64ArrayAttr(microTile));
  Region *body = state.addRegion();
  Block *block = new Block;
  body->push_back(block);
  for (Value v : operands) block->addArgument(v.getType(), v.getLoc());
}

LogicalResult TileOp::verify() {
  ArrayRef<int64_t> t = getTileSizes(), m = getMicroTile();
  bool matmul = !getBody().front().getOps<graph::MatmulOp>().empty();
  if (matmul) {
    if (t.size() != 3) return emitOpError("a tile with a matmul needs tile_sizes = [MC, NC, KC]");
    if (m.size() != 2) return emitOpError("a tile with a matmul needs micro_tile = [MR, NR]");
  } else {
    if (t.size() != 1) return emitOpError("a tile without matmul needs tile_sizes = [R] (rows per work item)");
    if (m.size() != 1) return emitOpError("a tile without matmul needs micro_tile = [V] (vector width)");
  }
  for (int64_t v : llvm::concat<const int64_t>(t, m))
    if (v <= 0) return emitOpError("tile sizes must be positive");
  if (auto ml = getMicroLayoutAttr()) {
    if (ml.getValue() != "quads" && ml.getValue() != "strided")
      return emitOpError() << "micro_layout must be \"quads\" or \"strided\", not \"" << ml.getValue() << "\"";
    if (!matmul) return emitOpError("micro_layout applies to a tile with a matmul");
  }
  if (auto mma = getMmaAttr()) {
    if (mma.getValue() != "sync" && mma.getValue() != "wgmma" && mma.getValue() != "mfma" &&
        mma.getValue() != "wmma")
      return emitOpError() << "mma must be \"sync\", \"wgmma\", \"mfma\" or \"wmma\", not \"" << mma.getValue()
                           << "\"";
    if (!matmul) return emitOpError("mma applies to a tile with a matmul");
  }
  if (auto st = getStagesAttr()) {
    if (!getMmaAttr() || getMmaAttr().getValue() != "wgmma")
      return emitOpError("stages applies to a tile with mma = \"wgmma\"");
    if (st.getInt() < 2 || st.getInt() > 8) return emitOpError() << "stages must be 2..8, got " << st.getInt();
  }
  if (getWarpSpecialize() && (!getMmaAttr() || getMmaAttr().getValue() != "wgmma"))
    return emitOpError("warp_specialize applies to a tile with mma = \"wgmma\"");
  if (matmul && (t[0] % m[0] || t[1] % m[1]))
    return emitOpError() << "micro tile [" << m[0] << ", " << m[1]
                         << "] does not divide the cache tile [" << t[0] << ", "
                         << t[1] << "]";
  Block &block = getBody().front();
  if (block.getNumArguments() != getNumOperands())
    return emitOpError() << "region has " << block.getNumArguments()
                         << " arguments for " << getNumOperands() << " operands";
  for (auto [arg, v] : llvm::zip(block.getArguments(), getOperands()))
    if (arg.getType() != v.getType())
      return emitOpError() << "region argument type " << arg.getType()
                           << " differs from operand type " << v.getType();
  auto yield = cast<YieldOp>(block.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yielded types must equal the result types");
  return success();
}

//===--- flash_attention --------------------------------------------------===//

LogicalResult FlashAttentionOp::verify() {
  auto q = getQuery().getType().cast<RankedTensorType>();
  auto kt = getKeyT().getType().cast<RankedTensorType>();
  auto v = getValue().getType().cast<RankedTensorType>();
  auto o = getResult().getType().cast<RankedTensorType>();
  const int64_t rank = q.getRank();
  for (auto [name, t] : {std::pair<const char *, RankedTensorType>{"query", q},
                         {"key_t", kt}, {"value", v}, {"result", o}}) {
    if (t.getRank() != 2 && t.getRank() != 3)
      return emitOpError() << name << " must be rank 2 ([S, d]) or 3 ([batch, S, d]), got " << t;
    if (t.getRank() != rank)
      return emitOpError() << name << " must have the query's rank " << rank << ", got " << t;
    if (!t.hasStaticShape())
      return emitOpError() << name << " must have a static shape, got " << t;
    if (rank == 3 && t.getDimSize(0) != q.getDimSize(0))
      return emitOpError() << "batch dims differ: query has " << q.getDimSize(0) << ", " << name
                           << " has " << t.getDimSize(0);
  }
  Type et = q.getElementType();
  if (!et.isa<FloatType>() || kt.getElementType() != et || v.getElementType() != et ||
      o.getElementType() != et)
    return emitOpError("query, key_t, value and result must have the same float element type");
  const int64_t b = rank - 2;  // the first matrix dim
  int64_t sq = q.getDimSize(b), d = q.getDimSize(b + 1);
  int64_t skv = kt.getDimSize(b + 1), dv = v.getDimSize(b + 1);
  if (kt.getDimSize(b) != d)
    return emitOpError() << "head dims differ: query [" << sq << ", " << d
                         << "] has d = " << d << " but key_t (K^T) has "
                         << kt.getDimSize(b) << " rows";
  if (v.getDimSize(b) != skv)
    return emitOpError() << "value has " << v.getDimSize(b) << " rows but key_t has "
                         << skv << " keys";
  if (o.getDimSize(b) != sq || o.getDimSize(b + 1) != dv)
    return emitOpError() << "result must be [" << sq << ", " << dv << "], got " << o;
  int64_t bq = getBlockQ(), bkv = getBlockKv();
  if (bq <= 0 || bkv <= 0)
    return emitOpError() << "block sizes must be positive, got block_q = " << bq
                         << " block_kv = " << bkv;
  // A block need not divide its sequence (the last one is partial), but a
  // block longer than the sequence is a tuning mistake.
  if (bq > sq)
    return emitOpError() << "block_q = " << bq << " exceeds the " << sq << " query rows";
  if (bkv > skv)
    return emitOpError() << "block_kv = " << bkv << " exceeds the " << skv << " keys";
  if (!std::isfinite(getScale().convertToFloat()))
    return emitOpError("scale must be finite");
  if (std::optional<StringRef> mma = getMma()) {
    if (*mma != "wgmma")
      return emitOpError() << "mma must be \"wgmma\" (or absent), got \"" << *mma << "\"";
    if (!graph::isRowMajor(o))
      return emitOpError() << "with mma = \"wgmma\" the result must be row-major, got " << o;
    std::string misfit = wgmmaAttentionMisfit(q, kt, v, bq, bkv);
    if (!misfit.empty()) return emitOpError() << "with mma = \"wgmma\": " << misfit;
  }
  return success();
}

std::string tessera::schedule::wgmmaAttentionMisfit(RankedTensorType q, RankedTensorType kt, RankedTensorType v,
                                                    int64_t bq, int64_t bkv) {
  std::string why;
  llvm::raw_string_ostream os(why);
  Type et = q.getElementType();
  const int64_t rank = q.getRank(), batch = rank == 3 ? q.getDimSize(0) : 1;
  const int64_t sq = q.getDimSize(rank - 2), d = q.getDimSize(rank - 1);
  const int64_t skv = kt.getDimSize(rank - 1), dv = v.getDimSize(rank - 1);
  if (!et.isBF16() && !et.isF16())
    os << "the operands must be bf16 or f16 (the tensor cores' inputs), got '" << et << "'";
  else if (!graph::isRowMajor(q) || !graph::isRowMajor(kt) || !graph::isRowMajor(v))
    os << "query, key_t and value must be row-major (TMA copies boxes of row-major matrices)";
  else if (d % 64)
    os << "the head dim d = " << d << " must be a multiple of 64 (one swizzled 128-byte row per slice)";
  else if (dv % 64 || dv > 256)
    os << "dv = " << dv << " must be 64, 128, 192 or 256 (the n of one wgmma)";
  else if ((bq != 64 && bq != 128) || (bkv != 64 && bkv != 128))
    os << "block_q = " << bq << " and block_kv = " << bkv << " must be 64 or 128 (warpgroups of 64 rows)";
  else if (skv % 8)
    os << "Skv = " << skv << " must be a multiple of 8 (16-byte rows of K^T for the tensor copies)";
  else if (batch > 1 && (sq % bq || skv % bkv))
    os << "with a batch, block_q = " << bq << " must divide Sq = " << sq << " and block_kv = " << bkv
       << " Skv = " << skv << " (the batches are stacked in one tensor map)";
  else if (wgmmaAttentionSharedBytes(d, dv, bq, bkv) > kWgmmaAttentionSharedBytes)
    os << "the blocks need " << wgmmaAttentionSharedBytes(d, dv, bq, bkv) << " bytes of shared memory, more than "
       << kWgmmaAttentionSharedBytes;
  return os.str();
}

LogicalResult FlashAttentionGradOp::verify() {
  // Schedule IR takes any ranked tensor: static shapes first, then the
  // Graph IR op's operand rules.
  for (Value v : getOperands())
    if (!v.getType().cast<RankedTensorType>().hasStaticShape())
      return emitOpError() << "operands must have static shapes, got " << v.getType();
  if (failed(graph::verifyAttentionGradOperands(*this, getQuery(), getKeyT(), getValue(), getOut(), getDout())))
    return failure();
  for (auto [r, o] : llvm::zip(getResults(), ValueRange{getQuery(), getKeyT(), getValue()}))
    if (r.getType() != o.getType())
      return emitOpError() << "each cotangent must have its operand's type " << o.getType() << ", got " << r.getType();
  const int64_t rank = getQuery().getType().cast<RankedTensorType>().getRank();
  auto dim = [&](Value v, int64_t i) { return v.getType().cast<RankedTensorType>().getDimSize(rank - 2 + i); };
  const int64_t sq = dim(getQuery(), 0), skv = dim(getKeyT(), 1);
  int64_t bq = getBlockQ(), bkv = getBlockKv();
  if (bq <= 0 || bkv <= 0 || bq > sq || bkv > skv)
    return emitOpError() << "blocks must be in [1, " << sq << "] x [1, " << skv << "], got block_q = " << bq
                         << " block_kv = " << bkv;
  if (!std::isfinite(getScale().convertToFloat())) return emitOpError("scale must be finite");
  return success();
}

//===--- pipeline ---------------------------------------------------------===//

ParseResult PipelineOp::parse(OpAsmParser &p, OperationState &state) {
  OpAsmParser::Argument iv;
  OpAsmParser::UnresolvedOperand lb, ub, step;
  IntegerAttr stages;
  Type index = p.getBuilder().getIndexType();
  iv.type = index;
  if (p.parseArgument(iv) || p.parseEqual() || p.parseOperand(lb) ||
      p.parseKeyword("to") || p.parseOperand(ub) || p.parseKeyword("step") ||
      p.parseOperand(step) || p.parseKeyword("stages") || p.parseEqual() ||
      p.parseAttribute(stages, p.getBuilder().getI64Type(), "stages", state.attributes) ||
      p.resolveOperand(lb, index, state.operands) ||
      p.resolveOperand(ub, index, state.operands) ||
      p.resolveOperand(step, index, state.operands))
    return failure();
  Region *body = state.addRegion();
  if (p.parseRegion(*body, {iv})) return failure();
  PipelineOp::ensureTerminator(*body, p.getBuilder(), state.location);
  return p.parseOptionalAttrDict(state.attributes);
}

void PipelineOp::print(OpAsmPrinter &p) {
  p << " " << getInductionVar() << " = " << getLb() << " to " << getUb()
    << " step " << getStep() << " stages = " << getStages() << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/false);
  p.printOptionalAttrDict((*this)->getAttrs(), {"stages"});
}

LogicalResult PipelineOp::verify() {
  if (getStages() < 1 || getStages() > 8)
    return emitOpError() << "stages must be in [1, 8], got " << getStages();
  Block &b = getBody().front();
  if (b.getNumArguments() != 1 || !b.getArgument(0).getType().isIndex())
    return emitOpError("body takes one index argument (the induction variable)");
  // A constant step must be positive: 0 never ends (the lowered scf.for was
  // then refused with no word about the pipeline), a negative one never runs.
  llvm::APInt step;
  if (matchPattern(getStep(), m_ConstantInt(&step)) && !step.isStrictlyPositive())
    return emitOpError() << "step must be positive, got " << step.getSExtValue();
  return success();
}

//===--- data movement ----------------------------------------------------===//

LogicalResult PrefetchOp::verify() {
  auto src = getSource().getType().cast<MemRefType>();
  auto dst = getResult().getType().cast<MemRefType>();
  if (getScope() != "shared" && getScope() != "local")
    return emitOpError() << "scope must be 'shared' or 'local', got '" << getScope() << "'";
  if (src.getRank() != dst.getRank() ||
      static_cast<int64_t>(getIndices().size()) != src.getRank())
    return emitOpError("source, tile and indices must have the same rank");
  if (src.getElementType() != dst.getElementType())
    return emitOpError("tile element type must match the source");
  for (int64_t i = 0; i < src.getRank(); ++i)
    if (src.getDimSize(i) % dst.getDimSize(i))
      return emitOpError() << "tile dimension " << i << " (" << dst.getDimSize(i)
                           << ") does not divide the source dimension ("
                           << src.getDimSize(i) << ")";
  if (getDoubleBuffer() && !(*this)->getParentOfType<PipelineOp>())
    return emitOpError("double_buffer needs an enclosing tessera_schedule.pipeline");
  return success();
}

LogicalResult CopyOp::verify() {
  auto a = getSource().getType().cast<MemRefType>();
  auto b = getTarget().getType().cast<MemRefType>();
  if (a.getShape() != b.getShape() || a.getElementType() != b.getElementType())
    return emitOpError() << "source " << a << " and target " << b
                         << " must have the same shape and element type";
  return success();
}

LogicalResult BarrierOp::verify() {
  if (!(*this)->getParentOfType<PipelineOp>() &&
      !(*this)->getParentOfType<FunctionOpInterface>())
    return emitOpError("must be inside a function or pipeline");
  return success();
}

LogicalResult YieldOp::verify() {
  if (isa<PipelineOp>((*this)->getParentOp()) && !getValues().empty())
    return emitOpError("a pipeline yields nothing");
  return success();
}

//===--- what a tile stores ------------------------------------------------===//

llvm::SmallVector<Value> tessera::schedule::storedValues(TileOp tile) {
  Block &body = tile.getBody().front();
  llvm::SetVector<Value> stored;
  for (Value y : body.getTerminator()->getOperands())
    if (y.isa<BlockArgument>()) stored.insert(y);
  llvm::SmallPtrSet<Value, 8> rootOperands;
  for (Operation &op : body.without_terminator())
    if (graph::isTileRoot(&op))
      for (Value o : op.getOperands()) rootOperands.insert(o);
  auto yielded = [&](Value v) { return llvm::is_contained(body.getTerminator()->getOperands(), v); };
  for (Operation &op : body.without_terminator())
    for (Value r : op.getResults())
      if (yielded(r) || rootOperands.contains(r) ||
          (!graph::isSplatConstant(r) && !r.use_empty() && !r.hasOneUse()))
        stored.insert(r);
  return llvm::SmallVector<Value>(stored.begin(), stored.end());
}
