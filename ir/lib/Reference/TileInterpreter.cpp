//===- TileInterpreter.cpp - Tile IR kernels run on the host --------------===//
#include "tessera/Reference/TileInterpreter.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "LaneFibers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "tessera/Dialect/Schedule/IR/Schedule.h"
#include "tessera/Dialect/Tile/IR/Tile.h"
#include "tessera/element_types.hpp"

namespace tessera::reference {
namespace {

using namespace mlir;

// ------------------------------------------------------------------ values

struct Storage {
  std::vector<double> data;
};

struct MemRefVal {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;
  SmallVector<int64_t> shape, strides;
  Type element;
};

// A scalar (one value), a vector (row-major values) or a memref.
struct Val {
  std::vector<double> v;
  std::shared_ptr<MemRefVal> m;
};

struct InterpError {
  std::string message;
  TileFailure kind = TileFailure::kOther;
};

// "file:line:col" (as diagnostics print it), else MLIR's form of the location.
std::string LocationText(Location loc) {
  if (auto f = loc.dyn_cast<FileLineColLoc>())
    return f.getFilename().str() + ":" + std::to_string(f.getLine()) + ":" + std::to_string(f.getColumn());
  if (auto n = loc.dyn_cast<NameLoc>()) return LocationText(n.getChildLoc());
  if (auto c = loc.dyn_cast<CallSiteLoc>()) return LocationText(c.getCallee());
  if (auto f = loc.dyn_cast<FusedLoc>())
    for (Location l : f.getLocations())
      if (l.isa<FileLineColLoc>()) return LocationText(l);
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return os.str();
}

[[noreturn]] void Fail(Operation *op, const Twine &what, TileFailure kind = TileFailure::kOther) {
  throw InterpError{LocationText(op->getLoc()) + ": '" + op->getName().getStringRef().str() + "': " + what.str(), kind};
}

int IntWidth(Type t) {
  if (t.isIndex()) return 64;
  if (auto i = t.dyn_cast<IntegerType>()) return static_cast<int>(i.getWidth());
  return 0;
}

// The low 64 bits of the integer trunc(x) (NaN and infinities: 0), with no
// conversion out of range: casting a double at or past 2^63 to int64 is
// undefined behaviour (an i64 product of two large values reaches it).
uint64_t Bits64(double x) {
  if (!std::isfinite(x)) return 0;
  constexpr double k2To63 = 9223372036854775808.0, k2To64 = 18446744073709551616.0;
  double r = std::fmod(std::trunc(x), k2To64);  // exact, in (-2^64, 2^64)
  if (r >= k2To63) r -= k2To64;                 // exact there
  if (r < -k2To63) r += k2To64;
  return static_cast<uint64_t>(static_cast<int64_t>(r));
}
// An index or count held as a double, as int64 (saturated; NaN: 0).
int64_t ToInt64(double x) {
  if (std::isnan(x)) return 0;
  if (x >= 9223372036854775808.0) return INT64_MAX;
  if (x < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(x);
}

// Two's complement wrap to `width` bits, as a signed value.
double WrapSigned(double x, int width) {
  if (width >= 64) return static_cast<double>(static_cast<int64_t>(Bits64(x)));
  if (width == 1) return std::fmod(std::fabs(x), 2.0) != 0 ? 1 : 0;  // i1 holds 0 / 1
  uint64_t u = Bits64(x);
  u &= (uint64_t{1} << width) - 1;
  if (u >> (width - 1)) return static_cast<double>(static_cast<int64_t>(u) - (int64_t{1} << width));
  return static_cast<double>(u);
}
uint64_t AsUnsigned(double x, int width) {
  uint64_t u = Bits64(x);
  return width >= 64 ? u : u & ((uint64_t{1} << width) - 1);
}

// The value `x` becomes when held in type `t`.
double Round(double x, Type t) {
  if (t.isF32()) return static_cast<double>(static_cast<float>(x));
  if (t.isF64()) return x;
  if (t.isF16()) return elements::RoundTo(x, "f16");
  if (t.isBF16()) return elements::RoundTo(x, "bf16");
  if (t.isFloat8E4M3FN()) return elements::RoundTo(x, "f8E4M3FN");
  if (t.isFloat8E5M2()) return elements::RoundTo(x, "f8E5M2");
  if (int w = IntWidth(t)) return WrapSigned(x, w);
  return x;
}

Type ElementOf(Type t) {
  if (auto v = t.dyn_cast<VectorType>()) return v.getElementType();
  if (auto m = t.dyn_cast<MemRefType>()) return m.getElementType();
  return t;
}

// --------------------------------------------------------------- the state

struct Lane {
  size_t index = 0;
  int64_t id[3] = {0, 0, 0};
  DenseMap<Value, Val> env;
  // At a collective op: the op, this lane's operand and, once resolved, the result.
  Operation *wait = nullptr;
  double operand = 0, offset = 0, result = 0;
  // Per stage: how many tile_load_wait / tile_load_acquire this lane has
  // passed (the next one's expected phase is the count's parity).
  std::map<int64_t, int64_t> stage_waits, stage_acquires;
  int64_t wait_stage = 0;  // the stage of `wait` when it is a stage op
};

class Interpreter {
 public:
  Interpreter(func::FuncOp kernel, const TileLaunch &launch) : kernel_(kernel), launch_(launch) {}

  std::string Run(std::vector<TileArgument> *args);
  TileFailure failure() const { return failure_; }

 private:
  // ---- execution
  void RunRegionBlock(Lane &lane, Block &block, SmallVectorImpl<Val> *results);
  void Execute(Lane &lane, Operation &op);
  Val &Get(Lane &lane, Value v) {
    auto it = lane.env.find(v);
    if (it == lane.env.end()) Fail(v.getDefiningOp() ? v.getDefiningOp() : kernel_, "a value used before it is defined");
    return it->second;
  }
  void Set(Lane &lane, Value v, Val x) { lane.env[v] = std::move(x); }
  double Scalar(Lane &lane, Value v) { return Get(lane, v).v.at(0); }
  int64_t Index(Lane &lane, Value v) { return ToInt64(Scalar(lane, v)); }

  // Element of a memref at `idx`: checked against the shape and the storage.
  /// Element `at` of a matrix op's operand buffer as a value of
  /// `operandType` (bf16, f16): an i16 buffer holds its bits (as a signed
  /// integer).
  double MatrixOperand(Operation *op, const MemRefVal &m, int64_t at, const std::string &operandType) {
    double x = *At(op, m, {at});
    if (!m.element.isInteger(16)) return x;
    const uint16_t bits = static_cast<uint16_t>(Bits64(x));
    const unsigned char bytes[2] = {static_cast<unsigned char>(bits & 0xff), static_cast<unsigned char>(bits >> 8)};
    return elements::Decode(bytes, operandType);
  }

  /// subgroup_mma and wavefront_mma: the lane, `width` lanes to a unit,
  /// computes its own elements (`at(lane in unit, v)` -> (row, col) of C),
  /// the `k` products of each added in order, each rounded to f32.
  template <class MmaOp, class ElementAt>
  Val CooperativeMma(Lane &lane, Operation *o, MmaOp mma, int64_t width, int64_t k, ElementAt at) {
    const int64_t linear = lane.id[0] + launch_.group_size[0] * (lane.id[1] + launch_.group_size[1] * lane.id[2]);
    const int64_t q = linear % width, lda = mma.getLda(), ldb = mma.getLdb();
    const std::string ot = mma.getOperandType().isBF16() ? "bf16" : "f16";
    const Val &a = Get(lane, mma.getA()), &b = Get(lane, mma.getB()), &c = Get(lane, mma.getAcc());
    const int64_t ai = ToInt64(Scalar(lane, mma.getAIndex()));
    const int64_t bi = ToInt64(Scalar(lane, mma.getBIndex()));
    Val r = c;
    // i8 operands (wavefront_mma): exact products and sums, wrapping at 32 bits.
    const bool integer = mma.getOperandType().isInteger(8);
    for (size_t v = 0; v < r.v.size(); ++v) {
      const auto [row, col] = at(q, static_cast<int64_t>(v));
      if (integer) {
        int64_t acc = static_cast<int64_t>(r.v[v]);
        for (int64_t kk = 0; kk < k; ++kk)
          acc += static_cast<int64_t>(MatrixOperand(o, *a.m, ai + row * lda + kk, ot)) *
                 static_cast<int64_t>(MatrixOperand(o, *b.m, bi + kk * ldb + col, ot));
        r.v[v] = WrapSigned(static_cast<double>(acc), 32);
        continue;
      }
      float acc = static_cast<float>(r.v[v]);
      for (int64_t kk = 0; kk < k; ++kk)
        acc = std::fma(static_cast<float>(MatrixOperand(o, *a.m, ai + row * lda + kk, ot)),
                       static_cast<float>(MatrixOperand(o, *b.m, bi + kk * ldb + col, ot)), acc);
      r.v[v] = acc;
    }
    return r;
  }

  double *At(Operation *op, const MemRefVal &m, ArrayRef<int64_t> idx) {
    if (idx.size() != m.shape.size()) Fail(op, "wrong number of indices");
    int64_t flat = m.offset;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (idx[d] < 0 || idx[d] >= m.shape[d])
        Fail(op, "index " + Twine(idx[d]) + " out of bounds for dimension " + Twine(d) + " of size " +
                     Twine(m.shape[d]),
             TileFailure::kOutOfBounds);
      flat += idx[d] * m.strides[d];
    }
    if (flat < 0 || static_cast<size_t>(flat) >= m.storage->data.size())
      Fail(op, "access at element " + Twine(flat) + " out of bounds of its buffer of " + Twine(m.storage->data.size()),
           TileFailure::kOutOfBounds);
    return &m.storage->data[static_cast<size_t>(flat)];
  }
  SmallVector<int64_t> Indices(Lane &lane, ValueRange vs) {
    SmallVector<int64_t> out;
    for (Value v : vs) out.push_back(Index(lane, v));
    return out;
  }
  std::shared_ptr<MemRefVal> NewMemRef(MemRefType t, std::shared_ptr<Storage> s) {
    auto m = std::make_shared<MemRefVal>();
    m->storage = std::move(s);
    m->shape.assign(t.getShape().begin(), t.getShape().end());
    m->element = t.getElementType();
    int64_t offset = 0;
    SmallVector<int64_t> strides;
    if (succeeded(getStridesAndOffset(t, strides, offset)) && offset != ShapedType::kDynamic) {
      m->strides = strides;
      m->offset = offset;
    } else {
      m->strides.assign(m->shape.size(), 1);
      for (size_t d = m->shape.size(); d-- > 1;) m->strides[d - 1] = m->strides[d] * m->shape[d];
    }
    return m;
  }

  // Ops that every lane (of the group, or of the subgroup) must reach.
  static bool IsCollective(Operation &op) {
    return isa<tile::BarrierOp, schedule::BarrierOp, tile::ShuffleOp, tile::SubgroupReduceOp,
               tile::TileLoadWaitOp, tile::TileLoadAcquireOp>(op);
  }
  void Collective(Lane &lane, Operation &op);
  // tile_load_wait / tile_load_acquire: returns once the stage's commits
  // (releases) allow, yielding to the other lanes until then.
  void StageWait(Lane &lane, Operation &op);
  bool StageReady(const Lane &lane) const;
  // The stages' progress in this group: commits of each stage (a group
  // commit counted once, by lane 0), releases of each stage (per lane).
  std::map<int64_t, int64_t> commits_, releases_;
  void Resolve();

  func::FuncOp kernel_;
  TileLaunch launch_;
  std::vector<Lane> lanes_;
  LaneFibers *fibers_ = nullptr;
  int64_t group_[3] = {0, 0, 0};
  std::map<Operation *, std::shared_ptr<Storage>> shared_;  // this group's shared memory
  std::string lane_error_;
  TileFailure failure_ = TileFailure::kNone;

  // ---- the limits of TileLaunch
  uint64_t operations_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  void CountOperation(Operation &op);
};

// ------------------------------------------------------------ elementwise

template <class F>
Val Map1(const Val &a, F f) {
  Val r;
  for (double x : a.v) r.v.push_back(f(x));
  return r;
}
template <class F>
Val Map2(Operation *op, const Val &a, const Val &b, F f) {
  if (a.v.size() != b.v.size()) Fail(op, "operands of different lengths");
  Val r;
  for (size_t i = 0; i < a.v.size(); ++i) r.v.push_back(f(a.v[i], b.v[i]));
  return r;
}

bool CmpI(arith::CmpIPredicate p, double a, double b, int w) {
  using P = arith::CmpIPredicate;
  uint64_t ua = AsUnsigned(a, w), ub = AsUnsigned(b, w);
  switch (p) {
    case P::eq: return a == b;
    case P::ne: return a != b;
    case P::slt: return a < b;
    case P::sle: return a <= b;
    case P::sgt: return a > b;
    case P::sge: return a >= b;
    case P::ult: return ua < ub;
    case P::ule: return ua <= ub;
    case P::ugt: return ua > ub;
    case P::uge: return ua >= ub;
  }
  return false;
}

bool CmpF(arith::CmpFPredicate p, double a, double b) {
  using P = arith::CmpFPredicate;
  const bool uno = std::isnan(a) || std::isnan(b);
  switch (p) {
    case P::AlwaysFalse: return false;
    case P::OEQ: return !uno && a == b;
    case P::OGT: return !uno && a > b;
    case P::OGE: return !uno && a >= b;
    case P::OLT: return !uno && a < b;
    case P::OLE: return !uno && a <= b;
    case P::ONE: return !uno && a != b;
    case P::ORD: return !uno;
    case P::UEQ: return uno || a == b;
    case P::UGT: return uno || a > b;
    case P::UGE: return uno || a >= b;
    case P::ULT: return uno || a < b;
    case P::ULE: return uno || a <= b;
    case P::UNE: return uno || a != b;
    case P::UNO: return uno;
    case P::AlwaysTrue: return true;
  }
  return false;
}

// The induction variable after `i`: `ub` (the end) where i + step would
// pass INT64_MAX.
int64_t NextIteration(int64_t i, int64_t step, int64_t ub) {
  int64_t next;
  return __builtin_add_overflow(i, step, &next) ? ub : next;
}

// Float op computed in the result type: f32 in float (one rounding).
double FloatOp(Type t, double r) { return Round(r, t); }

// ----------------------------------------------------------------- driver

std::string Interpreter::Run(std::vector<TileArgument> *args) {
  auto argTypes = kernel_.getArgumentTypes();
  if (args->size() != argTypes.size())
    return "kernel " + kernel_.getName().str() + " takes " + std::to_string(argTypes.size()) + " arguments, " +
           std::to_string(args->size()) + " given";
  // Arguments: sizes checked before anything is written.
  std::vector<Val> argVals;
  std::vector<std::shared_ptr<Storage>> storages;
  for (size_t i = 0; i < argTypes.size(); ++i) {
    Val v;
    if (auto mt = argTypes[i].dyn_cast<MemRefType>()) {
      auto s = std::make_shared<Storage>();
      s->data = (*args)[i].values;
      // A 1-D buffer of any length (memref<?xT>) is as long as its values.
      const bool anyLength = mt.getRank() == 1 && mt.isDynamicDim(0);
      if (!mt.hasStaticShape() && !anyLength) return "argument " + std::to_string(i) + " has a dynamic shape";
      const int64_t need = anyLength ? static_cast<int64_t>(s->data.size()) : mt.getNumElements();
      if (static_cast<int64_t>(s->data.size()) != need)
        return "argument " + std::to_string(i) + " holds " + std::to_string(s->data.size()) +
               " values; the kernel's memref has " + std::to_string(need);
      v.m = NewMemRef(mt, s);
      if (anyLength) {
        v.m->shape = {need};
        v.m->strides = {1};
        v.m->offset = 0;
      }
      storages.push_back(s);
    } else {
      if ((*args)[i].values.size() != 1) return "scalar argument " + std::to_string(i) + " is not one value";
      v.v.push_back(Round((*args)[i].values[0], argTypes[i]));
      storages.push_back(nullptr);
    }
    argVals.push_back(std::move(v));
  }
  const auto &g = launch_.group_size;
  const size_t lanes = static_cast<size_t>(g[0]) * g[1] * g[2];
  if (lanes == 0 || lanes > 4096) return "a group of " + std::to_string(lanes) + " lanes";
  if (launch_.subgroup_size == 0) launch_.subgroup_size = 1;
  bool collective = false;
  kernel_.walk([&](Operation *op) { collective |= IsCollective(*op); });
  if (launch_.max_seconds > 0)
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(std::min(launch_.max_seconds, 1e9)));
  lanes_.assign(lanes, Lane());
  // Lanes run as fibers only when they must meet; otherwise one after the
  // other on this stack.
  std::unique_ptr<LaneFibers> fibers;
  if (collective) {
    fibers = std::make_unique<LaneFibers>(lanes, size_t{1} << 19);
    if (!fibers->ok()) return "cannot map stacks for " + std::to_string(lanes) + " lanes";
    fibers_ = fibers.get();
  }
  Block &entry = kernel_.getBody().front();
  auto laneBody = [&](size_t l) {
    Lane &lane = lanes_[l];
    try {
      for (size_t i = 0; i < argVals.size(); ++i) lane.env[entry.getArgument(i)] = argVals[i];
      SmallVector<Val> none;
      RunRegionBlock(lane, entry, &none);
    } catch (const InterpError &e) {
      if (lane_error_.empty()) lane_error_ = e.message, failure_ = e.kind;
    }
    lane.env.clear();
    lane.wait = nullptr;
  };
  const auto &grid = launch_.grid;
  for (uint32_t z = 0; z < grid[2] && lane_error_.empty(); ++z)
    for (uint32_t y = 0; y < grid[1] && lane_error_.empty(); ++y)
      for (uint32_t x = 0; x < grid[0] && lane_error_.empty(); ++x) {
        group_[0] = x, group_[1] = y, group_[2] = z;
        // A group counts as an operation: a grid of billions of groups
        // of a kernel with (almost) no ops must reach the limits too.
        if (launch_.max_operations || launch_.max_seconds > 0) {
          try {
            CountOperation(*kernel_.getOperation());
          } catch (const InterpError &e) {
            lane_error_ = e.message, failure_ = e.kind;
            continue;
          }
        }
        shared_.clear();
        commits_.clear();
        releases_.clear();
        for (size_t l = 0; l < lanes; ++l) {
          lanes_[l] = Lane();
          lanes_[l].index = l;
          lanes_[l].id[0] = static_cast<int64_t>(l % g[0]);
          lanes_[l].id[1] = static_cast<int64_t>((l / g[0]) % g[1]);
          lanes_[l].id[2] = static_cast<int64_t>(l / (static_cast<size_t>(g[0]) * g[1]));
        }
        if (!fibers_) {
          for (size_t l = 0; l < lanes && lane_error_.empty(); ++l) laneBody(l);
          continue;
        }
        fibers_->Start(laneBody);
        while (lane_error_.empty()) {
          bool running = false;
          for (size_t l = 0; l < lanes && lane_error_.empty(); ++l)
            if (!fibers_->Finished(l) && !lanes_[l].wait) {
              fibers_->Resume(l);
              running = true;
            }
          if (!lane_error_.empty()) break;
          bool all_done = true;
          for (size_t l = 0; l < lanes; ++l) all_done &= fibers_->Finished(l);
          if (all_done) break;
          if (!running && !lane_error_.empty()) break;
          Resolve();
        }
        if (!lane_error_.empty()) {
          // Unwind the fibers that still wait: they are simply abandoned
          // (their stacks are reused by Start or unmapped).
          break;
        }
      }
  if (!lane_error_.empty()) {
    if (failure_ == TileFailure::kNone) failure_ = TileFailure::kOther;  // found by Resolve
    return lane_error_;
  }
  for (size_t i = 0; i < argTypes.size(); ++i)
    if (storages[i]) (*args)[i].values = storages[i]->data;
  return "";
}

// Every lane waits at a collective op or has finished: resolve what can be.
void Interpreter::Resolve() {
  const size_t n = lanes_.size();
  std::vector<size_t> waiting;
  size_t finished = 0;
  for (size_t l = 0; l < n; ++l) {
    if (fibers_->Finished(l)) ++finished;
    else if (lanes_[l].wait) waiting.push_back(l);
  }
  // Stage waits whose commits or releases have come: those lanes go on
  // (the others' collective ops are resolved once no lane can move).
  bool staged = false;
  for (size_t l : waiting)
    if (isa<tile::TileLoadWaitOp, tile::TileLoadAcquireOp>(lanes_[l].wait) && StageReady(lanes_[l])) {
      lanes_[l].wait = nullptr;
      staged = true;
    }
  if (staged) return;
  // A lane at a stage op that cannot return: if nothing else moves, no
  // commit or release will ever come.
  auto stageDeadlock = [&]() {
    for (size_t l : waiting)
      if (auto *op = lanes_[l].wait; isa<tile::TileLoadWaitOp, tile::TileLoadAcquireOp>(op)) {
        const bool acquire = isa<tile::TileLoadAcquireOp>(op);
        lane_error_ = LocationText(op->getLoc()) + ": lane " + std::to_string(l) + " waits forever at " +
                      (acquire ? "tile_load_acquire" : "tile_load_wait") + " of stage " +
                      std::to_string(lanes_[l].wait_stage) + ": every other lane waits or has finished, and no " +
                      (acquire ? "tile_load_release" : "tile_load_commit") + " of the stage is to come (deadlock)";
        failure_ = TileFailure::kDivergent;  // a device would hang there too
        return true;
      }
    return false;
  };
  // Barriers: every lane of the group at a barrier.
  bool barrier = false;
  for (size_t l : waiting) barrier |= isa<tile::BarrierOp, schedule::BarrierOp>(lanes_[l].wait);
  if (barrier) {
    for (size_t l : waiting)
      if (!isa<tile::BarrierOp, schedule::BarrierOp>(lanes_[l].wait) || finished) {
        if (stageDeadlock()) return;
        Operation *op = lanes_[waiting.front()].wait;
        lane_error_ = LocationText(op->getLoc()) + ": a barrier that not every lane of the group reaches (divergent control flow)";
        failure_ = TileFailure::kDivergent;
        return;
      }
    if (waiting.size() == n) {
      for (size_t l : waiting) lanes_[l].wait = nullptr;
      return;
    }
  }
  // Subgroup ops: every lane of a subgroup at the same op.
  const size_t sg = launch_.subgroup_size;
  bool progress = false;
  for (size_t first = 0; first < n; first += sg) {
    const size_t last = std::min(n, first + sg);
    Operation *op = lanes_[first].wait;
    if (!op || !isa<tile::ShuffleOp, tile::SubgroupReduceOp>(op)) continue;
    bool all = true;
    for (size_t l = first; l < last; ++l) all &= lanes_[l].wait == op;
    if (!all) continue;
    if (auto sh = dyn_cast<tile::ShuffleOp>(op)) {
      for (size_t l = first; l < last; ++l) {
        const int64_t me = static_cast<int64_t>(l - first), size = static_cast<int64_t>(last - first);
        const int64_t off = static_cast<int64_t>(lanes_[l].offset);
        int64_t src = me;
        switch (sh.getMode()) {
          case tile::ShuffleMode::Xor: src = me ^ off; break;
          case tile::ShuffleMode::down: src = me + off; break;
          case tile::ShuffleMode::up: src = me - off; break;
          case tile::ShuffleMode::idx: src = off; break;
        }
        if (src < 0 || src >= size) src = me;  // out of range: its own value
        lanes_[l].result = lanes_[first + static_cast<size_t>(src)].operand;
      }
    } else {
      auto red = cast<tile::SubgroupReduceOp>(op);
      Type t = red.getValue().getType();
      double acc = lanes_[first].operand;
      for (size_t l = first + 1; l < last; ++l) {
        double x = lanes_[l].operand;
        switch (red.getKind()) {
          case tile::ReduceKind::add: acc = Round(acc + x, t); break;
          case tile::ReduceKind::max: acc = std::max(acc, x); break;
          case tile::ReduceKind::min: acc = std::min(acc, x); break;
        }
      }
      for (size_t l = first; l < last; ++l) lanes_[l].result = acc;
    }
    for (size_t l = first; l < last; ++l) lanes_[l].wait = nullptr;
    progress = true;
  }
  if (!progress && !barrier) {
    if (stageDeadlock()) return;
    Operation *op = waiting.empty() ? kernel_.getOperation() : lanes_[waiting.front()].wait;
    lane_error_ = LocationText(op->getLoc()) + ": the lanes of a subgroup do not all reach this shuffle or reduction";
    failure_ = TileFailure::kDivergent;
  } else if (!progress && barrier && waiting.size() != n) {
    // Some lanes wait at a barrier while others of a subgroup wait elsewhere.
    lane_error_ = LocationText(lanes_[waiting.front()].wait->getLoc()) + ": lanes wait at different collective ops (divergent control flow)";
    failure_ = TileFailure::kDivergent;
  }
}

bool Interpreter::StageReady(const Lane &lane) const {
  const int64_t stage = lane.wait_stage;
  auto count = [](const std::map<int64_t, int64_t> &m, int64_t k) {
    auto it = m.find(k);
    return it == m.end() ? int64_t{0} : it->second;
  };
  if (auto acq = dyn_cast<tile::TileLoadAcquireOp>(lane.wait))
    return count(releases_, stage) >=
           (count(lane.stage_acquires, stage) + 1) * static_cast<int64_t>(acq.getReleasers());
  return count(commits_, stage) > count(lane.stage_waits, stage);
}

void Interpreter::StageWait(Lane &lane, Operation &op) {
  if (!fibers_) Fail(&op, "internal: a stage wait outside fibers");
  auto wait = dyn_cast<tile::TileLoadWaitOp>(op);
  auto acquire = dyn_cast<tile::TileLoadAcquireOp>(op);
  const int64_t stages = wait ? wait.getStages() : acquire.getStages();
  const auto stage = ToInt64(Scalar(lane, wait ? wait.getStage() : acquire.getStage()));
  const auto phase = ToInt64(Scalar(lane, wait ? wait.getPhase() : acquire.getPhase()));
  if (stage < 0 || stage >= stages)
    Fail(&op, "stage " + std::to_string(stage) + " is outside 0.." + std::to_string(stages - 1));
  int64_t &passed = (wait ? lane.stage_waits : lane.stage_acquires)[stage];
  // On hardware the parity picks the awaited phase of the stage's barrier:
  // the wrong one returns at once (a race) or never (a hang).
  if (phase != passed % 2)
    Fail(&op, "phase " + std::to_string(phase) + " of stage " + std::to_string(stage) + ", but this is lane " +
                  std::to_string(lane.index) + "'s " + (wait ? "wait" : "acquire") + " number " +
                  std::to_string(passed) + " of the stage: its phase is " + std::to_string(passed % 2));
  lane.wait = &op;
  lane.wait_stage = stage;
  if (!StageReady(lane)) {
    fibers_->Yield(lane.index);
    if (!lane_error_.empty()) throw InterpError{lane_error_};
  }
  lane.wait = nullptr;
  ++passed;
}

void Interpreter::Collective(Lane &lane, Operation &op) {
  if (isa<tile::TileLoadWaitOp, tile::TileLoadAcquireOp>(op)) return StageWait(lane, op);
  if (!fibers_) Fail(&op, "internal: a collective op outside fibers");
  lane.wait = &op;
  if (auto sh = dyn_cast<tile::ShuffleOp>(op)) {
    lane.operand = Scalar(lane, sh.getValue());
    lane.offset = Scalar(lane, sh.getOffset());
  } else if (auto red = dyn_cast<tile::SubgroupReduceOp>(op)) {
    lane.operand = Scalar(lane, red.getValue());
  }
  fibers_->Yield(lane.index);
  if (!lane_error_.empty()) throw InterpError{lane_error_};
  if (op.getNumResults()) {
    Val r;
    r.v.push_back(lane.result);
    Set(lane, op.getResult(0), r);
  }
}

// ------------------------------------------------------------ control flow

void Interpreter::RunRegionBlock(Lane &lane, Block &block, SmallVectorImpl<Val> *results) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      results->clear();
      for (Value v : op.getOperands()) results->push_back(Get(lane, v));
      return;
    }
    Execute(lane, op);
  }
}

