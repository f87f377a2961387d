#include "tessera/Reference/SpmdInterpreter.h"

#include "tessera/element_types.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinTypes.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"

namespace tessera::reference {
using namespace tessera::elements;
namespace {

using namespace mlir;
namespace g = tessera::graph;

// Every device evaluates the same function, so each collective op is
// reached exactly once per device: a slot per op collects the operands and
// releases the devices when all have arrived.  Thread-safe; an error in one
// device aborts the others' waits.
class Rendezvous {
 public:
  explicit Rendezvous(size_t devices) : devices_(devices) {}

  // Deposits device `d`'s operand of `op` and waits for every device's.
  // On success `*all` points at the operands, indexed by device; they stay
  // valid until the Rendezvous is destroyed.
  std::string Exchange(Operation* op, size_t d, const std::vector<double>& input,
                       const std::vector<std::vector<double>>** all) {
    std::unique_lock<std::mutex> lock(mu_);
    Slot& slot = slots_[op];
    if (slot.inputs.empty()) slot.inputs.resize(devices_);
    slot.inputs[d] = input;
    if (++slot.arrived == devices_) cv_.notify_all();
    cv_.wait(lock, [&] { return slot.arrived == devices_ || !abort_.empty(); });
    if (slot.arrived != devices_) return "another device failed: " + abort_;
    *all = &slot.inputs;
    return "";
  }

  void Abort(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (abort_.empty()) abort_ = why.empty() ? "failed" : why;
    cv_.notify_all();
  }

 private:
  struct Slot {
    std::vector<std::vector<double>> inputs;
    size_t arrived = 0;
  };
  const size_t devices_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Operation*, Slot> slots_;
  std::string abort_;
};

// Logical [outer, dim, inner] view of a row-major shape around `dim`.
void Split(ArrayRef<int64_t> shape, int64_t dim, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t i = 0; i < dim; ++i) *outer *= shape[i];
  for (size_t i = dim + 1; i < shape.size(); ++i) *inner *= shape[i];
}

// Device d's result of `op` from the operands of every device.
std::string Collective(Operation& op, const std::vector<int64_t>& meshShape, g::MeshOp mesh,
                       size_t d, const std::vector<std::vector<double>>& all,
                       std::vector<double>* out, bool exact) {
  std::vector<int> axes;
  for (Attribute a : op.getAttrOfType<ArrayAttr>("axes")) {
    int idx = -1;
    for (auto [i, m] : llvm::enumerate(mesh.getAxes()))
      if (m.cast<StringAttr>() == a.cast<StringAttr>()) idx = static_cast<int>(i);
    if (idx < 0) return "unknown mesh axis " + a.cast<StringAttr>().getValue().str();
    axes.push_back(idx);
  }
  int64_t rank = 0;
  std::vector<int64_t> group = g::collectiveGroup(meshShape, axes, static_cast<int64_t>(d), &rank);
  std::string dtype;
  {
    llvm::raw_string_ostream os(dtype);
    op.getResult(0).getType().cast<RankedTensorType>().getElementType().print(os);
  }
  auto reduce = [&](g::ReduceKind kind, size_t i, int64_t src) {
    // Rank order: rank 0's value, then + (or max) rank 1's, ...
    double acc = all[group[0]][src];
    for (size_t r = 1; r < group.size(); ++r) {
      double v = all[group[r]][src];
      acc = kind == g::ReduceKind::max ? std::max(acc, v) : kind == g::ReduceKind::min ? std::min(acc, v) : acc + v;
    }
    // Sums are exact in double; stored as the device stores them (f32,
    // bf16, ... rounded once; integers wrap).
    // (The exact mode keeps floats unrounded.)
    (*out)[i] = exact && IsFloatDtype(dtype) ? acc : RoundTo(acc, dtype);
  };
  if (auto ar = dyn_cast<g::AllReduceOp>(op)) {
    for (size_t i = 0; i < out->size(); ++i) reduce(ar.getKind(), i, static_cast<int64_t>(i));
    return "";
  }
  if (auto bc = dyn_cast<g::BroadcastOp>(op)) {
    *out = all[group[bc.getRoot()]];
    return "";
  }
  auto inShape = op.getOperand(0).getType().cast<RankedTensorType>().getShape();
  if (auto ag = dyn_cast<g::AllGatherOp>(op)) {
    // result[o, r*n + j, i] = input_r[o, j, i]
    int64_t outer, inner, n = inShape[ag.getDim()], G = static_cast<int64_t>(group.size());
    Split(inShape, ag.getDim(), &outer, &inner);
    for (int64_t r = 0; r < G; ++r)
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < inner; ++i)
            (*out)[(o * G * n + r * n + j) * inner + i] = all[group[r]][(o * n + j) * inner + i];
    return "";
  }
  if (auto rs = dyn_cast<g::ReduceScatterOp>(op)) {
    // result[o, j, i] = reduce_r input_r[o, rank*m + j, i]
    int64_t outer, inner, G = static_cast<int64_t>(group.size());
    int64_t m = inShape[rs.getDim()] / G;
    Split(inShape, rs.getDim(), &outer, &inner);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < m; ++j)
        for (int64_t i = 0; i < inner; ++i)
          reduce(rs.getKind(), static_cast<size_t>((o * m + j) * inner + i),
                 (o * G * m + rank * m + j) * inner + i);
    return "";
  }
  return "no reference for '" + op.getName().getStringRef().str() + "'";
}

}  // namespace

std::string ReferenceSpmd(mlir::func::FuncOp fn, g::MeshOp mesh,
                          const std::vector<HostTensors>& inputs,
                          std::vector<HostTensors>* outputs, const ReferenceOptions& options) {
  std::vector<int64_t> shape(mesh.getShape().begin(), mesh.getShape().end());
  const size_t devices = inputs.size();
  Rendezvous rendezvous(devices);
  outputs->assign(devices, {});
  std::vector<std::string> errors(devices);
  std::vector<std::thread> threads;
  for (size_t d = 0; d < devices; ++d) {
    threads.emplace_back([&, d] {
      ReferenceCollective collective = [&](Operation& op, const std::vector<double>& in,
                                           std::vector<double>* out) -> std::string {
        if (isa<g::MeshPositionOp>(op)) {  // the device's own: no exchange
          (*out)[0] = static_cast<double>(d);
          return "";
        }
        const std::vector<std::vector<double>>* all = nullptr;
        if (auto e = rendezvous.Exchange(&op, d, in, &all); !e.empty()) return e;
        return Collective(op, shape, mesh, d, *all, out, options.exact);
      };
      errors[d] = ReferenceGraph(fn, inputs[d], &(*outputs)[d], collective, options);
      if (!errors[d].empty()) rendezvous.Abort("device " + std::to_string(d) + ": " + errors[d]);
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t d = 0; d < devices; ++d)
    if (!errors[d].empty()) return "device " + std::to_string(d) + ": " + errors[d];
  return "";
}

}  // namespace tessera::reference
