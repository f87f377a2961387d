//===- ShardPropagation.cpp - global-view programs made SPMD --------------===//
//
// A function marked `tessera.global_view` is written on global tensors, with
// shardings (docs/spmd.md) only on its arguments and results. This pass
// decides the sharding of every intermediate, one op at a time in program
// order, rewrites every type to the local type one device holds, and
// inserts the collectives that the decisions need, so that the result is an
// ordinary SPMD function for --tessera-spmd-stages (docs/spmd.md, "Automatic
// sharding").
//
// The rules keep data where it is and communicate only where an op needs
// it (the Megatron MLP gets exactly one all_reduce). Where there is a
// choice, they pick the one that moves fewer bytes per device, counted as
// ring algorithms move them (an all_gather or a reduce_scatter of S bytes
// moves (n-1)/n S, an all_reduce twice that); taking a device's part of a
// replicated value is free (localPart: a static slice per device, the
// device's selected by its mesh coordinate, or a local gather of rows):
//  - elementwise ops: each dim keeps the axis under which most operand
//    bytes are split already; operands whole there take their part,
//    operands split over another axis are all-gathered first. Partial sums
//    pass through add/sub (of equal partials), mul/div by a value that is
//    not partial, neg, unless an operand is split over the same axis;
//    otherwise they are reduce-scattered onto the dim that keeps their axis
//    (half an all_reduce's bytes) or all-reduced. A dim no operand splits
//    takes the split its value is returned with (looked ahead through
//    elementwise ops and transposes) when that turns an all_reduce into a
//    reduce_scatter: the data-parallel gradient of a sharded optimizer
//    state is reduce-scattered, updated in parts and all-gathered once;
//  - transpose: the split dims and partial sums move with the dims;
//  - matmul: M and N keep their shardings; K split alike on both sides
//    makes the result a partial sum (no collective); K split on one side
//    only: the whole side takes its part when reducing the result costs
//    less than gathering the split side, which is gathered otherwise;
//    batch dims split on one side: the other takes its part;
//  - reduce sum / mean over a sharded dim: a partial sum (mean scaled by
//    1 / axis size); max / min: the local reduction then an all_reduce;
//  - softmax and the norms need their dim whole (all-gathered);
//  - reshape keeps a split that leads its group of dims (heads split from
//    the model dim, and merged back); slice, pad and concat keep the
//    splits of the dims they do not cut, extend or join, and the dims they
//    do are gathered, then split again (splitAgain: the fused QKV
//    projection's q, k, v slices keep the heads split); broadcast_in_dim
//    moves them to their result dims; gather (embedding) keeps the
//    indices' splits and the table's trailing ones; a table split by rows
//    (vocabulary-parallel) stays split when reducing the looked-up rows
//    later costs less than gathering it: each device zeroes the indices
//    outside its rows, a partial sum;
//  - the rest computes on replicated operands;
//  - a stochastic cast of a partitioned tensor gets the device's
//    mesh_position and the global strides, so that its random bits are
//    keyed by the global index, as in the single-device program;
//  - at the return, each value is brought to its declared sharding:
//    partial -> reduce_scatter (when the result is sharded over the same
//    axis) or all_reduce; sharded -> all_gather; replicated -> sharded by
//    each device taking its part (no collective).
// A dim may be split over several axes (rows over dp x tp); a finer split
// of a dim beside a coarser one keeps the finer (the coarser operand takes
// its part of its part), and moving between them needs collectives over
// the extra axes only (Megatron's sequence parallelism: an all_gather over
// tp before a column-split matmul, a reduce_scatter over tp after the
// row-split one).
// Every collective and part is made once per value (later uses share it).
// Each rewritten op carries its decision as `tessera_graph.sharding`.
//
// Where the rules choose (choose(): the split an elementwise op keeps, the
// side of a one-sided contraction, narrowing M or gathering N, a table kept
// split by rows, splitting a slice again), search() places the function
// again with other options and keeps the cheapest by spmdCost
// (ShardCost.cpp): the rules decide op by op, and a gather shared by two
// readers, say, is cheaper than what each reader alone would pick.
//===----------------------------------------------------------------------===//
#include <map>
#include <set>
#include <tuple>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "tessera/Dialect/Graph/Transforms/Passes.h"
#include "tessera/Dialect/Graph/Transforms/ShardPropagation.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"
#include "ShardCost.h"
#include "ShardKey.h"

namespace tessera::graph {
#define GEN_PASS_DEF_SHARDPROPAGATION
#include "tessera/Dialect/Graph/Transforms/Passes.h.inc"
}  // namespace tessera::graph

namespace tessera::graph {

using namespace mlir;

namespace {

using namespace shard_key;

// Up to this many devices along an axis, a part of a dim other than the
// first is selected among static slices (localPart).
constexpr int64_t kMaxSelectedParts = 8;

struct Sharding {
  SmallVector<std::string> dims;  // per dim: the key of its split, or ""
  std::set<std::string> partial;  // axes holding partial sums
};

// True when an axis would be used twice: by two dims, or by a dim and the
// partial sums.
bool conflicting(const Sharding& s) {
  std::set<std::string> seen = s.partial;
  for (const std::string& key : s.dims)
    for (const std::string& a : axesOf(key))
      if (!seen.insert(a).second) return true;
  return false;
}

class Propagator {
 public:
  // `overrides[i]`: the option to take at the i-th choice point (in program
  // order) instead of the rules' own (-1, or past the end: the rules').
  Propagator(func::FuncOp fn, MeshOp mesh, bool annotate, ArrayRef<int> overrides = {})
      : fn_(fn), mesh_(mesh), b_(fn.getContext()), annotate_(annotate),
        overrides_(overrides.begin(), overrides.end()) {}
  FailureOr<func::FuncOp> run();
  // The choice points the last run met: the options of each, and the one
  // taken (run again with picks() as overrides, it makes the same function).
  ArrayRef<int> optionCounts() const { return counts_; }
  ArrayRef<int> picks() const { return picks_; }

 private:
  // The number of parts a key cuts a dim into.
  int64_t axisSize(const std::string& key) {
    int64_t n = 1;
    for (const std::string& a : axesOf(key)) n *= mesh_.axisSize(a);
    return n;
  }
  FailureOr<RankedTensorType> localType(Operation* at, RankedTensorType global, const Sharding& s);
  Sharding fromAttr(ShardAttr attr, int64_t rank);
  ShardAttr toAttr(const Sharding& s);
  ArrayAttr axes(const std::set<std::string>& a);
  // A key's axes, as a collective lists them (ranks row-major over them:
  // the order of the key's blocks).
  ArrayAttr axis(const std::string& key) {
    SmallVector<Attribute> out;
    for (const std::string& a : axesOf(key)) out.push_back(b_.getStringAttr(a));
    return b_.getArrayAttr(out);
  }

  // The collectives and parts, on the new (local) values; each updates `s`
  // (the sharding of `v`) to the result's and is made once per (value,
  // dim, axis).
  Value allReduce(Value v, Sharding& s);
  Value gatherDim(Value v, Sharding& s, unsigned d);
  // Dim d split over `prefix` only (a prefix of its key): an all_gather over
  // the key's trailing axes.
  Value gatherTo(Value v, Sharding& s, unsigned d, const std::string& prefix);
  Value replicate(Value v, Sharding& s);
  // v partial over the axes `a` adds to dim d's split (dim d whole, or split
  // over a prefix of `a`): each device's part of the sum.
  Value reduceScatter(Value v, Sharding& s, unsigned d, const std::string& a);
  // v equal on every device along the axes `a` adds to dim d's split (v is
  // made so first): the device's part, taken locally (by its coordinate).
  Value localPart(Value v, Sharding& s, unsigned d, const std::string& a);
  // Dim d from its split to `a`: gathers what `a` does not split, then
  // reduce-scatters (partial sums over the new axes) or takes the part.
  Value convert(Value v, Sharding& s, unsigned d, const std::string& a);
  // The device's coordinate along axis `a` (its block index along a key of
  // several axes): tensor<1xi32>.
  Value coordinate(const std::string& a);
  Value constant(Type elem, double value);
  // Bytes one device holds of `v`, and what a ring collective moves.
  static int64_t bytes(Value v);
  int64_t gatherCost(Value v, const std::string& a) { return bytes(v) * (axisSize(a) - 1); }

  // The shardings the results are returned with, looked ahead through
  // elementwise ops and transposes (old values -> per dim axis).
  void lookAhead(ArrayRef<Sharding> results);