// Counts `op` against the limits; past one, fails naming the innermost
// loop around it (the likely culprit) and where the lanes were.
void Interpreter::CountOperation(Operation &op) {
  ++operations_;
  const bool over_count = launch_.max_operations && operations_ > launch_.max_operations;
  // The clock is read once every 4096 operations: its cost stays out of
  // the loop.
  const bool over_time =
      launch_.max_seconds > 0 && (operations_ & 4095) == 0 && std::chrono::steady_clock::now() > deadline_;
  if (!over_count && !over_time) return;
  Operation *loop = op.getParentOp();
  while (loop && !isa<scf::ForOp, scf::WhileOp, schedule::PipelineOp>(loop) && loop != kernel_.getOperation())
    loop = loop->getParentOp();
  std::string where = loop && loop != kernel_.getOperation()
                          ? ", in the " + loop->getName().getStringRef().str() + " at " + LocationText(loop->getLoc())
                          : "";
  where += " (group " + std::to_string(group_[0]) + "," + std::to_string(group_[1]) + "," + std::to_string(group_[2]) +
           ")";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", launch_.max_seconds);
  std::string limit = over_count ? "a limit of " + std::to_string(launch_.max_operations) + " operations"
                                 : "a limit of " + std::string(seconds) + " s";
  Fail(&op,
       "stopped after " + Twine(operations_) + " operations, " + limit + where +
           ": a loop whose bounds or condition never end it, or a kernel larger than the limit allows?",
       TileFailure::kLimit);
}

