// From a parsed module to what a plugin compiles plus the plan around it
// (hardware-neutral): the function to run, SPMD stages, and Graph IR
// lowered to the level the target takes.
#ifndef TESSERA_PROGRAM_COMPILER_LOWER_HPP_
#define TESSERA_PROGRAM_COMPILER_LOWER_HPP_

#include <string>
#include <vector>

#include "parse.hpp"

namespace tessera::program {

struct LoweredProgram {
  mlir::OwningOpRef<mlir::ModuleOp> module;  // what the plugin compiles
  ProgramImage image;                        // the plan; executable 0 is the compile's
};

// The size of the mesh of `function` (empty: the only one); 1 without.
StatusOr<int64_t> DevicesNeeded(ParsedModule& parsed, const std::string& function);

// The functions and kernels `module` offers, in order.
std::vector<std::string> Candidates(mlir::ModuleOp module);

// A target's schedule for one architecture: tokens "ARCH:key=value" are
// kept (as "key=value") only when ARCH is `arch`; the others as they are.
// A plugin tunes one option for one architecture this way
// (cuda: "sm_90a:mma=wgmma").
std::string ScheduleForArch(const std::string& schedule, const std::string& arch);

// Lowers `parsed`'s function `function` (empty: the only one) for `target`
// (of plugin `plugin`); `device` (may be null) bounds what kernels may use.
// overlap_chunks >= 2 pipelines SPMD stages with their all_reduce in that
// many row blocks (--tessera-overlap-collectives).
StatusOr<LoweredProgram> Lower(ParsedModule& parsed, const std::string& function,
                               const CompileTargetInfo& target, const std::string& schedule,
                               int64_t overlap_chunks, const Device* device);

// After the compile: kernel signatures give the bytes of the values they
// use, and the params take their values' sizes.
Status FinishImage(ProgramImage* image, const CompileOutput& compiled);

}  // namespace tessera::program

#endif
