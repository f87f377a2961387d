//===- ir_version.h - the version of Tessera IR ---------------------------===//
//
// A plugin's compiler reads modules written as MLIR bytecode by the program
// layer (TsCompiler_Compile_Args.ir_version): both must read the dialects
// the same way.  Bump it whenever an op, attribute or type of the Graph,
// Schedule or Tile dialect changes its syntax or meaning; a compiled program
// file records it too (docs/abi.md).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_IR_VERSION_H_
#define TESSERA_IR_VERSION_H_

#define TESSERA_IR_VERSION "tessera-ir-2026.11"

#endif