void Interpreter::Execute(Lane &lane, Operation &op) {
  Operation *o = &op;
  if (launch_.max_operations || launch_.max_seconds > 0) CountOperation(op);
  auto result = [&](Val v) { Set(lane, o->getResult(0), std::move(v)); };
  auto scalarResult = [&](double x) {
    Val v;
    v.v.push_back(x);
    result(std::move(v));
  };
  if (IsCollective(op)) return Collective(lane, op);

  // ---- scf / schedule loops
  if (auto f = dyn_cast<scf::ForOp>(op)) {
    int64_t lb = Index(lane, f.getLowerBound()), ub = Index(lane, f.getUpperBound()),
            step = Index(lane, f.getStep());
    if (step <= 0) Fail(o, "a loop step of " + Twine(step));
    SmallVector<Val> carried;
    for (Value v : f.getInitArgs()) carried.push_back(Get(lane, v));
    Block &body = f.getRegion().front();
    // Each iteration counts as an operation (its yield): a loop with an
    // empty body ran past --check-seconds and the operation limit.
    const bool counting = launch_.max_operations || launch_.max_seconds > 0;
    for (int64_t i = lb; i < ub; i = NextIteration(i, step, ub)) {
      if (counting) CountOperation(*body.getTerminator());
      Val iv;
      iv.v.push_back(static_cast<double>(i));
      Set(lane, body.getArgument(0), iv);
      for (size_t k = 0; k < carried.size(); ++k) Set(lane, body.getArgument(k + 1), carried[k]);
      SmallVector<Val> next;
      RunRegionBlock(lane, body, &next);
      carried = std::move(next);
    }
    for (size_t k = 0; k < carried.size() && k < f.getNumResults(); ++k) Set(lane, f.getResult(k), carried[k]);
    return;
  }
  if (auto p = dyn_cast<schedule::PipelineOp>(op)) {
    int64_t lb = Index(lane, p.getLb()), ub = Index(lane, p.getUb()), step = Index(lane, p.getStep());
    if (step <= 0) Fail(o, "a pipeline step of " + Twine(step));
    Block &body = p.getBody().front();
    const bool counting = launch_.max_operations || launch_.max_seconds > 0;
    for (int64_t i = lb; i < ub; i = NextIteration(i, step, ub)) {
      if (counting) CountOperation(*body.getTerminator());
      Val iv;
      iv.v.push_back(static_cast<double>(i));
      Set(lane, body.getArgument(0), iv);
      SmallVector<Val> none;
      RunRegionBlock(lane, body, &none);
    }
    return;
  }
  if (auto i = dyn_cast<scf::IfOp>(op)) {
    bool c = Scalar(lane, i.getCondition()) != 0;
    Region &r = c ? i.getThenRegion() : i.getElseRegion();
    SmallVector<Val> out;
    if (!r.empty()) RunRegionBlock(lane, r.front(), &out);
    for (size_t k = 0; k < out.size() && k < i.getNumResults(); ++k) Set(lane, i.getResult(k), out[k]);
    return;
  }
  if (auto w = dyn_cast<scf::WhileOp>(op)) {
    SmallVector<Val> args;
    for (Value v : w.getInits()) args.push_back(Get(lane, v));
    const bool counting = launch_.max_operations || launch_.max_seconds > 0;
    for (int64_t guard = 0;; ++guard) {
      Block &before = w.getBefore().front();
      if (counting) CountOperation(*before.getTerminator());  // as scf.for's iterations
      for (size_t k = 0; k < args.size(); ++k) Set(lane, before.getArgument(k), args[k]);
      for (Operation &b : before.without_terminator()) Execute(lane, b);
      auto cond = cast<scf::ConditionOp>(before.getTerminator());
      SmallVector<Val> fwd;
      for (Value v : cond.getArgs()) fwd.push_back(Get(lane, v));
      if (Scalar(lane, cond.getCondition()) == 0) {
        for (size_t k = 0; k < fwd.size(); ++k) Set(lane, w.getResult(k), fwd[k]);
        return;
      }
      Block &after = w.getAfter().front();
      for (size_t k = 0; k < fwd.size(); ++k) Set(lane, after.getArgument(k), fwd[k]);
      RunRegionBlock(lane, after, &args);
    }
  }

  // ---- constants and arith
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    Attribute a = c.getValue();
    Val v;
    if (auto f = a.dyn_cast<FloatAttr>()) v.v.push_back(f.getValueAsDouble());
    else if (auto i = a.dyn_cast<IntegerAttr>())
      v.v.push_back(i.getType().isInteger(1) ? static_cast<double>(i.getValue().getZExtValue())
                                              : static_cast<double>(i.getValue().getSExtValue()));
    else if (auto d = a.dyn_cast<DenseElementsAttr>()) {
      Type et = d.getElementType();
      if (et.isa<FloatType>())
        for (APFloat x : d.getValues<APFloat>()) v.v.push_back(x.convertToDouble());
      else
        for (APInt x : d.getValues<APInt>())
          v.v.push_back(et.isInteger(1) ? static_cast<double>(x.getZExtValue()) : static_cast<double>(x.getSExtValue()));
    } else {
      Fail(o, "a constant of an unsupported kind");
    }
    return result(std::move(v));
  }
  if (op.getDialect() && isa<arith::ArithDialect>(op.getDialect())) {
    Type rt = op.getNumResults() ? ElementOf(op.getResult(0).getType()) : Type();
    const int w = rt ? IntWidth(rt) : 0;
    auto in = [&](unsigned k) -> const Val & { return Get(lane, op.getOperand(k)); };
    auto fbin = [&](auto f) { result(Map2(o, in(0), in(1), [&](double a, double b) { return FloatOp(rt, f(a, b)); })); };
    auto ibin = [&](auto f) { result(Map2(o, in(0), in(1), [&](double a, double b) { return WrapSigned(f(a, b), w); })); };
    auto cast1 = [&](auto f) { result(Map1(in(0), [&](double a) { return Round(f(a), rt); })); };
    const int wi = op.getNumOperands() ? IntWidth(ElementOf(op.getOperand(0).getType())) : 0;
    return llvm::TypeSwitch<Operation *, void>(o)
        .Case<arith::AddFOp>([&](auto) { fbin([](double a, double b) { return a + b; }); })
        .Case<arith::SubFOp>([&](auto) { fbin([](double a, double b) { return a - b; }); })
        .Case<arith::MulFOp>([&](auto) { fbin([](double a, double b) { return a * b; }); })
        .Case<arith::DivFOp>([&](auto) { fbin([](double a, double b) { return a / b; }); })
        .Case<arith::RemFOp>([&](auto) { fbin([](double a, double b) { return std::fmod(a, b); }); })
        .Case<arith::MaxFOp>([&](auto) { fbin([](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }); })
        .Case<arith::MinFOp>([&](auto) { fbin([](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }); })
        .Case<arith::NegFOp>([&](auto) { result(Map1(in(0), [](double a) { return -a; })); })
        .Case<arith::AddIOp>([&](auto) { ibin([](double a, double b) { return a + b; }); })
        .Case<arith::SubIOp>([&](auto) { ibin([](double a, double b) { return a - b; }); })
        .Case<arith::MulIOp>([&](auto) {
          ibin([&](double a, double b) {
            return static_cast<double>(static_cast<int64_t>(AsUnsigned(a, 64) * AsUnsigned(b, 64)));
          });
        })
        .Case<arith::DivSIOp>([&](auto) {
          ibin([&](double a, double b) {
            if (b == 0) Fail(o, "integer division by zero");
            return std::trunc(a / b);
          });
        })
        .Case<arith::DivUIOp>([&](auto) {
          ibin([&](double a, double b) {
            if (b == 0) Fail(o, "integer division by zero");
            return static_cast<double>(AsUnsigned(a, w) / AsUnsigned(b, w));
          });
        })
        .Case<arith::RemSIOp>([&](auto) {
          ibin([&](double a, double b) {
            if (b == 0) Fail(o, "integer division by zero");
            // INT64_MIN % -1 overflows in C++; its remainder is 0.
            if (b == -1) return 0.0;
            return static_cast<double>(ToInt64(a) % ToInt64(b));
          });
        })
        .Case<arith::RemUIOp>([&](auto) {
          ibin([&](double a, double b) {
            if (b == 0) Fail(o, "integer division by zero");
            return static_cast<double>(AsUnsigned(a, w) % AsUnsigned(b, w));
          });
        })
        .Case<arith::FloorDivSIOp>([&](auto) {
          ibin([&](double a, double b) {
            if (b == 0) Fail(o, "integer division by zero");
            return std::floor(a / b);
          });
        })
        .Case<arith::CeilDivSIOp>([&](auto) {
          ibin([&](double a, double b) {
            if (b == 0) Fail(o, "integer division by zero");
            return std::ceil(a / b);
          });
        })
        .Case<arith::MaxSIOp>([&](auto) { ibin([](double a, double b) { return std::max(a, b); }); })
        .Case<arith::MinSIOp>([&](auto) { ibin([](double a, double b) { return std::min(a, b); }); })
        .Case<arith::MaxUIOp>([&](auto) { ibin([&](double a, double b) { return AsUnsigned(a, w) >= AsUnsigned(b, w) ? a : b; }); })
        .Case<arith::MinUIOp>([&](auto) { ibin([&](double a, double b) { return AsUnsigned(a, w) <= AsUnsigned(b, w) ? a : b; }); })
        .Case<arith::AndIOp>([&](auto) { ibin([&](double a, double b) { return static_cast<double>(static_cast<int64_t>(AsUnsigned(a, 64) & AsUnsigned(b, 64))); }); })
        .Case<arith::OrIOp>([&](auto) { ibin([&](double a, double b) { return static_cast<double>(static_cast<int64_t>(AsUnsigned(a, 64) | AsUnsigned(b, 64))); }); })
        .Case<arith::XOrIOp>([&](auto) { ibin([&](double a, double b) { return static_cast<double>(static_cast<int64_t>(AsUnsigned(a, 64) ^ AsUnsigned(b, 64))); }); })
        .Case<arith::ShLIOp>([&](auto) {
          ibin([&](double a, double b) {
            uint64_t s = AsUnsigned(b, w);
            return s >= static_cast<uint64_t>(w) ? 0.0 : static_cast<double>(static_cast<int64_t>(AsUnsigned(a, 64) << s));
          });
        })
        .Case<arith::ShRUIOp>([&](auto) {
          ibin([&](double a, double b) {
            uint64_t s = AsUnsigned(b, w);
            return s >= static_cast<uint64_t>(w) ? 0.0 : static_cast<double>(AsUnsigned(a, w) >> s);
          });
        })
        .Case<arith::ShRSIOp>([&](auto) {
          ibin([&](double a, double b) {
            uint64_t s = AsUnsigned(b, w);
            return std::floor(a / std::ldexp(1.0, static_cast<int>(std::min<uint64_t>(s, 63))));
          });
        })
        .Case<arith::CmpIOp>([&](arith::CmpIOp c) {
          result(Map2(o, in(0), in(1), [&](double a, double b) { return CmpI(c.getPredicate(), a, b, wi) ? 1.0 : 0.0; }));
        })
        .Case<arith::CmpFOp>([&](arith::CmpFOp c) {
          result(Map2(o, in(0), in(1), [&](double a, double b) { return CmpF(c.getPredicate(), a, b) ? 1.0 : 0.0; }));
        })
        .Case<arith::SelectOp>([&](auto) {
          const Val &c = in(0), &a = in(1), &b = in(2);
          if (a.m) return result(c.v.at(0) != 0 ? a : b);
          Val r;
          for (size_t k = 0; k < a.v.size(); ++k) r.v.push_back((c.v.size() == 1 ? c.v[0] : c.v.at(k)) != 0 ? a.v[k] : b.v.at(k));
          result(std::move(r));
        })
        .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>([&](auto) { cast1([](double a) { return a; }); })
        .Case<arith::IndexCastUIOp, arith::ExtUIOp>([&](auto) {
          cast1([&](double a) { return static_cast<double>(AsUnsigned(a, wi)); });
        })
        .Case<arith::SIToFPOp, arith::ExtFOp, arith::TruncFOp>([&](auto) { cast1([](double a) { return a; }); })
        .Case<arith::UIToFPOp>([&](auto) { cast1([&](double a) { return static_cast<double>(AsUnsigned(a, wi)); }); })
        .Case<arith::FPToSIOp, arith::FPToUIOp>([&](auto) { cast1([](double a) { return std::trunc(a); }); })
        .Default([&](Operation *) { Fail(o, "not supported by the Tile IR reference interpreter"); });
  }

  // ---- math
  if (op.getDialect() && isa<math::MathDialect>(op.getDialect())) {
    Type rt = ElementOf(op.getResult(0).getType());
    auto in = [&](unsigned k) -> const Val & { return Get(lane, op.getOperand(k)); };
    auto un = [&](auto f) { result(Map1(in(0), [&](double a) { return Round(f(a), rt); })); };
    return llvm::TypeSwitch<Operation *, void>(o)
        .Case<math::ExpOp>([&](auto) { un([](double a) { return std::exp(a); }); })
        .Case<math::Exp2Op>([&](auto) { un([](double a) { return std::exp2(a); }); })
        .Case<math::LogOp>([&](auto) { un([](double a) { return std::log(a); }); })
        .Case<math::SqrtOp>([&](auto) { un([](double a) { return std::sqrt(a); }); })
        .Case<math::RsqrtOp>([&](auto) { un([](double a) { return 1.0 / std::sqrt(a); }); })
        .Case<math::TanhOp>([&](auto) { un([](double a) { return std::tanh(a); }); })
        .Case<math::AbsFOp>([&](auto) { un([](double a) { return std::fabs(a); }); })
        .Case<math::FloorOp>([&](auto) { un([](double a) { return std::floor(a); }); })
        .Case<math::CeilOp>([&](auto) { un([](double a) { return std::ceil(a); }); })
        .Case<math::FmaOp>([&](auto) {
          const Val &a = in(0), &b = in(1), &c = in(2);
          Val r;
          for (size_t k = 0; k < a.v.size(); ++k)
            r.v.push_back(rt.isF32() ? static_cast<double>(std::fmaf(static_cast<float>(a.v[k]), static_cast<float>(b.v.at(k)),
                                                                     static_cast<float>(c.v.at(k))))
                                     : Round(std::fma(a.v[k], b.v.at(k), c.v.at(k)), rt));
          result(std::move(r));
        })
        .Default([&](Operation *) { Fail(o, "not supported by the Tile IR reference interpreter"); });
  }

  // ---- vector
  if (auto b = dyn_cast<vector::BroadcastOp>(op)) {
    const Val &s = Get(lane, b.getSource());
    auto vt = b.getVectorType();
    Val r;
    const int64_t n = vt.getNumElements();
    if (s.v.size() == 1) r.v.assign(static_cast<size_t>(n), s.v[0]);
    else {
      if (n % static_cast<int64_t>(s.v.size())) Fail(o, "a broadcast of an unsupported shape");
      for (int64_t k = 0; k < n; ++k) r.v.push_back(s.v[static_cast<size_t>(k) % s.v.size()]);
    }
    return result(std::move(r));
  }
  if (auto s = dyn_cast<vector::SplatOp>(op)) {
    Val r;
    r.v.assign(static_cast<size_t>(s.getType().cast<VectorType>().getNumElements()), Scalar(lane, s.getInput()));
    return result(std::move(r));
  }
  if (auto e = dyn_cast<vector::ExtractOp>(op)) {
    const Val &v = Get(lane, e.getVector());
    auto vt = e.getVectorType();
    int64_t flat = 0, stride = vt.getNumElements();
    auto pos = e.getPosition();
    for (size_t d = 0; d < pos.size(); ++d) {
      stride /= vt.getShape()[d];
      flat += pos[d].cast<IntegerAttr>().getInt() * stride;
    }
    Val r;
    for (int64_t k = 0; k < stride; ++k) r.v.push_back(v.v.at(static_cast<size_t>(flat + k)));
    return result(std::move(r));
  }
  if (auto ins = dyn_cast<vector::InsertOp>(op)) {
    Val r = Get(lane, ins.getDest());
    const Val &s = Get(lane, ins.getSource());
    auto vt = ins.getDestVectorType();
    int64_t flat = 0, stride = vt.getNumElements();
    auto pos = ins.getPosition();
    for (size_t d = 0; d < pos.size(); ++d) {
      stride /= vt.getShape()[d];
      flat += pos[d].cast<IntegerAttr>().getInt() * stride;
    }
    for (int64_t k = 0; k < stride; ++k) r.v.at(static_cast<size_t>(flat + k)) = s.v.at(static_cast<size_t>(k));
    return result(std::move(r));
  }
  if (auto e = dyn_cast<vector::ExtractElementOp>(op)) {
    const Val &v = Get(lane, e.getVector());
    int64_t k = e.getPosition() ? Index(lane, e.getPosition()) : 0;
    if (k < 0 || static_cast<size_t>(k) >= v.v.size()) Fail(o, "position out of range");
    return scalarResult(v.v[static_cast<size_t>(k)]);
  }
  if (auto ins = dyn_cast<vector::InsertElementOp>(op)) {
    Val r = Get(lane, ins.getDest());
    int64_t k = ins.getPosition() ? Index(lane, ins.getPosition()) : 0;
    if (k < 0 || static_cast<size_t>(k) >= r.v.size()) Fail(o, "position out of range");
    r.v[static_cast<size_t>(k)] = Scalar(lane, ins.getSource());
    return result(std::move(r));
  }
  if (auto f = dyn_cast<vector::FMAOp>(op)) {
    const Val &a = Get(lane, f.getLhs()), &b = Get(lane, f.getRhs()), &c = Get(lane, f.getAcc());
    Type rt = ElementOf(f.getType());
    Val r;
    for (size_t k = 0; k < a.v.size(); ++k)
      r.v.push_back(rt.isF32() ? static_cast<double>(std::fmaf(static_cast<float>(a.v[k]), static_cast<float>(b.v[k]),
                                                               static_cast<float>(c.v[k])))
                               : Round(std::fma(a.v[k], b.v[k], c.v[k]), rt));
    return result(std::move(r));
  }
  if (auto sc = dyn_cast<vector::ShapeCastOp>(op)) return result(Get(lane, sc.getSource()));
  if (auto red = dyn_cast<vector::ReductionOp>(op)) {
    const Val &v = Get(lane, red.getVector());
    Type rt = red.getType();
    double acc = v.v.at(0);
    for (size_t k = 1; k < v.v.size(); ++k) {
      double x = v.v[k];
      switch (red.getKind()) {
        case vector::CombiningKind::ADD: acc = Round(acc + x, rt); break;
        case vector::CombiningKind::MUL: acc = Round(acc * x, rt); break;
        case vector::CombiningKind::MAXF:
        case vector::CombiningKind::MAXSI: acc = std::max(acc, x); break;
        case vector::CombiningKind::MINF:
        case vector::CombiningKind::MINSI: acc = std::min(acc, x); break;
        default: Fail(o, "a reduction kind the interpreter does not support");
      }
    }
    if (red.getAcc()) acc = Round(acc + Scalar(lane, red.getAcc()), rt);
    return scalarResult(acc);
  }

  // ---- memory
  if (auto l = dyn_cast<memref::LoadOp>(op)) {
    const Val &m = Get(lane, l.getMemRef());
    return scalarResult(*At(o, *m.m, Indices(lane, l.getIndices())));
  }
  if (auto s = dyn_cast<memref::StoreOp>(op)) {
    const Val &m = Get(lane, s.getMemRef());
    *At(o, *m.m, Indices(lane, s.getIndices())) = Round(Scalar(lane, s.getValue()), m.m->element);
    return;
  }
  if (isa<memref::AllocaOp, memref::AllocOp>(op)) {
    auto mt = op.getResult(0).getType().cast<MemRefType>();
    if (!mt.hasStaticShape()) Fail(o, "an allocation of dynamic shape");
    auto s = std::make_shared<Storage>();
    s->data.assign(static_cast<size_t>(mt.getNumElements()), 0.0);
    Val v;
    v.m = NewMemRef(mt, s);
    return result(std::move(v));
  }
  if (isa<memref::DeallocOp>(op)) return;
  if (auto c = dyn_cast<memref::CastOp>(op)) return result(Get(lane, c.getSource()));
  if (auto sv = dyn_cast<memref::SubViewOp>(op)) {
    const Val &src = Get(lane, sv.getSource());
    auto m = std::make_shared<MemRefVal>(*src.m);
    m->shape.clear();
    SmallVector<int64_t> strides;
    int64_t off = src.m->offset;
    auto offs = sv.getMixedOffsets(), sizes = sv.getMixedSizes(), steps = sv.getMixedStrides();
    auto value = [&](OpFoldResult r) -> int64_t {
      if (auto a = r.dyn_cast<Attribute>()) return a.cast<IntegerAttr>().getInt();
      return Index(lane, r.get<Value>());
    };
    llvm::SmallBitVector dropped = sv.getDroppedDims();
    for (size_t d = 0; d < offs.size(); ++d) {
      off += value(offs[d]) * src.m->strides[d];
      if (dropped.test(d)) continue;
      m->shape.push_back(value(sizes[d]));
      strides.push_back(src.m->strides[d] * value(steps[d]));
    }
    m->offset = off;
    m->strides = strides;
    Val v;
    v.m = m;
    return result(std::move(v));
  }

  // ---- Tile IR
  if (auto id = dyn_cast<tile::GroupIdOp>(op)) return scalarResult(static_cast<double>(group_[id.getDim()]));
  if (auto id = dyn_cast<tile::GroupCountOp>(op)) return scalarResult(launch_.grid[id.getDim()]);
  if (auto id = dyn_cast<tile::LaneIdOp>(op)) return scalarResult(static_cast<double>(lane.id[id.getDim()]));
  if (auto id = dyn_cast<tile::LaneCountOp>(op)) return scalarResult(launch_.group_size[id.getDim()]);
  if (isa<tile::TileIdOp>(op))
    return scalarResult(static_cast<double>(group_[0] + group_[1] * launch_.grid[0] +
                                            group_[2] * int64_t{launch_.grid[0]} * launch_.grid[1]));
  if (isa<tile::SubgroupSizeOp>(op)) return scalarResult(launch_.subgroup_size);
  if (isa<tile::SharedAllocOp>(op)) {
    auto mt = op.getResult(0).getType().cast<MemRefType>();
    std::shared_ptr<Storage> &s = shared_[o];  // one per group: every lane shares it
    if (!s) {
      s = std::make_shared<Storage>();
      s->data.assign(static_cast<size_t>(mt.getNumElements()), 0.0);
    }
    Val v;
    v.m = NewMemRef(mt, s);
    return result(std::move(v));
  }
  if (auto ld = dyn_cast<tile::LoadOp>(op)) {
    const Val &m = Get(lane, ld.getMemref());
    SmallVector<int64_t> idx = Indices(lane, ld.getIndices());
    const int64_t n = ld.getType().cast<VectorType>().getNumElements();
    Val r;
    for (int64_t k = 0; k < n; ++k) {
      SmallVector<int64_t> at = idx;
      at.back() += k;  // contiguous along the last dimension
      r.v.push_back(*At(o, *m.m, at));
    }
    return result(std::move(r));
  }
  if (auto st = dyn_cast<tile::StoreOp>(op)) {
    const Val &m = Get(lane, st.getMemref());
    const Val &v = Get(lane, st.getValue());
    SmallVector<int64_t> idx = Indices(lane, st.getIndices());
    for (size_t k = 0; k < v.v.size(); ++k) {
      SmallVector<int64_t> at = idx;
      at.back() += static_cast<int64_t>(k);
      *At(o, *m.m, at) = Round(v.v[k], m.m->element);
    }
    return;
  }
  if (auto cp = dyn_cast<tile::CpAsyncOp>(op)) {
    // Asynchronous in hardware; here complete at once (a kernel that reads
    // before its cp_async_wait is wrong on hardware, not here).
    const Val &src = Get(lane, cp.getSource()), &dst = Get(lane, cp.getTarget());
    SmallVector<int64_t> si = Indices(lane, cp.getSrcIndices()), di = Indices(lane, cp.getDstIndices());
    for (int64_t k = 0; k < static_cast<int64_t>(cp.getElements()); ++k) {
      SmallVector<int64_t> a = si, b = di;
      a.back() += k;
      b.back() += k;
      *At(o, *dst.m, b) = *At(o, *src.m, a);
    }
    return;
  }
  if (isa<tile::CpAsyncCommitOp, tile::CpAsyncWaitOp>(op)) return;
  if (auto tl = dyn_cast<tile::TileLoadAsyncOp>(op)) {
    // The group's copy; every lane makes it here (the same box, so the
    // repeats change nothing), complete at once as cp_async.
    const Val &src = Get(lane, tl.getSource()), &dst = Get(lane, tl.getTarget());
    const int64_t row = ToInt64(Scalar(lane, tl.getRow()));
    const int64_t col = ToInt64(Scalar(lane, tl.getCol()));
    const int64_t index = ToInt64(Scalar(lane, tl.getIndex()));
    const int64_t cols = tl.getCols(), ld = tl.getLd();
    for (int64_t r = 0; r < static_cast<int64_t>(tl.getRows()); ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t e = index + r * cols + c;
        const bool inside = row + r < static_cast<int64_t>(tl.getSourceRows()) && col + c < ld;
        *At(o, *dst.m, {e ^ ((e >> 3) & 0x38)}) = inside ? *At(o, *src.m, {(row + r) * ld + col + c}) : 0.0;
      }
    return;
  }
  if (auto commit = dyn_cast<tile::TileLoadCommitOp>(op)) {
    // A group commit: every lane makes it, counted once; a single-lane one
    // (a warp-specialized producer) by the lane that makes it.
    const auto stage = ToInt64(Scalar(lane, commit.getStage()));
    if (stage < 0 || stage >= static_cast<int64_t>(commit.getStages()))
      Fail(o, "stage " + std::to_string(stage) + " is outside 0.." + std::to_string(commit.getStages() - 1));
    if (commit.getSingleLane() || lane.index == 0) ++commits_[stage];
    return;
  }
  if (auto release = dyn_cast<tile::TileLoadReleaseOp>(op)) {
    const auto stage = ToInt64(Scalar(lane, release.getStage()));
    if (stage < 0 || stage >= static_cast<int64_t>(release.getStages()))
      Fail(o, "stage " + std::to_string(stage) + " is outside 0.." + std::to_string(release.getStages() - 1));
    ++releases_[stage];
    return;
  }
  if (isa<tile::SetMaxRegistersOp>(op)) return;  // a register budget: nothing to compute
  if (auto mma = dyn_cast<tile::SubgroupMmaOp>(op)) {
    // Lane q of its subgroup of 32: element v at row 16*(t / (n/8)) + q/4
    // + 8*((v%4)/2), column 8*(t % (n/8)) + 2*(q%4) + v%2, t = v/4.
    const int64_t n = mma.getN();
    return result(CooperativeMma(lane, o, mma, 32, 16, [n](int64_t q, int64_t v) {
      const int64_t t = v / 4, e = v % 4;
      return std::make_pair(16 * (t / (n / 8)) + q / 4 + 8 * (e / 2), 8 * (t % (n / 8)) + 2 * (q % 4) + e % 2);
    }));
  }
  if (auto mma = dyn_cast<tile::WavefrontMmaOp>(op)) {
    // Lane p of its wavefront of 64: element v at row 32*(t / (n/32)) +
    // 8*(u/4) + 4*(p/32) + u%4, column 32*(t % (n/32)) + p%32, t = v/16,
    // u = v%16.
    const int64_t n = mma.getN();
    const int64_t depth = mma.getOperandType().isInteger(8) ? 16 : 8;  // i8: 16 deep
    return result(CooperativeMma(lane, o, mma, 64, depth, [n](int64_t p, int64_t v) {
      const int64_t t = v / 16, u = v % 16;
      return std::make_pair(32 * (t / (n / 32)) + 8 * (u / 4) + 4 * (p / 32) + u % 4, 32 * (t % (n / 32)) + p % 32);
    }));
  }
  if (auto mma = dyn_cast<tile::Wave32MmaOp>(op)) {
    // Lane q of its wave of 32: element v at row 16*(t / (n/16)) + 2*u +
    // q/16, column 16*(t % (n/16)) + q%16, t = v/8, u = v%8.
    const int64_t n = mma.getN();
    return result(CooperativeMma(lane, o, mma, 32, 16, [n](int64_t q, int64_t v) {
      const int64_t t = v / 8, u = v % 8;
      return std::make_pair(16 * (t / (n / 16)) + 2 * u + q / 16, 16 * (t % (n / 16)) + q % 16);
    }));
  }
  if (auto r = dyn_cast<tile::RoundToBF16Op>(op)) {
    // The integer rounding the targets without an instruction use
    // (ElementTypes.h): ties to even, a NaN quieted with its sign.
    uint32_t u;
    const float f = static_cast<float>(Scalar(lane, r.getValue()));
    std::memcpy(&u, &f, sizeof u);
    const uint32_t bits = (u & 0x7FFFFFFFu) > 0x7F800000u ? (u >> 16) | 0x40u : (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    return scalarResult(static_cast<double>(static_cast<int16_t>(static_cast<uint16_t>(bits))));
  }
  // warpgroup_mma completes when it returns here: the wait has nothing to do.
  if (auto w = dyn_cast<tile::WarpgroupMmaWaitOp>(op)) return result(Get(lane, w.getAcc()));
  if (auto mma = dyn_cast<tile::WarpgroupMmaOp>(op)) {
    // Lane p of its warpgroup of 128 computes its own elements (the op's
    // layout) from the 128-byte swizzled operands; products in order k.
    const int64_t linear = lane.id[0] + launch_.group_size[0] * (lane.id[1] + launch_.group_size[1] * lane.id[2]);
    const int64_t p = linear % 128, w = p / 32, q = p % 32, stride = mma.getBBlockStride();
    const std::string ot = mma.getOperandType().isBF16() ? "bf16" : "f16";
    const Val &a = Get(lane, mma.getA()), &b = Get(lane, mma.getB()), &c = Get(lane, mma.getAcc());
    const int64_t ai = ToInt64(Scalar(lane, mma.getAIndex()));
    const int64_t bi = ToInt64(Scalar(lane, mma.getBIndex()));
    auto sw = [](int64_t e) { return e ^ ((e >> 3) & 0x38); };
    auto operand = [&](const MemRefVal &m, int64_t at) { return MatrixOperand(o, m, sw(at), ot); };
    Val r = c;
    for (size_t v = 0; v < r.v.size(); ++v) {
      const int64_t e = static_cast<int64_t>(v);
      const int64_t row = 16 * w + q / 4 + 8 * ((e % 4) / 2), col = 8 * (e / 4) + 2 * (q % 4) + e % 2;
      float acc = static_cast<float>(r.v[v]);
      for (int64_t k = 0; k < static_cast<int64_t>(mma.getK()); ++k)
        acc = std::fma(static_cast<float>(operand(*a.m, ai + 64 * row + k)),
                       static_cast<float>(operand(*b.m, bi + stride * (col / 64) + 64 * k + col % 64)), acc);
      r.v[v] = acc;
    }
    return result(std::move(r));
  }
  if (auto mma = dyn_cast<tile::MmaOp>(op)) {
    auto at = mma.getA().getType().cast<VectorType>(), bt = mma.getB().getType().cast<VectorType>();
    const int64_t M = at.getShape()[0], K = at.getShape()[1], N = bt.getShape()[1];
    const Val &a = Get(lane, mma.getA()), &b = Get(lane, mma.getB()), &c = Get(lane, mma.getAcc());
    Type rt = ElementOf(mma.getType());
    Val r = c;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = c.v.at(static_cast<size_t>(i * N + j));
        for (int64_t k = 0; k < K; ++k)
          acc = Round(acc + a.v.at(static_cast<size_t>(i * K + k)) * b.v.at(static_cast<size_t>(k * N + j)), rt);
        r.v[static_cast<size_t>(i * N + j)] = acc;
      }
    return result(std::move(r));
  }
  if (auto dot = dyn_cast<tile::DotOp>(op)) {
    const Val &a = Get(lane, dot.getA()), &b = Get(lane, dot.getB());
    Type rt = dot.getType();
    double acc = Scalar(lane, dot.getAcc());
    for (size_t k = 0; k < a.v.size(); ++k) acc = Round(acc + a.v[k] * b.v.at(k), rt);
    return scalarResult(acc);
  }
  if (auto at = dyn_cast<tile::AtomicRMWOp>(op)) {
    // Lanes run one at a time: every read-modify-write is atomic here.
    const Val &m = Get(lane, at.getMemref());
    double *p = At(o, *m.m, Indices(lane, at.getIndices()));
    double old = *p, x = Scalar(lane, at.getValue());
    switch (at.getKind()) {
      case tile::AtomicKind::add: *p = Round(old + x, m.m->element); break;
      case tile::AtomicKind::max: *p = std::max(old, x); break;
      case tile::AtomicKind::min: *p = std::min(old, x); break;
      case tile::AtomicKind::xchg: *p = Round(x, m.m->element); break;
    }
    return scalarResult(old);
  }
  if (auto mo = dyn_cast<tile::MathOp>(op)) {
    Type rt = ElementOf(mo.getType());
    std::vector<const Val *> in;
    for (Value v : mo.getOperands()) in.push_back(&Get(lane, v));
    Val r;
    for (size_t k = 0; k < in[0]->v.size(); ++k) {
      double a = in[0]->v[k], x = 0;
      switch (mo.getFn()) {
        case tile::MathFn::exp: x = std::exp(a); break;
        case tile::MathFn::log: x = std::log(a); break;
        case tile::MathFn::sqrt: x = std::sqrt(a); break;
        case tile::MathFn::rsqrt: x = 1.0 / std::sqrt(a); break;
        case tile::MathFn::tanh: x = std::tanh(a); break;
        case tile::MathFn::max: x = std::max(a, in.at(1)->v.at(k)); break;
        case tile::MathFn::min: x = std::min(a, in.at(1)->v.at(k)); break;
        case tile::MathFn::fma:
          x = rt.isF32() ? static_cast<double>(std::fmaf(static_cast<float>(a), static_cast<float>(in.at(1)->v.at(k)),
                                                         static_cast<float>(in.at(2)->v.at(k))))
                         : std::fma(a, in.at(1)->v.at(k), in.at(2)->v.at(k));
          break;
      }
      r.v.push_back(Round(x, rt));
    }
    return result(std::move(r));
  }

  // ---- Schedule IR inside kernels
  if (auto pf = dyn_cast<schedule::PrefetchOp>(op)) {
    // The tile at the given tile indices, in units of the result's shape:
    // a view of the source (the same values a copy would hold).
    const Val &src = Get(lane, pf.getSource());
    auto rt = pf.getType().cast<MemRefType>();
    SmallVector<int64_t> ti = Indices(lane, pf.getIndices());
    auto m = std::make_shared<MemRefVal>(*src.m);
    const size_t rank = src.m->shape.size();
    if (ti.size() != rank || static_cast<size_t>(rt.getRank()) != rank) Fail(o, "a prefetch of another rank");
    int64_t off = src.m->offset;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t start = ti[d] * rt.getShape()[d];
      if (start < 0 || start + rt.getShape()[d] > src.m->shape[d]) Fail(o, "a tile outside its source");
      off += start * src.m->strides[d];
    }
    m->offset = off;
    m->shape.assign(rt.getShape().begin(), rt.getShape().end());
    Val v;
    v.m = m;
    return result(std::move(v));
  }
  if (auto cp = dyn_cast<schedule::CopyOp>(op)) {
    const Val &s = Get(lane, cp.getSource()), &d = Get(lane, cp.getTarget());
    int64_t n = 1;
    for (int64_t e : s.m->shape) n *= e;
    SmallVector<int64_t> idx(s.m->shape.size(), 0);
    for (int64_t k = 0; k < n; ++k) {
      *At(o, *d.m, idx) = Round(*At(o, *s.m, idx), d.m->element);
      for (size_t dd = idx.size(); dd-- > 0;) {
        if (++idx[dd] < s.m->shape[dd]) break;
        idx[dd] = 0;
      }
    }
    return;
  }
  Fail(o, "not supported by the Tile IR reference interpreter");
}

}  // namespace

std::string RunTileKernel(func::FuncOp kernel, const TileLaunch &launch, std::vector<TileArgument> *args,
                          TileFailure *failure) {
  if (failure) *failure = TileFailure::kNone;
  if (!kernel || kernel.isExternal()) {
    if (failure) *failure = TileFailure::kOther;
    return "no kernel body to interpret";
  }
  Interpreter interpreter(kernel, launch);
  std::string error = interpreter.Run(args);
  if (failure) *failure = error.empty() ? TileFailure::kNone : interpreter.failure();
  if (failure && !error.empty() && *failure == TileFailure::kNone) *failure = TileFailure::kOther;
  return error;
}

}  // namespace tessera::reference
