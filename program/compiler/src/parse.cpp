#include "parse.hpp"

#include "tessera/printable.hpp"
#include "placement.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mlir/IR/Verifier.h"
#include "tessera/Conversion/ShapeLimits.h"
#include "mlir/IR/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/ADT/StringExtras.h"
#include "tessera/Dialect/Graph/Transforms/Grad.h"
#include "tessera/Dialect/Graph/Transforms/ShardPropagation.h"
#include "tessera/InitAll.h"

namespace tessera::program {

namespace {
constexpr uint64_t kMaxSourceBytes = uint64_t{1} << 30;
// MLIR's parser is recursive descent: a few KiB of stack per level of
// brackets, regions or types, so a hostile program 100,000 levels deep
// overflowed the stack (SIGSEGV). Real programs nest a few dozen levels.
constexpr int kMaxNesting = 256;

/// Where `text` first nests ( [ { < deeper than kMaxNesting ("line:col"),
/// or "" when it does not. Skips string literals and // comments; `->`
/// is not a closing `>`; depth never goes below 0 (a stray `>` in an
/// affine constraint).
std::string TooDeep(llvm::StringRef text) {
  int depth = 0, line = 1, col = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    ++col;
    if (c == '\n') { ++line; col = 0; continue; }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
        else if (text[i] == '\n') ++line, col = 0;
      }
      continue;
    }
    if (c == '-' && i + 1 < text.size() && text[i + 1] == '>') { ++i; ++col; continue; }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxNesting) return std::to_string(line) + ":" + std::to_string(col);
    } else if ((c == ')' || c == ']' || c == '}' || c == '>') && depth > 0) {
      --depth;
    }
  }
  return "";
}

mlir::DialectRegistry Registry() {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  return registry;
}
// The first value whose static shape holds more bytes than any device
// addresses (kMaxTensorBytes), or whose element count overflows 64 bits:
// "" when none.  Past the verifier, such a count wrapped (2^32 x 2^32
// elements became "no elements") or overflowed the plan's sizes ("the
// program image is corrupt").
std::string OversizedValue(mlir::ModuleOp module) {
  std::string found;
  auto check = [&](mlir::Type type, mlir::Location loc) {
    if (!found.empty()) return;
    const std::string why = tessera::oversizedShapeReason(type);
    if (why.empty()) return;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    std::string where = "<unknown>";
    if (auto l = loc.dyn_cast<mlir::FileLineColLoc>())
      where = l.getFilename().str() + ":" + std::to_string(l.getLine()) + ":" + std::to_string(l.getColumn());
    found = where + ": " + os.str() + " " + why + ": no device addresses that much memory; give it a size that fits";
  };
  module.walk([&](mlir::Operation* op) {
    for (mlir::Region& r : op->getRegions())
      for (mlir::Block& b : r)
        for (mlir::BlockArgument a : b.getArguments()) check(a.getType(), a.getLoc());
    for (mlir::Value v : op->getResults()) check(v.getType(), op->getLoc());
    if (auto f = llvm::dyn_cast<mlir::FunctionOpInterface>(op))
      for (mlir::Type t : f.getResultTypes()) check(t, op->getLoc());
  });
  return found;
}

}  // namespace

ParsedModule::ParsedModule() : context_(Registry(), mlir::MLIRContext::Threading::DISABLED) {
  stream_ = std::make_unique<llvm::raw_string_ostream>(diagnostics_);
  handler_ = std::make_unique<mlir::SourceMgrDiagnosticHandler>(source_manager_, &context_, *stream_);
}