  LogicalResult visit(Operation* op);
  LogicalResult elementwise(Operation* op);
  LogicalResult matmul(MatmulOp op);
  LogicalResult transpose(TransposeOp op);
  LogicalResult reduce(ReduceOp op);
  LogicalResult rowOp(Operation* op, int64_t dim);
  // Data movement that keeps the dims it does not touch split.
  LogicalResult reshape(ReshapeOp op);
  LogicalResult window(Operation* op, ArrayRef<bool> touched, bool linear);  // slice, pad
  LogicalResult concat(ConcatOp op);
  LogicalResult broadcastInDim(BroadcastInDimOp op);
  LogicalResult gather(GatherOp op);
  LogicalResult replicated(Operation* op);
  LogicalResult stochasticCast(CastOp op);
  // After a slice, pad or concat that needed dim d whole: the result takes
  // its part along `a` again (the axis the input was split over), so the
  // ops after it compute on parts, unless the result is returned whole
  // there or cannot be split evenly.
  void splitAgain(Operation* op, unsigned d, const std::string& a);
  // The device's tessera_graph.mesh_position, made once at the entry.
  Value position();
  // Clones `op` on `operands` with its result typed for `s`, records it.
  LogicalResult emit(Operation* op, ArrayRef<Value> operands, const Sharding& s);

  func::FuncOp fn_;
  MeshOp mesh_;
  OpBuilder b_;
  bool annotate_;  // record each decision on its op
  std::vector<int> overrides_, counts_, picks_;  // choose()
  // A choice point with `options` options of which the rules pick `rule`:
  // the option to take.
  int choose(int rule, int options) {
    const size_t i = counts_.size();
    int pick = rule;
    if (i < overrides_.size() && overrides_[i] >= 0 && overrides_[i] < options) pick = overrides_[i];
    counts_.push_back(options);
    picks_.push_back(pick);
    return pick;
  }
  Location loc_ = UnknownLoc::get(fn_.getContext());
  DenseMap<Value, Value> local_;        // old value -> new (local) value
  DenseMap<Value, Sharding> sharding_;  // new value -> its sharding
  Value position_;                      // position(), once made
  DenseMap<Value, SmallVector<std::string>> wanted_;  // lookAhead()
  DenseMap<Value, SmallVector<std::string>> returned_;  // old value -> per dim axis of its return
  std::map<std::string, Value> coordinates_;
  // (value, dim, axis, kind) -> what gatherDim / reduceScatter / localPart
  // made of it; allReduce by (value, "", -1).
  std::map<std::tuple<void*, int, std::string, int>, Value> made_;
  Value reuse(Value v, int d, const std::string& a, int kind, Sharding& s) {
    auto it = made_.find({v.getAsOpaquePointer(), d, a, kind});
    if (it == made_.end()) return {};
    s = sharding_[it->second];
    return it->second;
  }
  void remember(Value v, int d, const std::string& a, int kind, Value r, const Sharding& s) {
    made_[{v.getAsOpaquePointer(), d, a, kind}] = r;
    sharding_[r] = s;
  }
};

FailureOr<RankedTensorType> Propagator::localType(Operation* at, RankedTensorType global, const Sharding& s) {
  SmallVector<int64_t> shape(global.getShape());
  for (auto [d, a] : llvm::enumerate(s.dims)) {
    if (a.empty()) continue;
    const int64_t n = axisSize(a);
    if (shape[d] % n != 0)
      return at->emitOpError() << "dim " << d << " of " << global << " (size " << shape[d]
                               << ") does not divide over mesh axis '" << shown(a) << "' of size " << n,
             failure();
    shape[d] /= n;
  }
  return RankedTensorType::get(shape, global.getElementType(), global.getEncoding());
}

Sharding Propagator::fromAttr(ShardAttr attr, int64_t rank) {
  Sharding s;
  s.dims.assign(rank, "");
  if (!attr) return s;
  for (int64_t d = 0; d < rank; ++d) s.dims[d] = keyOf(attr.getDimAxes(d));
  for (Attribute a : attr.getReduce()) s.partial.insert(a.cast<StringAttr>().str());
  return s;
}

ArrayAttr Propagator::axes(const std::set<std::string>& a) {
  SmallVector<Attribute> out;
  for (Attribute m : mesh_.getAxes())
    if (a.count(m.cast<StringAttr>().str())) out.push_back(m);
  return b_.getArrayAttr(out);
}

ShardAttr Propagator::toAttr(const Sharding& s) {
  SmallVector<Attribute> dims;
  for (const std::string& a : s.dims) {
    ArrayAttr list = axis(a);
    dims.push_back(list.size() > 1 ? list.cast<Attribute>() : b_.getStringAttr(a));
  }
  return ShardAttr::get(b_.getContext(), FlatSymbolRefAttr::get(mesh_.getSymNameAttr()), b_.getArrayAttr(dims),
                        b_.getArrayAttr({}), axes(s.partial));
}

Value Propagator::allReduce(Value v, Sharding& s) {
  if (s.partial.empty()) return v;
  if (Value r = reuse(v, -1, "", 0, s)) return r;
  Value r = b_.create<AllReduceOp>(loc_, v.getType(), v, mesh_.getSymName(), axes(s.partial), ReduceKind::sum);
  s.partial.clear();
  remember(v, -1, "", 0, r, s);
  return r;
}

Value Propagator::gatherDim(Value v, Sharding& s, unsigned d) {
  if (s.dims[d].empty()) return v;
  if (Value r = reuse(v, d, "", 1, s)) return r;
  auto t = v.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(t.getShape());
  shape[d] *= axisSize(s.dims[d]);
  Value r = b_.create<AllGatherOp>(loc_, RankedTensorType::get(shape, t.getElementType(), t.getEncoding()), v,
                                   mesh_.getSymName(), axis(s.dims[d]), d);
  s.dims[d] = "";
  remember(v, d, "", 1, r, s);
  return r;
}

Value Propagator::gatherTo(Value v, Sharding& s, unsigned d, const std::string& prefix) {
  if (prefix.empty()) return gatherDim(v, s, d);
  if (s.dims[d] == prefix || !isPrefix(prefix, s.dims[d])) return v;
  if (Value r = reuse(v, d, prefix, 4, s)) return r;
  const std::string rest = suffixOf(prefix, s.dims[d]);
  auto t = v.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(t.getShape());
  shape[d] *= axisSize(rest);
  Value r = b_.create<AllGatherOp>(loc_, RankedTensorType::get(shape, t.getElementType(), t.getEncoding()), v,
                                   mesh_.getSymName(), axis(rest), d);
  s.dims[d] = prefix;
  remember(v, d, prefix, 4, r, s);
  return r;
}

Value Propagator::convert(Value v, Sharding& s, unsigned d, const std::string& a) {
  if (s.dims[d] == a) return v;
  if (!isPrefix(s.dims[d], a)) {
    if (!a.empty() && isPrefix(a, s.dims[d])) return gatherTo(v, s, d, a);
    v = gatherDim(v, s, d);
  }
  if (a.empty()) return v;
  if (covers(s.partial, suffixOf(s.dims[d], a))) return reduceScatter(v, s, d, a);
  if (v.getType().cast<RankedTensorType>().getEncoding()) return v;  // stays whole: the caller sees it
  return localPart(v, s, d, a);
}

Value Propagator::replicate(Value v, Sharding& s) {
  v = allReduce(v, s);
  for (unsigned d = 0; d < s.dims.size(); ++d) v = gatherDim(v, s, d);
  return v;
}

Value Propagator::reduceScatter(Value v, Sharding& s, unsigned d, const std::string& a) {
  if (Value r = reuse(v, d, a, 2, s)) return r;
  if (!isPrefix(s.dims[d], a)) v = gatherDim(v, s, d);
  // Over the axes `a` adds: within the part of the prefix, rank r of the
  // group gets block r of it, which is the part under `a`.
  const std::string added = suffixOf(s.dims[d], a);
  auto t = v.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(t.getShape());
  shape[d] /= axisSize(added);
  Value r = b_.create<ReduceScatterOp>(loc_, RankedTensorType::get(shape, t.getElementType(), t.getEncoding()), v,
                                       mesh_.getSymName(), axis(added), ReduceKind::sum, d);
  for (const std::string& x : axesOf(added)) s.partial.erase(x);
  s.dims[d] = a;
  remember(v, d, a, 2, r, s);
  return r;
}

Value Propagator::constant(Type elem, double value) {
  auto t = RankedTensorType::get({1}, elem);
  Attribute x = elem.isa<FloatType>() ? b_.getFloatAttr(elem, value).cast<Attribute>()
                                       : b_.getIntegerAttr(elem, static_cast<int64_t>(value)).cast<Attribute>();
  Value c = b_.create<arith::ConstantOp>(loc_, DenseElementsAttr::get(t, x));
  sharding_[c].dims.assign(1, "");
  return c;
}

Value Propagator::coordinate(const std::string& a) {
  if (auto it = coordinates_.find(a); it != coordinates_.end()) return it->second;
  if (SmallVector<std::string> list = axesOf(a); list.size() > 1) {
    // Row-major over the key's axes: ((c0 * n1) + c1) * n2 + c2 ...
    auto t = RankedTensorType::get({1}, b_.getI32Type());
    Value c = coordinate(list[0]);
    for (const std::string& x : llvm::ArrayRef(list).drop_front()) {
      c = b_.create<MulOp>(loc_, t, c, constant(b_.getI32Type(), static_cast<double>(axisSize(x))));
      c = b_.create<AddOp>(loc_, t, c, coordinate(x));
    }
    sharding_[c].dims.assign(1, "");
    return coordinates_[a] = c;
  }
  // mesh_position is row-major over the axes (the last fastest):
  // coordinate = (position / stride) mod size.
  int64_t stride = 1, size = axisSize(a);
  bool first = true, seen = false;
  for (auto [i, m] : llvm::enumerate(mesh_.getAxes())) {
    if (seen) stride *= mesh_.getShape()[i];
    if (m.cast<StringAttr>().getValue() == a) seen = true, first = (i == 0);
  }
  auto t = RankedTensorType::get({1}, b_.getI32Type());
  Value c = position();
  if (stride != 1) c = b_.create<DivOp>(loc_, t, c, constant(b_.getI32Type(), stride));
  if (!first) {
    Value q = b_.create<DivOp>(loc_, t, c, constant(b_.getI32Type(), size));
    Value qs = b_.create<MulOp>(loc_, t, q, constant(b_.getI32Type(), size));
    c = b_.create<SubOp>(loc_, t, c, qs);
  }
  sharding_[c].dims.assign(1, "");
  return coordinates_[a] = c;
}

Value Propagator::localPart(Value v, Sharding& s, unsigned d, const std::string& key) {
  if (Value r = reuse(v, d, key, 3, s)) return r;
  const Value in = v;
  // Dim d split over a prefix of `key` already: the part of that part along
  // the axes `key` adds (a local index within it is the coordinate along
  // them); otherwise it is made whole first.
  if (!isPrefix(s.dims[d], key)) v = gatherDim(v, s, d);
  const std::string a = suffixOf(s.dims[d], key);
  if (a.empty()) return v;
  // An axis splits one dim only: a value split over `a` along another dim
  // (or partial over it) is made whole there first. Taking the part first
  // would give device c the part c of dim d of only its own slice of the
  // other dim, and a later gather of that dim would join different parts
  // (found by tests/random_programs.py --spmd: a batched matmul whose rhs
  // was split along K and took its part of the batch).
  for (unsigned k = 0; k < s.dims.size(); ++k)
    if (k != d && overlaps(s.dims[k], a)) v = gatherDim(v, s, k);
  if (touches(s.partial, a)) v = allReduce(v, s);
  auto t = v.getType().cast<RankedTensorType>();
  const int64_t rank = t.getRank(), part = t.getDimSize(d) / axisSize(a);
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    // A splat's part is a smaller splat: nothing to compute.
    auto dense = c.getValue().dyn_cast<DenseElementsAttr>();
    if (dense && dense.isSplat() && !t.getEncoding()) {
      SmallVector<int64_t> shape(t.getShape());
      shape[d] = part;
      Value r = b_.create<arith::ConstantOp>(
          loc_, DenseElementsAttr::get(RankedTensorType::get(shape, t.getElementType()),
                                       dense.getSplatValue<Attribute>()));
      s.dims[d] = key;
      remember(in, d, key, 3, r, s);
      return r;
    }
  }
  if (d != 0 && axisSize(a) <= kMaxSelectedParts) {
    // Every device's part as a static slice, the device's chosen by its
    // coordinate: elementwise ops that fuse with their users, where moving
    // dim d first would transpose the whole tensor and the part back.
    SmallVector<int64_t> shape(t.getShape()), offsets(rank, 0), strides(rank, 1);
    shape[d] = part;
    auto partType = RankedTensorType::get(shape, t.getElementType());
    Value r;
    for (int64_t j = axisSize(a) - 1; j >= 0; --j) {
      offsets[d] = j * part;
      Value x = b_.create<SliceOp>(loc_, partType, v, b_.getDenseI64ArrayAttr(offsets),
                                   b_.getDenseI64ArrayAttr(strides));
      if (!r) {
        r = x;
        continue;
      }
      Value mine = b_.create<CompareOp>(loc_, ComparePredicate::eq, coordinate(a), constant(b_.getI32Type(), j));
      r = b_.create<SelectOp>(loc_, mine, x, r);
    }
    s.dims[d] = key;
    remember(in, d, key, 3, r, s);
    return r;
  }
  // Dim d first (a gather picks rows), the rows of this device, back.
  SmallVector<int64_t> perm{static_cast<int64_t>(d)}, inverse(rank);
  for (int64_t k = 0; k < rank; ++k)
    if (k != d) perm.push_back(k);
  for (int64_t k = 0; k < rank; ++k) inverse[perm[k]] = k;
  auto permuted = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> p) {
    SmallVector<int64_t> out;
    for (int64_t k : p) out.push_back(shape[k]);
    return out;
  };
  Value x = v;
  if (d != 0)
    x = b_.create<TransposeOp>(loc_, RankedTensorType::get(permuted(t.getShape(), perm), t.getElementType()), x,
                               b_.getDenseI64ArrayAttr(perm));
  auto indexType = RankedTensorType::get({part}, b_.getI32Type());
  Value rows = b_.create<IotaOp>(loc_, indexType, b_.getI64IntegerAttr(0));
  auto one = RankedTensorType::get({1}, b_.getI32Type());
  Value first = b_.create<MulOp>(loc_, one, coordinate(a), constant(b_.getI32Type(), part));
  rows = b_.create<AddOp>(loc_, indexType, rows, first);
  SmallVector<int64_t> shape = permuted(t.getShape(), perm);
  shape[0] = part;
  Value r = b_.create<GatherOp>(loc_, RankedTensorType::get(shape, t.getElementType()), x, rows);
  if (d != 0) {
    SmallVector<int64_t> back(t.getShape());
    back[d] = part;
    r = b_.create<TransposeOp>(loc_, RankedTensorType::get(back, t.getElementType()), r,
                               b_.getDenseI64ArrayAttr(inverse));
  }
  s.dims[d] = key;
  remember(in, d, key, 3, r, s);
  return r;
}

