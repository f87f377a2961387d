// What a kernel does with a memref argument: TS_PARAM_READ, TS_PARAM_WRITE,
// and TS_PARAM_ATOMIC when every access is an atomic read-modify-write.
// Compilers put it in the kernel's signature (TsKernelParam.access); the
// validation layer's hazard detector reads it (docs/runtime.md).
#ifndef TESSERA_TARGET_ARGUMENTACCESS_H_
#define TESSERA_TARGET_ARGUMENTACCESS_H_

#include <cstdint>

#include "mlir/IR/Value.h"

namespace tessera::target {

// Follows the argument through views and casts to every op that touches it.
// Ops with memory effects on it say read or write; Tile IR's load, store,
// cp_async and atomic_rmw are known; any other use (a call, a pointer taken)
// counts as read and write.  An argument nothing touches reads.
uint32_t ArgumentAccess(mlir::Value argument);

}  // namespace tessera::target

#endif  // TESSERA_TARGET_ARGUMENTACCESS_H_
