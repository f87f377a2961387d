// The reference interpreter of Graph IR that results are checked against:
// Graph IR evaluated on the host (float math, logical row-major tensors
// converted to and from each layout), with the element types modelled as
// every backend stores them (tessera/element_types.hpp).  Tile IR kernels
// have their own interpreter (TileInterpreter.h).
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
// SpmdInterpreter.h): `input` is the device's operand, `result` comes sized
// for the op's result; both hold logical row-major values.  Returns "" or an
// error.  Also answers `tessera_graph.mesh_position` (no input): the
// device's position.
using ReferenceCollective = std::function<std::string(
    mlir::Operation& op, const std::vector<double>& input, std::vector<double>* result)>;

struct ReferenceOptions {
  // Float ops computed in double and never rounded to their element type
  // (integers stay exact): the f64 evaluation the gradient checks take
  // central finite differences of. Off: the backends' f32 arithmetic,
  // rounded to each result's type, which results are checked against.
  bool exact = false;
};

// Evaluates a Graph IR function. Returns "" or an error.  Collectives need
// `collective` (an SPMD program runs one evaluation per device).
std::string ReferenceGraph(mlir::func::FuncOp fn, const HostTensors& inputs,
                           HostTensors* outputs, const ReferenceCollective& collective = nullptr,
                           const ReferenceOptions& options = {});

}  // namespace tessera::reference

#endif