int64_t Propagator::bytes(Value v) {
  auto t = v.getType().cast<RankedTensorType>();
  return t.getNumElements() * std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
}

LogicalResult Propagator::emit(Operation* op, ArrayRef<Value> operands, const Sharding& s) {
  auto global = op->getResult(0).getType().cast<RankedTensorType>();
  FailureOr<RankedTensorType> lt = localType(op, global, s);
  if (failed(lt)) return failure();
  // Operands by position, not through a value map: an op reading one value
  // twice (x @ x) may need it in two shardings (one all-gathered along K,
  // the other along rows), and a map would give both uses the last.
  Operation* n = b_.clone(*op);
  n->setOperands(operands);
  n->getResult(0).setType(*lt);
  if (annotate_) n->setAttr(kShardingAttr, toAttr(s));
  local_[op->getResult(0)] = n->getResult(0);
  sharding_[n->getResult(0)] = s;
  return success();
}

// The split (key) under which the most operand bytes of a dim are split
// (`held`: key -> bytes), among those using no axis in `used` (another
// dim's); "" for none.
std::string mostHeld(const std::map<std::string, int64_t>& held, const std::set<std::string>& used) {
  std::string axis;
  int64_t best = -1;
  for (auto& [a, n] : held)
    if (!touches(used, a) && n > best) best = n, axis = a;
  return axis;
}

