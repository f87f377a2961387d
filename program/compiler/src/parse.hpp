// Reading a program's module with every diagnostic captured: what goes
// wrong becomes a Status whose message has MLIR's file:line:col form.
#ifndef TESSERA_PROGRAM_COMPILER_PARSE_HPP_
#define TESSERA_PROGRAM_COMPILER_PARSE_HPP_

#include <memory>
#include <string>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"
#include "tessera/program_compiler.hpp"

namespace tessera::program {

// `source` with its file read (ProgramSource::Read; its name kept), or
// itself when it is text or read already: each entry point reads a file
// once, so that every step of one compile sees the same bytes.
StatusOr<ProgramSource> ReadOnce(const ProgramSource& source);

// Owns the context, the source and the module; diagnostics of everything
// done on the module go to `diagnostics`.
class ParsedModule {
 public:
  // With `placement`, its shardings given at compile time are applied
  // before the global-view functions are placed (placement.hpp).
  static StatusOr<std::unique_ptr<ParsedModule>> Parse(const ProgramSource& source,
                                                       const ProgramCompileOptions* placement = nullptr);

  mlir::ModuleOp module() { return *module_; }
  mlir::MLIRContext& context() { return context_; }
  const std::string& name() const { return name_; }
  // The source file's absolute path ("" for text): what a compiled image
  // names, so that its source is found from any working folder.
  const std::string& absolute_path() const { return absolute_path_; }
  // The diagnostics so far (and forgets them).
  std::string TakeDiagnostics();
  // A status with `code`, "<what>:\n<diagnostics>" (or just <what>).
  Status Error(StatusCode code, const std::string& what);

 private:
  ParsedModule();
  mlir::MLIRContext context_;
  llvm::SourceMgr source_manager_;
  std::string diagnostics_;
  std::unique_ptr<llvm::raw_string_ostream> stream_;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> handler_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::string name_;
  std::string absolute_path_;
};

}  // namespace tessera::program

#endif
