// Shardings given at compile time (ProgramCompileOptions::mesh,
// in_shardings, out_shardings; docs/spmd.md, "Shardings given at compile
// time"): the chosen function becomes a global-view function over the mesh.
#ifndef TESSERA_PROGRAM_COMPILER_PLACEMENT_HPP_
#define TESSERA_PROGRAM_COMPILER_PLACEMENT_HPP_

#include "parse.hpp"

namespace tessera::program {

// Nothing without options.mesh (in or out shardings without one are an
// error). Otherwise: finds the function (options.function, or the only
// one), adds the mesh (or finds the module's own, which must be the same),
// writes the shardings on its arguments and results and marks it
// `tessera.global_view`. A function that declares shardings, a Tile IR
// kernel, more entries than arguments or dims, an unknown or repeated axis:
// INVALID_ARGUMENT naming what and where.
Status ApplyPlacement(ParsedModule& parsed, const ProgramCompileOptions& options);
// The same on any module (tessera-run's reference copy); `name` for
// messages; the verifier's diagnostics go to the module's context.
Status PlaceOnMesh(mlir::ModuleOp module, const std::string& name, const ProgramCompileOptions& options);

// The placement as text, for the compile cache key ("" without one).
std::string PlacementKey(const ProgramCompileOptions& options);

}  // namespace tessera::program

#endif