// Operands and result of an elementwise op: numpy broadcasting aligns the
// operands' dims with the result's last ones.
LogicalResult Propagator::elementwise(Operation* op) {
  auto rt = op->getResult(0).getType().cast<RankedTensorType>();
  const int64_t rank = rt.getRank();
  SmallVector<Value> vals;
  SmallVector<Sharding> shs;
  for (Value o : op->getOperands()) {
    vals.push_back(local_[o]);
    shs.push_back(sharding_[local_[o]]);
  }
  // Operand i's dim for result dim d when it holds it whole, else -1.
  auto full = [&](size_t i, int64_t d) -> int64_t {
    auto ot = op->getOperand(i).getType().cast<RankedTensorType>();
    const int64_t od = d - (rank - ot.getRank());
    return od >= 0 && ot.getDimSize(od) == rt.getDimSize(d) ? od : -1;
  };
  // Partial sums: what stays linear, unless an operand is split over the
  // same axis (then reduce-scattering the partial one is cheaper than
  // gathering it and reducing the result later).
  std::set<std::string> partials;
  for (const Sharding& s : shs) partials.insert(s.partial.begin(), s.partial.end());
  bool keep = false;
  if (!partials.empty()) {
    if (isa<AddOp, SubOp>(op)) {
      keep = llvm::all_of(shs, [&](const Sharding& s) { return s.partial == shs[0].partial; });
    } else if (isa<NegOp>(op)) {
      keep = true;
    } else if (isa<MulOp>(op)) {
      keep = shs[0].partial.empty() != shs[1].partial.empty();
    } else if (isa<DivOp>(op)) {
      keep = shs[1].partial.empty();
    }
    for (const Sharding& s : shs)
      for (const std::string& a : s.dims)
        if (touches(partials, a)) keep = false;
    // Carrying a partial sum defers its reduction to a value of the same
    // size, once: not so for one read by several ops (each would reduce
    // its own result: reduce it here, once, shared) or broadcast into a
    // larger result.
    for (auto [i, o] : llvm::enumerate(op->getOperands()))
      if (!shs[i].partial.empty() &&
          (!o.hasOneUse() || o.getType().cast<RankedTensorType>().getNumElements() != rt.getNumElements()))
        keep = false;
  }
  // A partial sum the result is returned split over (lookAhead) is
  // reduce-scattered here rather than carried: the same bytes as later, and
  // made once for a value with several users (a gradient read by several
  // optimizer terms).
  auto wanted = wanted_.find(op->getResult(0));
  if (keep && wanted != wanted_.end())
    for (int64_t d = 0; d < rank; ++d) {
      const std::string& a = wanted->second[d];
      if (!covers(partials, a)) continue;
      bool scatter = true;
      for (size_t i = 0; i < vals.size(); ++i)
        if (touches(shs[i].partial, a))
          scatter = scatter && covers(shs[i].partial, a) && full(i, d) >= 0 &&
                    !vals[i].getType().cast<RankedTensorType>().getEncoding();
      if (scatter) keep = false;
    }
  // Each result dim keeps the axis under which most operand bytes are
  // split already (the others are gathered); a dim no operand splits takes
  // the axis it is returned with when a partial operand can be
  // reduce-scattered onto it instead of all-reduced.
  Sharding out;
  out.dims.assign(rank, "");
  std::set<std::string> used;
  if (keep) used = partials;
  for (int64_t d = 0; d < rank; ++d) {
    std::map<std::string, int64_t> held;
    for (size_t i = 0; i < vals.size(); ++i)
      if (int64_t od = full(i, d); od >= 0 && !shs[i].dims[od].empty()) held[shs[i].dims[od]] += bytes(vals[i]);
    out.dims[d] = mostHeld(held, used);
    // A finer split of the same dim (a key the chosen one is a prefix of:
    // rows over dp x tp beside rows over dp) is cheaper still: the coarser
    // operands take their parts locally where the finer ones would be
    // gathered.
    for (auto& [a, n] : held)
      if (!out.dims[d].empty() && isPrefix(out.dims[d], a) && !touches(used, a)) out.dims[d] = a;
    if (!keep && wanted != wanted_.end() && isPrefix(out.dims[d], wanted->second[d]) &&
        out.dims[d] != wanted->second[d]) {
      // The split the value is returned with, when it refines this one and
      // the partial operands can be reduce-scattered onto it (Megatron's
      // sequence parallelism: rows over dp, partial over tp, returned over
      // dp x tp).
      const std::string& a = wanted->second[d];
      const std::string added = suffixOf(out.dims[d], a);
      bool scatter = !touches(used, added);
      bool any = false;
      for (size_t i = 0; scatter && i < vals.size(); ++i)
        if (touches(shs[i].partial, added)) {
          any = true;
          const int64_t od = full(i, d);
          scatter = covers(shs[i].partial, added) && od >= 0 && isPrefix(shs[i].dims[od], a) &&
                    !vals[i].getType().cast<RankedTensorType>().getEncoding();
        }
      if (scatter && any) out.dims[d] = a;
    }
    // The search may take another split some operand holds, or none.
    SmallVector<std::string> options{out.dims[d]};
    for (auto& [a, n] : held)
      if (a != out.dims[d] && !touches(used, a)) options.push_back(a);
    if (!out.dims[d].empty()) options.push_back("");
    if (options.size() > 1) out.dims[d] = options[choose(0, static_cast<int>(options.size()))];
    insertAxes(used, out.dims[d]);
  }
  // Each operand to the result's sharding.
  for (size_t i = 0; i < vals.size(); ++i) {
    auto ot = op->getOperand(i).getType().cast<RankedTensorType>();
    for (int64_t od = 0; od < ot.getRank(); ++od) {
      const int64_t d = od + (rank - ot.getRank());
      const std::string& a = full(i, d) >= 0 ? out.dims[d] : std::string();  // broadcast dims stay whole
      vals[i] = convert(vals[i], shs[i], od, a);
    }
  }
  // A layout-encoded operand that could not take its part: the dim whole.
  for (int64_t d = 0; d < rank; ++d) {
    bool whole = false;
    for (size_t i = 0; i < vals.size(); ++i)
      if (int64_t od = full(i, d); od >= 0 && shs[i].dims[od] != out.dims[d]) whole = true;
    if (!whole) continue;
    for (size_t i = 0; i < vals.size(); ++i)
      if (int64_t od = full(i, d); od >= 0) vals[i] = gatherDim(vals[i], shs[i], od);
    out.dims[d] = "";
  }
  if (keep) {
    out.partial = partials;
  } else {
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = allReduce(vals[i], shs[i]);
  }
  return emit(op, vals, out);
}

