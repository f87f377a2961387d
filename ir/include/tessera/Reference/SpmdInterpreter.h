// The reference of an SPMD Graph IR program: the original function (not
// the stages tessera-run compiles) evaluated once per device by the Graph
// IR interpreter of reference.hpp, with the collectives computed on the host
// from every device's operand.  Independent of --tessera-spmd-stages and of
// the runtime's Communicator, so it checks both.
#ifndef TESSERA_REFERENCE_SPMDINTERPRETER_H
#define TESSERA_REFERENCE_SPMDINTERPRETER_H

#include <string>
#include <vector>

#include "tessera/Reference/GraphInterpreter.h"
#include "tessera/Dialect/Graph/IR/Graph.h"

namespace tessera::reference {

// `inputs[d]` are device d's local arguments (logical values of each
// argument in its physical layout, as for ReferenceGraph); `outputs[d]`
// receives device d's results.  Devices are numbered row-major over the
// mesh (tessera::graph::meshCoords).  Returns "" or an error.
std::string ReferenceSpmd(mlir::func::FuncOp fn, tessera::graph::MeshOp mesh,
                          const std::vector<HostTensors>& inputs,
                          std::vector<HostTensors>* outputs, const ReferenceOptions& options = {});

}  // namespace tessera::reference

#endif
