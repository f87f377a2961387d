// tessera-compile: compile a Tessera program ahead of time, with no device,
// through the compiler of the plugin that owns the target:
//
//   tessera-compile prog.mlir --target cpu -o prog.tsp      # loadable program
//   tessera-compile prog.mlir --target vulkan --emit spirv   # what spirv-val reads
//   tessera-compile --list-targets
//
// A thin main over libtessera_compiler (CompileProgramImage, EmitProgram).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <sstream>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tessera/kernel_archive.hpp"
#include "tessera/output_file.hpp"
#include "tessera/program_compiler.hpp"

using namespace tessera;

namespace {

const char kHelp[] = R"(usage: tessera-compile PROGRAM.mlir --target TARGET [options]
       tessera-compile --list-targets

Compiles PROGRAM for TARGET ahead of time, without any device, by the
compiler of the plugin that owns TARGET (tessera-info lists them:
cpu[:<LLVM cpu>], vulkan, ...).  The output runs with
`tessera-run PROGRAM.tsp` or tessera::Program::Load.

Options:
  --target T             the target, e.g. cpu, cpu:znver3, vulkan (required)
  -o FILE                the output (default: PROGRAM with .tsp, or the emit
                         kind's extension)
  --emit KIND            the target's intermediate form instead of a program:
                         one of the target's emit kinds (cpu: llvm, asm;
                         vulkan: spirv, spirv-asm); several SPIR-V modules
                         are written one file per kernel (FILE.<kernel>.spv)
  --function NAME        the function or kernel to compile (required when
                         the module has several)
  --schedule "OPTIONS"   --tessera-graph-to-schedule options over the
                         target's schedule
  --compile-option N=V   an option of the target's compiler (repeatable)
  --overlap-chunks N     SPMD: pipeline a stage and its all_reduce in N row
                         blocks on two streams (docs/spmd.md "Overlap")
  --mesh A=N,B=M         place a program on global tensors that declares no
                         shardings on this mesh (docs/spmd.md, "Shardings
                         given at compile time"); the .tsp records it
  --in-sharding S        per argument, in order: per dim, comma-separated,
                         the mesh axis it is split over ('*' joins several,
                         the major first; '-' whole): "dp*tp,-"
  --out-sharding S       the same per result (missing ones: replicated)
  --list-targets         every target of every plugin found, and exit
  -h, --help             this text

Exit codes: 0 written; 1 bad arguments, a bad program or a compile error;
2 no plugin compiles for the target.
)";

int Fail(int rc, const std::string& what) {
  std::fprintf(stderr, "tessera-compile: %s\n", what.c_str());
  return rc;
}

std::string Stem(const std::string& path) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) return path.substr(0, dot);
  return path;
}

std::string Extension(const std::string& emit) {
  if (emit == "llvm") return ".ll";
  if (emit == "asm") return ".s";
  if (emit == "spirv") return ".spv";
  if (emit == "spirv-asm") return ".spvasm";
  if (emit == "ptx") return ".ptx";
  if (emit == "cubin") return ".cubin";
  if (emit == "hsaco") return ".hsaco";
  return "." + emit;
}

bool WriteFile(const std::string& path, const std::string& data, std::string* error) {
  // Atomic for a regular file (a full disk leaves no truncated file), in
  // place for a device (-o /dev/null); errors carry the reason.
  if (Status st = WriteOutputFile(path, data); !st.ok()) {
    *error = st.message();
    return false;
  }
  return true;
}