LogicalResult Propagator::matmul(MatmulOp op) {
  Value a = local_[op.getLhs()], b = local_[op.getRhs()];
  Sharding sa = sharding_[a], sb = sharding_[b];
  a = allReduce(a, sa);
  b = allReduce(b, sb);
  const unsigned r = sa.dims.size();
  auto plain = [](Value v) { return !v.getType().cast<RankedTensorType>().getEncoding(); };
  // Batch dims: agree; split on one side only, the other takes its part.
  for (unsigned d = 0; d + 2 < r; ++d) {
    if (sa.dims[d] == sb.dims[d]) continue;
    if (sb.dims[d].empty() && plain(b)) b = localPart(b, sb, d, sa.dims[d]);
    else if (sa.dims[d].empty() && plain(a)) a = localPart(a, sa, d, sb.dims[d]);
    else {
      a = gatherDim(a, sa, d);
      b = gatherDim(b, sb, d);
    }
  }
  // The axes M, N and the batch dims keep.
  auto kept = [&](const std::string& x) {
    if (x.empty()) return false;
    for (unsigned d = 0; d + 2 < r; ++d)
      if (overlaps(sa.dims[d], x)) return true;
    return overlaps(sa.dims[r - 2], x) || overlaps(sb.dims[r - 1], x);
  };
  // K split on one side only: the whole side takes its part (the result is
  // then a partial sum, at most an all_reduce of it later) when that moves
  // fewer bytes than gathering the split side.
  const std::string ka = sa.dims[r - 1], kb = sb.dims[r - 2];
  if (ka != kb && (ka.empty() || kb.empty())) {
    const std::string& x = ka.empty() ? kb : ka;
    Value split = ka.empty() ? b : a, whole = ka.empty() ? a : b;
    // The result's bytes on one device: split where M, N and batch are.
    auto rt = op.getResult().getType().cast<RankedTensorType>();
    int64_t resultBytes = rt.getNumElements() * std::max<int64_t>(1, rt.getElementTypeBitWidth() / 8);
    for (unsigned d = 0; d + 2 < r; ++d) resultBytes /= axisSize(sa.dims[d]);
    resultBytes /= axisSize(sa.dims[r - 2]) * axisSize(sb.dims[r - 1]);
    const int64_t reduceLater = 2 * resultBytes * (axisSize(x) - 1) / axisSize(x);
    if (!kept(x) && plain(whole) && choose(reduceLater < gatherCost(split, x) ? 1 : 0, 2) == 1) {
      if (ka.empty()) a = localPart(a, sa, r - 1, x);
      else b = localPart(b, sb, r - 2, x);
    }
  }
  // K: split alike on both sides -> a partial sum; otherwise whole.
  Sharding out;
  if (sa.dims[r - 1] != sb.dims[r - 2]) {
    a = gatherDim(a, sa, r - 1);
    b = gatherDim(b, sb, r - 2);
  } else if (!sa.dims[r - 1].empty()) {
    insertAxes(out.partial, sa.dims[r - 1]);
  }
  // M and N over the same axis cannot both stay: N is gathered, or M
  // narrowed to the prefix of its axes that N does not use (an all_gather
  // of a's rows over the rest: Megatron's sequence parallelism before the
  // column-split matmul), whichever moves fewer bytes.
  if (overlaps(sa.dims[r - 2], sb.dims[r - 1])) {
    SmallVector<std::string> m = axesOf(sa.dims[r - 2]);
    std::string prefix;
    for (const std::string& x : m) {
      if (overlaps(x, sb.dims[r - 1])) break;
      prefix = prefix.empty() ? x : prefix + kJoin + x;
    }
    const int64_t narrow = bytes(a) * (axisSize(sa.dims[r - 2]) / axisSize(prefix) - 1);
    if (plain(a) && choose(narrow < gatherCost(b, sb.dims[r - 1]) ? 1 : 0, 2) == 1) a = gatherTo(a, sa, r - 2, prefix);
    else b = gatherDim(b, sb, r - 1);
  }
  for (unsigned d = 0; d + 2 < r; ++d) out.dims.push_back(sa.dims[d]);
  out.dims.push_back(sa.dims[r - 2]);
  out.dims.push_back(sb.dims[r - 1]);
  if (conflicting(out)) return replicated(op);  // an axis twice: keep it simple
  return emit(op, {a, b}, out);
}

LogicalResult Propagator::transpose(TransposeOp op) {
  Value v = local_[op.getInput()];
  const Sharding& s = sharding_[v];
  Sharding out;
  out.partial = s.partial;  // a permutation is linear
  for (int64_t k : op.getPerm()) out.dims.push_back(s.dims[k]);
  return emit(op, {v}, out);
}

LogicalResult Propagator::reduce(ReduceOp op) {
  Value v = local_[op.getInput()];
  Sharding s = sharding_[v];
  const ReduceKind kind = op.getKind();
  if (kind != ReduceKind::sum && kind != ReduceKind::mean) v = allReduce(v, s);
  std::set<std::string> over;  // reduced sharded dims' axes
  for (int64_t d : op.getDims()) insertAxes(over, s.dims[d]);
  Sharding out;
  out.partial = s.partial;
  const bool keep = op.keepsDims();
  for (unsigned d = 0; d < s.dims.size(); ++d) {
    const bool reduced = llvm::is_contained(op.getDims(), static_cast<int64_t>(d));
    if (!reduced) out.dims.push_back(s.dims[d]);
    else if (keep) out.dims.push_back("");
  }
  if (failed(emit(op, {v}, out))) return failure();
  if (over.empty()) return success();
  Value r = local_[op.getResult()];
  Sharding rs = sharding_[r];
  if (kind == ReduceKind::max || kind == ReduceKind::min) {
    // The local extrema, then the extremum over the devices.
    r = b_.create<AllReduceOp>(loc_, r.getType(), r, mesh_.getSymName(), axes(over), kind);
  } else {
    rs.partial.insert(over.begin(), over.end());
    if (annotate_) r.getDefiningOp()->setAttr(kShardingAttr, toAttr(rs));
    if (kind == ReduceKind::mean) {  // each local mean covers 1/n of the elements
      int64_t n = 1;
      for (const std::string& a : over) n *= axisSize(a);
      auto et = r.getType().cast<RankedTensorType>().getElementType();
      auto splat = DenseElementsAttr::get(RankedTensorType::get({1}, et),
                                          b_.getFloatAttr(et, 1.0 / static_cast<double>(n)).cast<Attribute>());
      Value c = b_.create<arith::ConstantOp>(loc_, splat);
      r = b_.create<MulOp>(loc_, r.getType(), r, c);
    }
  }
  local_[op.getResult()] = r;
  sharding_[r] = rs;
  return success();
}

// softmax / layernorm / rmsnorm: `dim` whole; the other operands (gamma,
// beta) replicated.
LogicalResult Propagator::rowOp(Operation* op, int64_t dim) {
  SmallVector<Value> vals;
  Value x = local_[op->getOperand(0)];
  Sharding s = sharding_[x];
  x = allReduce(x, s);
  x = gatherDim(x, s, static_cast<unsigned>(dim));
  vals.push_back(x);
  for (Value o : op->getOperands().drop_front()) {
    Value v = local_[o];
    Sharding os = sharding_[v];
    vals.push_back(replicate(v, os));
  }
  return emit(op, vals, s);
}

// Reshape: the dims form groups whose sizes multiply to the same product
// on both sides ([S, H*dh] -> [S, H, dh]: {S}->{S}, {H*dh}->{H, dh}). A
// group keeps a split when its split input dim is its leading one (the
// dims before it of size 1) and its leading output dim divides over the
// axis: in row-major order each device's part is then one contiguous run
// of the group, which is the part of that output dim. Heads split from
// the model dim, and merged back, stay where they are. Partial sums pass.
LogicalResult Propagator::reshape(ReshapeOp op) {
  Value v = local_[op.getInput()];
  Sharding s = sharding_[v];
  ArrayRef<int64_t> in = op.getInput().getType().cast<RankedTensorType>().getShape();
  ArrayRef<int64_t> out = op.getResult().getType().cast<RankedTensorType>().getShape();
  Sharding o;
  o.dims.assign(out.size(), "");
  o.partial = s.partial;
  const bool empty = llvm::is_contained(in, 0) || llvm::is_contained(out, 0);
  size_t i = 0, k = 0;
  while (!empty && (i < in.size() || k < out.size())) {
    const size_t i0 = i, k0 = k;
    int64_t pi = i < in.size() ? in[i++] : 1, po = k < out.size() ? out[k++] : 1;
    while (pi != po) {
      if (pi < po && i < in.size()) pi *= in[i++];
      else if (k < out.size()) po *= out[k++];
      else break;
    }
    SmallVector<size_t> split;
    for (size_t d = i0; d < i; ++d)
      if (!s.dims[d].empty()) split.push_back(d);
    if (split.empty()) continue;
    size_t lead = k0;
    while (lead + 1 < k && out[lead] == 1) ++lead;
    const bool leading = split.size() == 1 && llvm::all_of(in.slice(i0, split[0] - i0), [](int64_t n) { return n == 1; });
    if (leading && lead < k && out[lead] % axisSize(s.dims[split[0]]) == 0) {
      o.dims[lead] = s.dims[split[0]];
      continue;
    }
    for (size_t d : split) v = gatherDim(v, s, d);
  }
  if (empty) v = replicate(v, s), o.partial.clear();
  return emit(op, {v}, o);
}

// Slice and pad: the dims they cut or extend (`touched`) whole, the others
// keep their split. A slice is linear (partial sums pass); a pad only with
// 0 around.
LogicalResult Propagator::window(Operation* op, ArrayRef<bool> touched, bool linear) {
  Value v = local_[op->getOperand(0)];
  Sharding s = sharding_[v];
  const Sharding in = s;
  if (!linear) v = allReduce(v, s);
  for (unsigned d = 0; d < touched.size(); ++d)
    if (touched[d]) v = gatherDim(v, s, d);
  if (failed(emit(op, {v}, s))) return failure();
  for (unsigned d = 0; d < touched.size(); ++d)
    if (touched[d] && !in.dims[d].empty()) splitAgain(op, d, in.dims[d]);
  return success();
}

