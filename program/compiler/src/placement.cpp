#include "placement.hpp"

#include "lower.hpp"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "tessera/Dialect/Graph/IR/Graph.h"
#include "tessera/Dialect/Graph/Transforms/ShardPropagation.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"
#include "tessera/Dialect/Tile/IR/Tile.h"

namespace tessera::program {

namespace {

using mlir::func::FuncOp;
namespace g = tessera::graph;

std::string AxesText(const std::vector<std::string>& axes) {
  std::string s;
  for (const std::string& a : axes) s += (s.empty() ? "" : ",") + a;
  return s;
}

// The dims entry of a #tessera_graph.shard: "", "tp" or ["dp", "tp"].
mlir::Attribute DimEntry(mlir::Builder& b, const std::vector<std::string>& axes) {
  if (axes.size() == 1) return b.getStringAttr(axes[0]);
  if (axes.empty()) return b.getStringAttr("");
  llvm::SmallVector<mlir::Attribute> list;
  for (const std::string& a : axes) list.push_back(b.getStringAttr(a));
  return b.getArrayAttr(list);
}

}  // namespace

std::string PlacementKey(const ProgramCompileOptions& options) {
  // Shardings without a mesh are keyed too: they are an error, never a hit.
  if (options.mesh.empty() && options.in_shardings.empty() && options.out_shardings.empty()) return "";
  std::string s = "mesh";
  for (const auto& a : options.mesh) s += " " + a.name + "=" + std::to_string(a.size);
  for (const auto* side : {&options.in_shardings, &options.out_shardings}) {
    s += side == &options.in_shardings ? "; in" : "; out";
    for (const auto& spec : *side) {
      s += " [";
      for (const auto& axes : spec) s += "(" + AxesText(axes) + ")";
      s += "]";
    }
  }
  return s;
}

Status ApplyPlacement(ParsedModule& parsed, const ProgramCompileOptions& options) {
  Status st = PlaceOnMesh(parsed.module(), parsed.name(), options);
  if (st.ok()) return st;
  const std::string diagnostics = parsed.TakeDiagnostics();
  return diagnostics.empty() ? st : Status(st.code(), st.message() + ":\n" + diagnostics);
}

Status PlaceOnMesh(mlir::ModuleOp module, const std::string& name, const ProgramCompileOptions& options) {
  if (options.mesh.empty()) {
    if (!options.in_shardings.empty() || !options.out_shardings.empty())
      return Status(StatusCode::kInvalidArgument,
                    name + ": in_shardings / out_shardings place a program on a mesh: give the mesh too "
                           "(ProgramCompileOptions::mesh, tessera.compile(..., mesh=...))");
    return Status::Ok();
  }
  std::vector<std::string> names = Candidates(module);
  std::string chosen = options.function;
  if (chosen.empty()) {
    if (names.size() != 1)
      return Status(StatusCode::kInvalidArgument,
                    name + ": " + std::to_string(names.size()) +
                        " functions to choose from: name the one to place on the mesh (function)");
    chosen = names.front();
  }
  auto fn = module.lookupSymbol<FuncOp>(chosen);
  if (!fn) return Status(StatusCode::kNotFound, name + ": no function named '" + chosen + "' to place on the mesh");
  if (fn->hasAttr(tile::kGroupSizeAttr))
    return Status(StatusCode::kInvalidArgument,
                  name + ": @" + chosen + " is a Tile IR kernel: only a Graph IR function on global tensors is placed on a mesh");
  auto declares = [&]() -> std::string {
    if (fn->hasAttr(g::kGlobalViewAttr)) return "it is marked tessera.global_view";
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (fn.getArgAttr(i, g::kShardingAttr)) return "argument " + std::to_string(i) + " has a tessera_graph.sharding";
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      if (fn.getResultAttr(i, g::kShardingAttr)) return "result " + std::to_string(i) + " has a tessera_graph.sharding";
    bool spmd = false;
    fn.walk([&](mlir::Operation* op) {
      spmd |= mlir::isa<g::AllReduceOp, g::AllGatherOp, g::ReduceScatterOp, g::BroadcastOp, g::MeshPositionOp>(op);
    });
    return spmd ? "it has collectives (an SPMD function, written per device)" : "";
  };
  if (std::string why = declares(); !why.empty())
    return Status(StatusCode::kInvalidArgument,
                  name + ": @" + chosen + " declares its own placement (" + why +
                      "): shardings given at compile time are for a function on global tensors that declares none");
  if (options.in_shardings.size() > fn.getNumArguments() || options.out_shardings.size() > fn.getNumResults())
    return Status(StatusCode::kInvalidArgument,
                  name + ": " + std::to_string(options.in_shardings.size()) + " in_shardings and " +
                      std::to_string(options.out_shardings.size()) + " out_shardings for @" + chosen + " of " +
                      std::to_string(fn.getNumArguments()) + " arguments and " + std::to_string(fn.getNumResults()) +
                      " results");
  bool splits = false;
  for (const auto* side : {&options.in_shardings, &options.out_shardings})
    for (const auto& spec : *side)
      for (const auto& axes : spec) splits |= !axes.empty();
  if (!splits)
    return Status(StatusCode::kInvalidArgument,
                  name + ": the shardings given for @" + chosen +
                      " split no dim: every device would compute the whole program; split at least one argument or "
                      "result over the mesh (in_shardings, out_shardings)");
  // The mesh: the module's own when it is the same, else a new @mesh.
  mlir::OpBuilder b(module.getContext());
  llvm::SmallVector<llvm::StringRef> axisNames;
  llvm::SmallVector<int64_t> sizes;
  for (const auto& a : options.mesh) {
    axisNames.push_back(a.name);
    sizes.push_back(a.size);
  }
  std::string meshName = "mesh";
  for (g::MeshOp m : module.getOps<g::MeshOp>()) {
    bool same = m.getShape() == llvm::ArrayRef<int64_t>(sizes) && m.getAxes().size() == axisNames.size();
    for (size_t i = 0; same && i < axisNames.size(); ++i)
      same = m.getAxes()[i].cast<mlir::StringAttr>().getValue() == axisNames[i];
    if (!same)
      return Status(StatusCode::kInvalidArgument,
                    name + ": the module's mesh @" + m.getSymName().str() + " differs from the mesh given");
    meshName = m.getSymName().str();
  }
  if (!module.lookupSymbol<g::MeshOp>(meshName)) {
    if (module.lookupSymbol(meshName))
      return Status(StatusCode::kInvalidArgument, name + ": the symbol @mesh is taken: the mesh cannot be added");
    b.setInsertionPointToStart(module.getBody());
    b.create<g::MeshOp>(module.getLoc(), meshName, b.getStrArrayAttr(axisNames), b.getDenseI64ArrayAttr(sizes));
  }
  auto meshRef = mlir::FlatSymbolRefAttr::get(module.getContext(), meshName);
  auto shard = [&](const ProgramCompileOptions::DimAxes& spec, mlir::Type type, const std::string& what)
      -> StatusOr<g::ShardAttr> {
    auto t = type.dyn_cast<mlir::RankedTensorType>();
    if (!t) return Status(StatusCode::kInvalidArgument, name + ": " + what + " of @" + chosen + " is not a tensor");
    if (static_cast<int64_t>(spec.size()) > t.getRank())
      return Status(StatusCode::kInvalidArgument, name + ": " + what + " of @" + chosen + " has rank " +
                                                      std::to_string(t.getRank()) + "; its sharding names " +
                                                      std::to_string(spec.size()) + " dims");
    llvm::SmallVector<mlir::Attribute> dims;
    for (int64_t d = 0; d < t.getRank(); ++d)
      dims.push_back(DimEntry(b, d < static_cast<int64_t>(spec.size()) ? spec[d] : std::vector<std::string>{}));
    return g::ShardAttr::get(module.getContext(), meshRef, b.getArrayAttr(dims), b.getArrayAttr({}),
                             b.getArrayAttr({}));
  };
  for (size_t i = 0; i < options.in_shardings.size(); ++i) {
    auto s = shard(options.in_shardings[i], fn.getArgumentTypes()[i], "argument " + std::to_string(i));
    if (!s.ok()) return s.status();
    fn.setArgAttr(i, g::kShardingAttr, *s);
  }
  for (size_t i = 0; i < options.out_shardings.size(); ++i) {
    auto s = shard(options.out_shardings[i], fn.getResultTypes()[i], "result " + std::to_string(i));
    if (!s.ok()) return s.status();
    fn.setResultAttr(i, g::kShardingAttr, *s);
  }
  fn->setAttr(g::kGlobalViewAttr, b.getUnitAttr());
  // The verifier names the argument and the axis; the whole function
  // printed after it would bury that.
  mlir::MLIRContext* ctx = module.getContext();
  const bool printOp = ctx->shouldPrintOpOnDiagnostic();
  ctx->printOpOnDiagnostic(false);
  const bool fits = mlir::succeeded(mlir::verify(module));
  ctx->printOpOnDiagnostic(printOp);
  if (!fits)
    return Status(StatusCode::kInvalidArgument, name + ": the shardings given at compile time do not fit @" + chosen);
  return Status::Ok();
}

}  // namespace tessera::program
