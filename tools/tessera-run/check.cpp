#include "check.hpp"

#include <algorithm>
#include <unistd.h>

#include <cstdio>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tessera/Dialect/Graph/Transforms/SpmdPlan.h"
#include "tessera/Dialect/Tile/IR/Tile.h"
#include "tessera/Reference/GraphInterpreter.h"
#include "tessera/Reference/SpmdInterpreter.h"
#include "tessera/Reference/TileInterpreter.h"
#include "tessera/element_types.hpp"

namespace tessera::run {

namespace {

using reference::HostTensors;

std::vector<double> Values(const NpyArray& a) { return elements::DecodeAll(a.bytes, a.dtype); }

int NotChecked(const std::string& why) {
  // A check that could not be made is not a pass: the exit code says so.
  std::printf("verify: %s: the result was NOT checked (--no-check runs it unchecked on purpose)\n", why.c_str());
  return kExitNotChecked;
}

}  // namespace

TileReference RunTileReference(const Program& program, mlir::ModuleOp source, const std::vector<NpyArray>& before,
                               TsDim3 grid, uint32_t subgroup_size, double max_seconds) {
  TileReference ref;
  const ProgramImage& im = program.image();
  auto fn = source ? source.lookupSymbol<mlir::func::FuncOp>(im.function) : mlir::func::FuncOp();
  if (!fn || !fn->hasAttr(tile::kGroupSizeAttr)) {
    ref.error = "no Tile IR kernel " + im.function + " in the source";
    return ref;
  }
  if (im.steps.empty() || im.steps.front().kind != PlanStep::kLaunch) {
    ref.error = "the program has no launch of " + im.function;
    ref.no_launch = true;
    return ref;
  }
  std::vector<reference::TileArgument> targs;
  for (const NpyArray& a : before) targs.push_back({Values(a)});
  const PlanStep& step = im.steps.front();
  reference::TileLaunch launch;
  launch.grid = {grid.x, grid.y, grid.z};
  launch.group_size = {step.group_size.x, step.group_size.y, step.group_size.z};
  launch.subgroup_size = subgroup_size;
  launch.max_seconds = max_seconds;
  reference::TileFailure failure = reference::TileFailure::kNone;
  ref.error = reference::RunTileKernel(fn, launch, &targs, &failure);
  ref.out_of_bounds = failure == reference::TileFailure::kOutOfBounds;
  ref.limit = failure == reference::TileFailure::kLimit;
  ref.divergent = failure == reference::TileFailure::kDivergent;
  if (ref.error.empty())
    for (auto& t : targs) ref.values.push_back(std::move(t.values));
  return ref;
}

int CheckResults(const Program& program, mlir::ModuleOp source, const std::string& no_source,
                 const std::vector<std::vector<NpyArray>>& before,
                 const std::vector<std::vector<NpyArray>>& after, TsDim3 grid, uint32_t subgroup_size,
                 const RunArgs& args, const reference::HostTensors* tile_expected) {
  const ProgramImage& im = program.image();
  const auto& params = program.params();
  const size_t devices = before.size();
  if (!source)  // gone, or no longer what was compiled (edited, not placeable)
    return NotChecked(no_source);
  auto fn = source.lookupSymbol<mlir::func::FuncOp>(im.function);
  if (!fn) return NotChecked("the source " + im.source_name + " has no function " + im.function);

  // expected[d][p]: the values of param p on device d that the reference says.
  std::vector<HostTensors> expected(devices);
  std::vector<size_t> checked;  // params whose values are compared
  if (fn->hasAttr(tile::kGroupSizeAttr)) {
    // Any Tile IR kernel, a user's own included: the interpreter runs it
    // (or ran it already, before the device: TileReference).
    if (tile_expected) {
      expected[0] = *tile_expected;
    } else {
      TileReference ref = RunTileReference(program, source, before[0], grid, subgroup_size, args.check_seconds);
      if (!ref.error.empty()) {
        std::fprintf(stderr, "tessera-run: reference: %s\n", ref.error.c_str());
        return NotChecked(ref.no_launch ? "the program has no launch of " + im.function
                                        : "the Tile IR interpreter could not run " + im.function);
      }
      expected[0] = std::move(ref.values);
    }
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].is_buffer()) checked.push_back(i);
  } else {
    std::vector<size_t> ins, outs;
    for (size_t i = 0; i < params.size(); ++i) (params[i].role == ParamRole::kInput ? ins : outs).push_back(i);
    std::vector<HostTensors> local(devices);
    for (size_t d = 0; d < devices; ++d)
      for (size_t i : ins) local[d].push_back(Values(before[d][i]));
    std::vector<HostTensors> results;
    std::string e;
    if (devices > 1) {
      mlir::FailureOr<graph::MeshOp> mesh = graph::findSpmdMesh(fn);
      e = mlir::failed(mesh) || !*mesh ? "no mesh" : reference::ReferenceSpmd(fn, *mesh, local, &results);
    } else {
      results.resize(1);
      e = reference::ReferenceGraph(fn, local[0], &results[0]);
    }
    if (!e.empty()) {
      std::fprintf(stderr, "tessera-run: reference: %s\n", e.c_str());
      return NotChecked("the reference could not evaluate " + im.function);
    }
    for (size_t d = 0; d < devices; ++d) {
      expected[d].assign(params.size(), {});
      for (size_t k = 0; k < outs.size() && k < results[d].size(); ++k) expected[d][outs[k]] = results[d][k];
    }
    checked = outs;
  }
  // One line per result type, each with its tolerance.
  std::vector<std::string> types;
  for (size_t i : checked)
    if (std::find(types.begin(), types.end(), params[i].dtype) == types.end()) types.push_back(params[i].dtype);
  int rc = kExitOk;
  for (const std::string& dt : types) {
    elements::Mismatch m;
    size_t worst_device = 0;
    double worst = -1;
    for (size_t d = 0; d < devices; ++d) {
      elements::Mismatch md;
      for (size_t i : checked)
        if (params[i].dtype == dt) elements::Compare(after[d][i].bytes, dt, expected[d][i], &md);
      if (md.max_error > worst) worst = md.max_error, worst_device = d;
      m.max_error = std::max(m.max_error, md.max_error);
      m.max_ref = std::max(m.max_ref, md.max_ref);
    }
    const double tol = args.tolerance >= 0 ? args.tolerance : elements::DefaultTolerance(dt);
    const bool ok = m.max_error <= tol * std::max(1.0, m.max_ref);
    const std::string label = types.size() > 1 ? dt + " results: " : "";
    const std::string why = args.tolerance >= 0 ? "--tolerance" : "default for " + dt;
    if (devices > 1)
      std::printf("verify: %zu devices, %smax abs error %.3g (device %zu; max |ref| %.3g, tolerance %.3g relative, "
                  "%s): %s\n",
                  devices, label.c_str(), m.max_error, worst_device, m.max_ref, tol, why.c_str(), ok ? "PASS" : "FAIL");
    else
      std::printf("verify: %smax abs error %.3g (max |ref| %.3g, tolerance %.3g relative, %s): %s\n", label.c_str(),
                  m.max_error, m.max_ref, tol, why.c_str(), ok ? "PASS" : "FAIL");
    if (!ok) rc = kExitMismatch;
  }
  return rc;
}

}  // namespace tessera::run