void Propagator::splitAgain(Operation* op, unsigned d, const std::string& a) {
  Value old = op->getResult(0);
  Value v = local_[old];
  Sharding s = sharding_[v];
  auto t = v.getType().cast<RankedTensorType>();
  if (t.getEncoding() || t.getDimSize(d) % axisSize(a) != 0 || touches(s.partial, a) ||
      llvm::any_of(s.dims, [&](const std::string& k) { return overlaps(k, a); }))
    return;
  // Returned as it is with dim d whole: splitting it would only add a
  // gather at the return.
  if (auto r = returned_.find(old); r != returned_.end() && r->second[d] != a) return;
  if (choose(1, 2) == 1) local_[old] = localPart(v, s, d, a);
}

// Concat: the joined dim whole; every other dim keeps the axis under which
// most operand bytes are split (the other operands take their parts or are
// gathered, as for elementwise ops). Partial sums pass when every operand
// is partial over the same axes.
LogicalResult Propagator::concat(ConcatOp op) {
  const unsigned c = static_cast<unsigned>(op.getDim());
  SmallVector<Value> vals;
  SmallVector<Sharding> shs;
  for (Value x : op.getInputs()) {
    vals.push_back(local_[x]);
    shs.push_back(sharding_[local_[x]]);
  }
  const bool keep = llvm::all_of(shs, [&](const Sharding& x) { return x.partial == shs[0].partial; });
  Sharding out;
  out.dims.assign(shs[0].dims.size(), "");
  if (keep) out.partial = shs[0].partial;
  std::set<std::string> used(out.partial.begin(), out.partial.end());
  for (unsigned d = 0; d < out.dims.size(); ++d) {
    if (d == c) continue;
    std::map<std::string, int64_t> held;
    for (size_t i = 0; i < vals.size(); ++i)
      if (!shs[i].dims[d].empty()) held[shs[i].dims[d]] += bytes(vals[i]);
    out.dims[d] = mostHeld(held, used);
    insertAxes(used, out.dims[d]);
  }
  // Without a layout every operand can take its part; otherwise the dim
  // stays whole.
  for (unsigned d = 0; d < out.dims.size(); ++d)
    if (!out.dims[d].empty() &&
        llvm::any_of(vals, [](Value x) { return bool(x.getType().cast<RankedTensorType>().getEncoding()); }))
      out.dims[d] = "";
  // The joined dim, when operands were split along it, is split again
  // after the concat over the axis holding most of their bytes.
  std::map<std::string, int64_t> joined;
  for (size_t i = 0; i < vals.size(); ++i)
    if (!shs[i].dims[c].empty()) joined[shs[i].dims[c]] += bytes(vals[i]);
  const std::string again = mostHeld(joined, used);
  for (size_t i = 0; i < vals.size(); ++i) {
    if (!keep) vals[i] = allReduce(vals[i], shs[i]);
    for (unsigned d = 0; d < out.dims.size(); ++d) {
      if (shs[i].dims[d] == out.dims[d]) continue;
      vals[i] = gatherDim(vals[i], shs[i], d);
      if (!out.dims[d].empty()) vals[i] = localPart(vals[i], shs[i], d, out.dims[d]);
    }
  }
  if (failed(emit(op, vals, out))) return failure();
  if (!again.empty()) splitAgain(op, c, again);
  return success();
}

// broadcast_in_dim: input dim k becomes result dim dims[k] with its split
// (a stretched dim has size 1, never split); the new dims are whole.
// Linear: partial sums pass.
LogicalResult Propagator::broadcastInDim(BroadcastInDimOp op) {
  Value v = local_[op.getInput()];
  Sharding s = sharding_[v];
  auto in = op.getInput().getType().cast<RankedTensorType>();
  auto rt = op.getResult().getType().cast<RankedTensorType>();
  Sharding out;
  out.dims.assign(rt.getRank(), "");
  out.partial = s.partial;
  for (auto [k, d] : llvm::enumerate(op.getDims())) {
    if (in.getDimSize(k) != rt.getDimSize(d)) v = gatherDim(v, s, k);
    out.dims[d] = s.dims[k];
  }
  return emit(op, {v}, out);
}

// gather (embedding lookup): the table's other dims keep their split; the
// indices keep theirs, so tokens split over a data-parallel axis look up
// their rows locally. The result is the indices' dims then the table's.
// Linear in the table. Rows split over an axis (a vocabulary-parallel
// table) stay split when all-reducing the result later moves fewer bytes
// than gathering the table (Megatron's embedding): each device looks up
// the indices in its rows and zeroes the others, a partial sum.
LogicalResult Propagator::gather(GatherOp op) {
  Value table = local_[op.getTable()], idx = local_[op.getIndices()];
  Sharding ts = sharding_[table], is = sharding_[idx];
  idx = allReduce(idx, is);
  std::string rowsAxis;
  if (const std::string& a = ts.dims[0];
      !a.empty() && !table.getType().cast<RankedTensorType>().getEncoding() &&
      llvm::none_of(is.dims, [&](const std::string& k) { return overlaps(k, a); }) && !touches(ts.partial, a)) {
    auto tt = table.getType().cast<RankedTensorType>();
    int64_t resultBytes = idx.getType().cast<RankedTensorType>().getNumElements() *
                          std::max<int64_t>(1, tt.getElementTypeBitWidth() / 8);
    for (int64_t d = 1; d < tt.getRank(); ++d) resultBytes *= tt.getDimSize(d);
    if (choose(2 * resultBytes * (axisSize(a) - 1) / axisSize(a) < gatherCost(table, a) ? 1 : 0, 2) == 1)
      rowsAxis = a;
  }
  if (rowsAxis.empty()) table = gatherDim(table, ts, 0);
  Sharding out;
  out.partial = ts.partial;
  insertAxes(out.partial, rowsAxis);
  std::set<std::string> used(out.partial.begin(), out.partial.end());
  for (unsigned d = 0; d < is.dims.size(); ++d) {
    if (touches(used, is.dims[d])) idx = gatherDim(idx, is, d);
    insertAxes(used, is.dims[d]);
    out.dims.push_back(is.dims[d]);
  }
  for (unsigned d = 1; d < ts.dims.size(); ++d) {
    if (touches(used, ts.dims[d])) table = gatherDim(table, ts, d);
    insertAxes(used, ts.dims[d]);
    out.dims.push_back(ts.dims[d]);
  }
  if (rowsAxis.empty()) return emit(op, {table, idx}, out);
  // The global clamp first (gather's own: an index past the ends reads the
  // first or last row of the whole table), then the device's rows
  // [c * rows, (c + 1) * rows) by its coordinate c.
  auto global = op.getTable().getType().cast<RankedTensorType>();
  const int64_t vocab = global.getDimSize(0), rows = vocab / axisSize(rowsAxis);
  auto it = idx.getType().cast<RankedTensorType>();
  Type i32 = it.getElementType();
  Value x = b_.create<MaxOp>(loc_, it, idx, constant(i32, 0));
  x = b_.create<MinOp>(loc_, it, x, constant(i32, static_cast<double>(vocab - 1)));
  auto one = RankedTensorType::get({1}, i32);
  Value first = b_.create<MulOp>(loc_, one, coordinate(rowsAxis), constant(i32, static_cast<double>(rows)));
  x = b_.create<SubOp>(loc_, it, x, first);
  FailureOr<RankedTensorType> rt = localType(op, op.getResult().getType().cast<RankedTensorType>(), out);
  if (failed(rt)) return failure();
  Value r = b_.create<GatherOp>(loc_, *rt, table, x);
  // In range: 0 <= x < rows, as masks [indices..., 1, ...] against the rows.
  SmallVector<int64_t> maskShape(it.getShape());
  maskShape.append(global.getRank() - 1, 1);
  auto maskType = RankedTensorType::get(maskShape, b_.getI1Type());
  Value zero = constant(global.getElementType(), 0.0);
  for (auto [pred, bound] : {std::make_pair(ComparePredicate::ge, int64_t{0}), std::make_pair(ComparePredicate::lt, rows)}) {
    Value m = b_.create<CompareOp>(loc_, pred, x, constant(i32, static_cast<double>(bound)));
    m = b_.create<ReshapeOp>(loc_, maskType, m);
    r = b_.create<SelectOp>(loc_, m, r, zero);
  }
  if (annotate_) r.getDefiningOp()->setAttr(kShardingAttr, toAttr(out));
  local_[op.getResult()] = r;
  sharding_[r] = out;
  return success();
}