int ListTargets() {
  std::vector<CompileTargetInfo> targets = Compiler::ListTargets();
  if (targets.empty()) return Fail(2, "no plugin with a compiler was found (TESSERA_PLUGIN_PATH?)");
  for (const CompileTargetInfo& t : targets) {
    std::string archs;
    for (const std::string& a : t.archs) archs += (archs.empty() ? "" : ",") + a;
    std::string emits;
    for (const std::string& e : t.emit_kinds) emits += (emits.empty() ? "" : ", ") + e;
    std::printf("%-8s plugin %-8s archs %-24s -> %s; emit: %s\n", t.name.c_str(), t.plugin.c_str(),
                archs.empty() ? "(none)" : archs == "*" ? "any LLVM cpu name" : archs.c_str(),
                t.executable_format.c_str(), emits.empty() ? "none" : emits.c_str());
    for (const OptionInfo& o : t.options)
      std::printf("         --compile-option %s=<%s>%s%s: %s\n", o.name.c_str(), ValueTypeName(o.type),
                  o.default_value.empty() ? "" : " default ", o.default_value.c_str(), o.description.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string program, output, emit;
  ProgramCompileOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (s == "-h" || s == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (s == "--list-targets") {
      return ListTargets();
    } else if (s == "--target" || s == "-o" || s == "--emit" || s == "--function" || s == "--schedule" ||
               s == "--compile-option" || s == "--overlap-chunks" || s == "--mesh" || s == "--in-sharding" ||
               s == "--out-sharding") {
      if (!(v = value())) return Fail(1, s + " needs a value (tessera-compile --help)");
      if (s == "--target") options.target = v;
      else if (s == "-o") {
        // An empty name meant the default one beside the source, silently.
        if (!*v) return Fail(1, "-o needs a file name (leave -o out for the default, PROGRAM with .tsp)");
        output = v;
      }
      else if (s == "--emit") emit = v;
      else if (s == "--function") options.function = v;
      else if (s == "--schedule") options.schedule = v;
      else if (s == "--overlap-chunks") {
        char* end = nullptr;
        const long n = std::strtol(v, &end, 10);
        if (end == v || *end != 0 || n < 0 || n > 4096)
          return Fail(1, "--overlap-chunks " + std::string(v) + ": a count from 0 to 4096");
        options.overlap_chunks = n;
      } else if (s == "--mesh") {
        if (std::string why = ParseMeshText(v, &options.mesh); !why.empty())
          return Fail(1, "--mesh " + std::string(v) + ": " + why);
      } else if (s == "--in-sharding" || s == "--out-sharding") {
        ProgramCompileOptions::DimAxes spec;
        if (std::string why = ParseShardingText(v, &spec); !why.empty())
          return Fail(1, s + " " + v + ": " + why);
        (s == "--in-sharding" ? options.in_shardings : options.out_shardings).push_back(std::move(spec));
      } else {
        std::string text = v;
        size_t eq = text.find('=');
        if (eq == std::string::npos || eq == 0) return Fail(1, "--compile-option " + text + ": write NAME=VALUE");
        options.compiler_options.push_back(OptionValue::String(text.substr(0, eq), text.substr(eq + 1)));
      }
    } else if (!s.empty() && s[0] != '-' && program.empty()) {
      program = s;
    } else {
      return Fail(1, "unknown or repeated argument '" + s + "' (tessera-compile --help)");
    }
  }
  if (program.empty()) return Fail(1, "no program given (tessera-compile --help)");
  if (options.target.empty())
    return Fail(1, "no --target given: write one of the targets `tessera-compile --list-targets` shows");
  // A missing program is bad input (1); 2 is for a target no plugin
  // compiles for.
  if (::access(program.c_str(), F_OK) != 0) return Fail(1, program + ": " + std::strerror(errno));
  ProgramSource source = ProgramSource::File(program);
  std::string error;
  // No output may overwrite the program (`-o in.mlir`, or `k.ll` compiled
  // with --emit llvm, whose default output is k.ll).
  auto write = [&](const std::string& path, const std::string& data) {
    if (SameFile(path, program)) {
      error = path + " is the program being compiled: choose another output name (-o FILE)";
      return false;
    }
    return WriteFile(path, data, &error);
  };
  if (emit.empty()) {
    auto image = CompileProgramImage(source, options);
    if (!image.ok())
      return Fail(image.status().code() == StatusCode::kNotFound ? 2 : 1, image.status().message());
    if (output.empty()) output = Stem(program) + ".tsp";
    if (SameFile(output, program))
      return Fail(1, output + " is the program being compiled: choose another output name (-o FILE)");
    if (Status st = image->WriteFile(output); !st.ok()) return Fail(1, st.message());
    size_t kernels = 0;
    for (const ExecutableImage& e : image->executables) kernels += e.kernels.size();
    std::printf("wrote %s: %s for %s, %zu kernel%s, %zu step%s\n", output.c_str(), image->function.c_str(),
                image->target.c_str(), kernels, kernels == 1 ? "" : "s", image->steps.size(),
                image->steps.size() == 1 ? "" : "s");
    return 0;
  }
  auto out = EmitProgram(source, options, emit);
  if (!out.ok()) return Fail(out.status().code() == StatusCode::kNotFound ? 2 : 1, out.status().message());
  // What the compiler says about its output (warnings, what an emitted
  // form leaves out), on stderr; not the timing of the IR hand-off.
  std::istringstream log(out->log);
  for (std::string line; std::getline(log, line);)
    if (!line.empty() && line.rfind("hand-off: ", 0) != 0) std::fprintf(stderr, "%s\n", line.c_str());
  const std::string ext = Extension(emit);
  if (output.empty()) output = Stem(program) + ext;
  if (out->format.rfind(kKernelArchivePrefix, 0) == 0 && IsKernelArchive(out->data.data(), out->data.size())) {
    std::vector<ArchiveEntry> entries;
    if (std::string e = ReadKernelArchive(out->data.data(), out->data.size(), &entries); !e.empty())
      return Fail(1, "the " + out->plugin + " compiler returned a bad archive: " + e);
    if (entries.size() == 1) {
      if (!write(output, entries[0].data)) return Fail(1, error);
      std::printf("wrote %s: kernel %s (%s)\n", output.c_str(), entries[0].name.c_str(), emit.c_str());
      return 0;
    }
    const std::string stem = Stem(output);
    for (const ArchiveEntry& e : entries) {
      std::string path = stem + "." + e.name + ext;
      if (!write(path, e.data)) return Fail(1, error);
      std::printf("wrote %s: kernel %s (%s)\n", path.c_str(), e.name.c_str(), emit.c_str());
    }
    return 0;
  }
  if (!write(output, out->data)) return Fail(1, error);
  std::printf("wrote %s: %s of %zu kernel%s for %s\n", output.c_str(), emit.c_str(), out->kernels.size(),
              out->kernels.size() == 1 ? "" : "s", out->target.c_str());
  return 0;
}