std::string ParsedModule::TakeDiagnostics() {
  stream_->flush();
  // They quote the source: a binary file's bytes must not reach the
  // terminal as control sequences.
  std::string out = SafeForTerminal(diagnostics_);
  diagnostics_.clear();
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

Status ParsedModule::Error(StatusCode code, const std::string& what) {
  std::string d = TakeDiagnostics();
  return Status(code, d.empty() ? what : what + ":\n" + d);
}

StatusOr<std::unique_ptr<ParsedModule>> ParsedModule::Parse(const ProgramSource& source,
                                                           const ProgramCompileOptions* placement) {
  std::unique_ptr<ParsedModule> p(new ParsedModule());
  p->name_ = source.name.empty() ? (source.path.empty() ? "<text>" : source.path) : source.name;
  if (!source.path.empty()) {
    llvm::SmallString<256> absolute(source.path);
    if (!llvm::sys::fs::make_absolute(absolute)) p->absolute_path_ = absolute.str().str();
  }
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  if (!source.path.empty() && !source.read) {
    auto file = ProgramSource::Read(source.path);
    if (!file.ok()) return file.status();
    buffer = llvm::MemoryBuffer::getMemBufferCopy(file->text, p->name_);
  } else {
    buffer = llvm::MemoryBuffer::getMemBufferCopy(source.text, p->name_);
  }
  if (std::string at = TooDeep(buffer->getBuffer()); !at.empty())
    return Status(StatusCode::kInvalidArgument,
                  p->name_ + ":" + at + ": nested more than " + std::to_string(kMaxNesting) +
                      " levels deep (brackets, braces, regions, types): not a program Tessera parses");
  p->source_manager_.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  p->module_ = mlir::parseSourceFile<mlir::ModuleOp>(p->source_manager_, &p->context_);
  if (!p->module_) return p->Error(StatusCode::kInvalidArgument, p->name_ + ": not a valid Tessera program");
  if (mlir::failed(mlir::verify(*p->module_)))
    return p->Error(StatusCode::kInvalidArgument, p->name_ + ": the program does not verify");
  if (std::string big = OversizedValue(*p->module_); !big.empty())
    return Status(StatusCode::kInvalidArgument, big);
  // Function names become kernel names (with suffixes: _k3_gemm, _stage2,
  // _part1), which cross the plugin ABI as C strings the core bounds at
  // 1024 bytes: a longer one, or one holding a NUL, was cut and then
  // "returned no kernel".
  constexpr size_t kMaxFunctionName = 960;
  for (auto f : p->module_->getOps<mlir::FunctionOpInterface>()) {
    const llvm::StringRef name = f.getName();
    if (name.size() > kMaxFunctionName || name.contains('\0'))
      return Status(StatusCode::kInvalidArgument,
                    p->name_ + ": function '" + Printable(std::string_view(name.data(), name.size()), 64) +
                        "' has a name of " + std::to_string(name.size()) +
                        " bytes" + (name.contains('\0') ? " holding a NUL" : "") +
                        ": kernel names are C strings of at most 1024 bytes, and the compiler adds suffixes (_k0_gemm, _stage1): keep a name to " + std::to_string(kMaxFunctionName) + " bytes");
  }
  // Gradients the program declares (tessera.grad_of) are built here, and
  // calls between Graph IR functions inlined: what follows sees one
  // function of plain Graph IR (docs/autodiff.md).
  if (mlir::failed(graph::expandGradients(*p->module_)) || mlir::failed(mlir::verify(*p->module_)))
    return p->Error(StatusCode::kInvalidArgument, p->name_ + ": cannot build the gradients it declares or inline its calls");
  // Shardings given at compile time make the function a global-view one.
  if (placement)
    if (Status st = ApplyPlacement(*p, *placement); !st.ok()) return st;
  // Functions written on global tensors (tessera.global_view) become SPMD.
  if (mlir::failed(graph::propagateGlobalViewShardings(*p->module_)) || mlir::failed(mlir::verify(*p->module_)))
    return p->Error(StatusCode::kInvalidArgument, p->name_ + ": cannot place its global-view functions on the mesh");
  return p;
}

StatusOr<ProgramSource> ReadOnce(const ProgramSource& source) {
  if (source.path.empty() || source.read) return source;
  auto file = ProgramSource::Read(source.path);
  if (!file.ok()) return file.status();
  if (!source.name.empty()) file->name = source.name;
  return file;
}

}  // namespace tessera::program

namespace tessera {

StatusOr<ProgramSource> ProgramSource::Read(std::string path) {
  // Only regular files of bounded size: a FIFO or /dev/zero would never end.
  // Opened first and checked through the descriptor: what is read is what
  // was checked.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status(StatusCode::kNotFound, path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(StatusCode::kInvalidArgument, path + ": not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > program::kMaxSourceBytes) {
    ::close(fd);
    return Status(StatusCode::kInvalidArgument, path + ": larger than the " +
                                                    FormatBytes(program::kMaxSourceBytes) + " a program may be");
  }
  ProgramSource s;
  s.name = path;
  s.path = std::move(path);
  s.read = true;
  // The size checked, then one byte more to see whether it grew meanwhile.
  s.text.resize(static_cast<size_t>(st.st_size) + 1);
  size_t got = 0;
  while (got < s.text.size()) {
    const ssize_t n = ::read(fd, &s.text[got], s.text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return Status(StatusCode::kNotFound, s.path + ": cannot read: " + std::strerror(e));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > static_cast<size_t>(st.st_size)) {
    ::close(fd);
    return Status(StatusCode::kUnavailable, s.path + ": it grew while it was read (is something writing it?): "
                                                     "read it again once it is complete");
  }
  ::close(fd);
  s.text.resize(got);
  return s;
}

std::string SourceSha256(const std::string& text) {
  llvm::SHA256 h;
  h.update(text);
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

}  // namespace tessera