LogicalResult Propagator::replicated(Operation* op) {
  SmallVector<Value> vals;
  for (Value o : op->getOperands()) {
    Value v = local_[o];
    Sharding s = sharding_[v];
    vals.push_back(replicate(v, s));
  }
  Sharding out;
  out.dims.assign(op->getResult(0).getType().cast<RankedTensorType>().getRank(), "");
  return emit(op, vals, out);
}

void Propagator::lookAhead(ArrayRef<Sharding> results) {
  Block& body = fn_.getBody().front();
  auto want = [&](Value v, ArrayRef<std::string> dims) {
    if (llvm::all_of(dims, [](const std::string& a) { return a.empty(); }) || wanted_.count(v)) return;
    wanted_[v] = SmallVector<std::string>(dims.begin(), dims.end());
  };
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands())) {
    want(v, results[i].dims);
    returned_.try_emplace(v, results[i].dims);
  }
  for (Operation& op : llvm::reverse(body.without_terminator())) {
    if (op.getNumResults() != 1) continue;
    auto it = wanted_.find(op.getResult(0));
    if (it == wanted_.end()) continue;
    const SmallVector<std::string> dims = it->second;
    if (auto t = dyn_cast<TransposeOp>(op)) {
      SmallVector<std::string> in(dims.size());
      for (auto [k, p] : llvm::enumerate(t.getPerm())) in[p] = dims[k];
      want(t.getInput(), in);
    } else if (isElementwise(&op)) {
      for (Value o : op.getOperands())
        if (o.getType() == op.getResult(0).getType() ||
            (o.getType().isa<RankedTensorType>() &&
             o.getType().cast<RankedTensorType>().getShape() == op.getResult(0).getType().cast<RankedTensorType>().getShape()))
          want(o, dims);
    }
  }
}

Value Propagator::position() {
  if (position_) return position_;
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(b_.getInsertionBlock());
  position_ = b_.create<MeshPositionOp>(fn_.getLoc(), RankedTensorType::get({1}, b_.getI32Type()),
                                        mesh_.getSymName());
  sharding_[position_].dims.assign(1, "");
  return position_;
}

// A stochastic cast of a partitioned tensor keys its random bits by the
// element's index in the global tensor (so the bits are the single-device
// program's): the device's position and the global strides go with it.
LogicalResult Propagator::stochasticCast(CastOp op) {
  if (failed(elementwise(op))) return failure();
  Value local = local_[op.getResult()];
  const Sharding& s = sharding_[local];
  if (llvm::all_of(s.dims, [](const std::string& a) { return a.empty(); })) return success();
  auto global = op.getResult().getType().cast<RankedTensorType>();
  auto localType = local.getType().cast<RankedTensorType>();
  const int64_t rank = global.getRank();
  SmallVector<int64_t> strides = op.indexStrides();  // the global (row-major) tensor's
  SmallVector<int64_t> meshShape(mesh_.getShape()), offsets;
  for (Attribute axis : mesh_.getAxes()) {
    int64_t offset = 0;  // a device's first element per unit of its coordinate
    for (int64_t d = 0; d < rank; ++d) {
      // Along a dim over several axes, a unit of an axis skips the blocks
      // of the axes after it in the key.
      SmallVector<std::string> list = axesOf(s.dims[d]);
      int64_t blocks = 1;
      for (size_t j = list.size(); j-- > 0;) {
        if (list[j] == axis.cast<StringAttr>().getValue()) {
          offset += blocks * localType.getDimSize(d) * strides[d];
          break;
        }
        blocks *= mesh_.axisSize(list[j]);
      }
    }
    offsets.push_back(offset);
  }
  auto cast = cast_or_null<CastOp>(local.getDefiningOp());
  if (!cast) return op.emitOpError("lost its stochastic cast while placing it"), failure();
  cast.getPositionMutable().assign(position());
  cast.setGlobalStridesAttr(b_.getDenseI64ArrayAttr(strides));
  cast.setMeshShapeAttr(b_.getDenseI64ArrayAttr(meshShape));
  cast.setMeshOffsetsAttr(b_.getDenseI64ArrayAttr(offsets));
  return success();
}

LogicalResult Propagator::visit(Operation* op) {
  loc_ = op->getLoc();
  if (isa<AllReduceOp, AllGatherOp, ReduceScatterOp, BroadcastOp, MeshPositionOp>(op))
    return op->emitOpError() << "in a `tessera.global_view` function: collectives and mesh positions are what "
                                "--tessera-shard-propagation inserts; write the program on global tensors";
  if (auto c = dyn_cast<CastOp>(op); c && c.getPosition())
    return op->emitOpError() << "in a `tessera.global_view` function keys its random bits by the global index "
                                "already: leave out the mesh position, --tessera-shard-propagation adds it";
  if (auto c = dyn_cast<CastOp>(op); c && c.isStochastic()) return stochasticCast(c);
  if (op->getNumResults() != 1 || !op->getResult(0).getType().isa<RankedTensorType>())
    return op->emitOpError() << "is not a Graph IR op on tensors: --tessera-shard-propagation cannot place it";
  if (auto mm = dyn_cast<MatmulOp>(op)) return matmul(mm);
  if (auto t = dyn_cast<TransposeOp>(op)) return transpose(t);
  if (isElementwise(op)) return elementwise(op);
  if (auto r = dyn_cast<ReduceOp>(op)) return reduce(r);
  if (auto sm = dyn_cast<SoftmaxOp>(op)) return rowOp(op, static_cast<int64_t>(sm.getDim()));
  if (isa<LayerNormOp, RmsNormOp>(op))
    return rowOp(op, op->getOperand(0).getType().cast<RankedTensorType>().getRank() - 1);
  if (auto r = dyn_cast<ReshapeOp>(op)) return reshape(r);
  if (auto sl = dyn_cast<SliceOp>(op)) {
    auto in = sl.getInput().getType().cast<RankedTensorType>();
    auto rt = sl.getResult().getType().cast<RankedTensorType>();
    SmallVector<bool> touched;
    for (int64_t d = 0; d < in.getRank(); ++d)
      touched.push_back(sl.getOffsets()[d] != 0 || sl.getStrides()[d] != 1 || in.getDimSize(d) != rt.getDimSize(d));
    return window(op, touched, /*linear=*/true);
  }
  if (auto p = dyn_cast<PadOp>(op)) {
    SmallVector<bool> touched;
    for (auto [lo, hi] : llvm::zip(p.getLow(), p.getHigh())) touched.push_back(lo != 0 || hi != 0);
    return window(op, touched, /*linear=*/p.getValue().convertToDouble() == 0.0);
  }
  if (auto c = dyn_cast<ConcatOp>(op)) return concat(c);
  if (auto bc = dyn_cast<BroadcastInDimOp>(op)) return broadcastInDim(bc);
  if (auto g = dyn_cast<GatherOp>(op)) return gather(g);
  return replicated(op);  // constants, iota, argmax, layouts, quantization
}

