//===- PTXBackend.h - LLVM IR -> PTX (NVPTX) -> cubin (ptxas) -------------===//
#ifndef TESSERA_CUDA_PTXBACKEND_H
#define TESSERA_CUDA_PTXBACKEND_H

#include <array>
#include <cstdint>
#include <string>

#include "llvm/IR/Module.h"

namespace tessera::cuda {

/// "sm_90a" -> LLVM's cpu "sm_90" (LLVM 16 knows no "a" targets) and the
/// PTX target line ".target sm_90a" ptxas needs for the arch-specific
/// instructions.
struct PtxTarget {
  std::string arch;     // as given: sm_80, sm_90a
  std::string llvmCpu;  // sm_80, sm_90
  int smVersion = 0;    // 80, 90
};
PtxTarget ParsePtxTarget(const std::string &arch);

/// Links libdevice (`libdevice`, or found in $CUDA_HOME/nvvm/libdevice,
/// /usr/local/cuda/nvvm/libdevice) when the module calls __nv_* functions, makes every
/// function but `entry` internal, optimizes at -O3 for the target and
/// returns the PTX text (with the header's .target raised to arch).  "" with
/// *error set on failure.
std::string EmitPtx(llvm::Module &module, const PtxTarget &target, const std::string &entry,
                    const std::string &libdevice, std::string *error);

/// Tells ptxas the most lanes a launch of `entry` has (`.maxntid`, the
/// group's size): it then keeps within the registers those lanes share
/// (a 384-lane group: 168 each), which a launch needs and setmaxnreg's
/// budgets are counted from.
void AnnotateGroupSize(llvm::Module &module, const std::string &entry, const std::array<int64_t, 3> &group);

/// The toolkit's ptxas: `configured` if not empty, else
/// $CUDA_HOME/bin/ptxas, /usr/local/cuda/bin/ptxas, then PATH.  "" if none.
std::string FindPtxas(const std::string &configured);

/// Runs `ptxas -arch=<arch> -O<level>` on `ptx`; returns the cubin, or ""
/// with *error holding ptxas's message.  *log gets its warnings (-v output
/// when verbose).
std::string RunPtxas(const std::string &ptxas, const std::string &ptx, const std::string &arch,
                     int optLevel, bool verbose, std::string *log, std::string *error);

}  // namespace tessera::cuda

#endif
