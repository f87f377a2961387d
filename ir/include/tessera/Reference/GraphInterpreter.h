// Straightforward C++ reference implementations that tessera-run checks the
// compiled kernels against: an interpreter of Graph IR on the host (float
// math, logical row-major tensors converted to and from each layout) and
// hand-written references for the Tile IR examples.  The Graph IR
// interpreter models the element types as the cpu backend does (dtype.hpp).
#ifndef TESSERA_REFERENCE_GRAPHINTERPRETER_H
#define TESSERA_REFERENCE_GRAPHINTERPRETER_H

#include <functional>
#include <string>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tessera::reference {

// Host buffers in the program's physical layouts, as the values of their
// element types (double holds f32, f16, bf16, fp8, i8 and i32 exactly).
using HostTensors = std::vector<std::vector<double>>;

// Evaluates a collective op for one device of an SPMD program (see
// spmd_reference.hpp): `input` is the device's operand, `result` comes sized
// for the op's result; both hold logical row-major values.  Returns "" or an
// error.
using ReferenceCollective = std::function<std::string(
    mlir::Operation& op, const std::vector<double>& input, std::vector<double>* result)>;

// Evaluates a Graph IR function. Returns "" or an error.  Collectives need
// `collective` (an SPMD program runs one evaluation per device).
std::string ReferenceGraph(mlir::func::FuncOp fn, const HostTensors& inputs,
                           HostTensors* outputs, const ReferenceCollective& collective = nullptr);

// Tile IR kernels with a known reference, by kernel name.  `args` are all
// kernel arguments (buffers as floats, scalars as one-element vectors);
// returns false when there is none for this kernel.  `expected` gets the
// expected contents of every buffer argument.
bool ReferenceTile(const std::string& kernel, const HostTensors& args,
                   const std::vector<std::vector<int64_t>>& shapes, const std::vector<unsigned>& grid,
                   const std::vector<unsigned>& group, HostTensors* expected);

}  // namespace tessera::reference

#endif