FailureOr<func::FuncOp> Propagator::run() {
  Block& body = fn_.getBody().front();
  // The local signature.
  SmallVector<Type> args, results;
  SmallVector<Sharding> argS;
  for (unsigned i = 0; i < fn_.getNumArguments(); ++i) {
    auto t = fn_.getArgumentTypes()[i].cast<RankedTensorType>();
    Sharding s = fromAttr(fn_.getArgAttrOfType<ShardAttr>(i, kShardingAttr), t.getRank());
    FailureOr<RankedTensorType> lt = localType(fn_, t, s);
    if (failed(lt)) return failure();
    args.push_back(*lt);
    argS.push_back(s);
  }
  SmallVector<Sharding> resS;
  for (unsigned i = 0; i < fn_.getNumResults(); ++i) {
    auto t = fn_.getResultTypes()[i].cast<RankedTensorType>();
    Sharding s = fromAttr(fn_.getResultAttrOfType<ShardAttr>(i, kShardingAttr), t.getRank());
    FailureOr<RankedTensorType> lt = localType(fn_, t, s);
    if (failed(lt)) return failure();
    results.push_back(*lt);
    resS.push_back(s);
  }
  auto local = func::FuncOp::create(fn_.getLoc(), fn_.getName(), b_.getFunctionType(args, results));
  local->setAttrs(fn_->getAttrs());
  local->removeAttr(kGlobalViewAttr);
  local.setFunctionType(b_.getFunctionType(args, results));
  Block* entry = local.addEntryBlock();
  b_.setInsertionPointToStart(entry);
  for (unsigned i = 0; i < fn_.getNumArguments(); ++i) {
    local_[fn_.getArgument(i)] = entry->getArgument(i);
    sharding_[entry->getArgument(i)] = argS[i];
  }
  lookAhead(resS);
  for (Operation& op : body.without_terminator())
    if (failed(visit(&op))) {
      local.erase();
      return failure();
    }
  // Each result to its declared sharding.
  SmallVector<Value> outs;
  loc_ = body.getTerminator()->getLoc();
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands())) {
    Value x = local_[v];
    Sharding s = sharding_[x];
    const Sharding& want = resS[i];
    // Partial sums over an axis the result is sharded over: reduce_scatter.
    for (unsigned d = 0; d < s.dims.size(); ++d)
      if (s.dims[d] != want.dims[d] && isPrefix(s.dims[d], want.dims[d]) &&
          covers(s.partial, suffixOf(s.dims[d], want.dims[d])) &&
          !touches(want.partial, suffixOf(s.dims[d], want.dims[d])))
        x = reduceScatter(x, s, d, want.dims[d]);
    std::set<std::string> extra;
    for (const std::string& a : s.partial)
      if (!want.partial.count(a)) extra.insert(a);
    if (!extra.empty()) {
      // (made here, not by allReduce(): partial sums the result declares stay)
      x = b_.create<AllReduceOp>(loc_, x.getType(), x, mesh_.getSymName(), axes(extra), ReduceKind::sum);
      for (const std::string& a : extra) s.partial.erase(a);
      sharding_[x] = s;
    }
    if (s.partial != want.partial)
      return fn_.emitOpError() << "result " << i << " is declared partial over axes its value is not; "
                                  "declare it replicated or sharded",
             failure();
    for (unsigned d = 0; d < s.dims.size(); ++d)
      if (s.dims[d] != want.dims[d] && !isPrefix(s.dims[d], want.dims[d]))
        x = isPrefix(want.dims[d], s.dims[d]) ? gatherTo(x, s, d, want.dims[d]) : gatherDim(x, s, d);
    for (unsigned d = 0; d < s.dims.size(); ++d)
      if (s.dims[d] != want.dims[d]) {
        if (!x.getType().cast<RankedTensorType>().getEncoding()) {
          x = localPart(x, s, d, want.dims[d]);
          continue;
        }
        // A layout-encoded value: the reduce_scatter of the equal copies,
        // divided by the group size (exact when it is a power of two).
        const std::string added = suffixOf(s.dims[d], want.dims[d]);
        const int64_t n = axisSize(added);
        insertAxes(s.partial, added);
        x = reduceScatter(x, s, d, want.dims[d]);
        auto lt = x.getType().cast<RankedTensorType>();
        x = b_.create<MulOp>(loc_, lt, x, constant(lt.getElementType(), 1.0 / static_cast<double>(n)));
        sharding_[x] = s;
      }
    outs.push_back(x);
  }
  b_.create<func::ReturnOp>(loc_, outs);
  return local;
}

// The search over the choice points (docs/spmd.md, "The search"): the
// rules' function first; then other options, every combination of the
// first run's points when there are at most `runs` of them, else one point
// at a time from the best so far, repeated while that gains. The cheapest
// function by spmdCost is kept, the rules' own on a tie. Each run places
// the whole function again: a choice changes what every later op sees.
// What the search did, for the annotated (printed) function.
struct SearchReport {
  int placements = 1;
  double rulesCost = 0, cost = 0;
};

FailureOr<func::FuncOp> search(func::FuncOp fn, MeshOp mesh, bool annotate, int runs, SearchReport* report) {
  Propagator first(fn, mesh, annotate);
  FailureOr<func::FuncOp> best = first.run();
  if (failed(best)) return best;
  double bestCost = spmdCost(*best, mesh);
  report->rulesCost = report->cost = bestCost;
  if (runs <= 1) return best;
  std::vector<int> bestPicks(first.picks().begin(), first.picks().end());
  std::vector<int> counts(first.optionCounts().begin(), first.optionCounts().end());
  const std::vector<int> rules = bestPicks, points = counts;
  // A candidate that cannot be placed (a part that does not divide) is
  // dropped without a word: the rules' function stands.
  ScopedDiagnosticHandler quiet(fn.getContext(), [](Diagnostic&) { return success(); });
  int made = 1;
  auto attempt = [&](const std::vector<int>& overrides) {
    ++made;
    Propagator p(fn, mesh, annotate, overrides);
    FailureOr<func::FuncOp> f = p.run();
    if (failed(f)) return;
    const double cost = spmdCost(*f, mesh);
    if (cost >= bestCost * (1 - 1e-9)) {
      f->erase();
      return;
    }
    best->erase();
    best = f;
    bestCost = cost;
    bestPicks.assign(p.picks().begin(), p.picks().end());
    counts.assign(p.optionCounts().begin(), p.optionCounts().end());
  };
  double combinations = 1;
  for (int n : points) combinations *= n;
  if (combinations <= runs) {
    std::vector<int> o(points.size(), 0);
    for (bool more = !points.empty(); more;) {
      if (o != rules) attempt(o);
      more = false;
      for (size_t i = o.size(); i-- > 0;) {  // the next combination
        if (++o[i] < points[i]) {
          more = true;
          break;
        }
        o[i] = 0;
      }
    }
    report->placements = made;
    report->cost = bestCost;
    return best;
  }
  for (bool gained = true; gained && made < runs;) {
    gained = false;
    for (size_t i = 0; i < counts.size() && made < runs; ++i)
      for (int k = 0; i < counts.size() && k < counts[i] && made < runs; ++k) {
        if (k == bestPicks[i]) continue;
        std::vector<int> o = bestPicks;
        o[i] = k;
        const double before = bestCost;
        attempt(o);
        gained = gained || bestCost < before;
      }
  }
  report->placements = made;
  report->cost = bestCost;
  return best;
}

}  // namespace

LogicalResult propagateShardings(func::FuncOp fn, bool annotate, int searchRuns) {
  MeshOp mesh;
  auto module = fn->getParentOfType<ModuleOp>();
  auto pick = [&](ShardAttr s) {
    if (s && !mesh) mesh = module.lookupSymbol<MeshOp>(s.getMesh().getValue());
  };
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) pick(fn.getArgAttrOfType<ShardAttr>(i, kShardingAttr));
  for (unsigned i = 0; i < fn.getNumResults(); ++i) pick(fn.getResultAttrOfType<ShardAttr>(i, kShardingAttr));
  if (!mesh)
    return fn.emitOpError() << "is marked `" << kGlobalViewAttr.str()
                            << "` but no argument or result names a mesh in its tessera_graph.sharding";
  if (!fn.getBody().hasOneBlock()) return fn.emitOpError("has several blocks");
  SearchReport report;
  FailureOr<func::FuncOp> local = search(fn, mesh, annotate, searchRuns, &report);
  if (failed(local)) return failure();
  if (annotate) {
    // Printed with the decisions: how many placements were made, and the
    // cost (ShardCost.h) of the one kept and of the rules' own.
    Builder b(fn.getContext());
    (*local)->setAttr(kShardSearchAttr,
                      b.getDictionaryAttr({b.getNamedAttr("placements", b.getI64IntegerAttr(report.placements)),
                                           b.getNamedAttr("cost", b.getF64FloatAttr(report.cost)),
                                           b.getNamedAttr("rules_cost", b.getF64FloatAttr(report.rulesCost))}));
  }
  fn->getBlock()->getOperations().insert(Block::iterator(fn), *local);
  StringAttr name = fn.getNameAttr();
  fn.erase();
  (*local).setName(name);
  return success();
}

LogicalResult propagateGlobalViewShardings(ModuleOp module, bool annotate, int searchRuns) {
  SmallVector<func::FuncOp> fns;
  module.walk([&](func::FuncOp f) {
    if (f->hasAttr(kGlobalViewAttr)) fns.push_back(f);
  });
  for (func::FuncOp f : fns)
    if (failed(propagateShardings(f, annotate, searchRuns))) return failure();
  return success();
}

namespace {
struct ShardPropagationPass : impl::ShardPropagationBase<ShardPropagationPass> {
  using ShardPropagationBase::ShardPropagationBase;
  void runOnOperation() override {
    if (failed(propagateGlobalViewShardings(getOperation(), /*annotate=*/true, searchRuns))) signalPassFailure();
  }
};
}  // namespace

}  // namespace tessera::graph
