// The "abi" area's invalid-argument cases of executables, kernel launches
// and the compiler (abi_util.hpp).  Launches use the suite's fill_u32
// (buffer, uint32 value, uint64 n) on one group; the compiler's cases start
// from a module of garbage bytes, so every case that must be refused before
// the module is parsed is one of them.
#include <cstring>

#include "areas/abi_util.hpp"
#include "tessera/ir_version.h"

namespace tessera::cts::abi {
namespace {

using A_Load = TsExecutable_Load_Args;
using A_XDestroy = TsExecutable_Destroy_Args;
using A_Get = TsExecutable_GetKernel_Args;
using A_Launch = TsKernel_Launch_Args;
using A_Targets = TsCompiler_GetTargets_Args;
using A_Compile = TsCompiler_Compile_Args;
using A_CDestroy = TsCompilation_Destroy_Args;

constexpr uint64_t kBuf = 1024;  // Env's buffers

void ValidLoad(Env& env, A_Load& a) {
  const KernelModule* m = ShippedModuleFor(env.info());
  if (!env.Require(m != nullptr, "executable_formats (none of the suite's formats)")) return;
  a.device = env.device();
  a.format = m->format;
  a.path = env.Keep(KernelModulePath(*m, "fill_u32"))->c_str();
}

// fill_u32 over one group, into buffer().
void ValidLaunch(Env& env, A_Launch& a) {
  a.kernel = env.kernel();
  a.stream = env.stream();
  a.grid = TsDim3{1, 1, 1};
  a.group_size = env.kernel_group();
  struct Scalars {
    uint32_t value = 5;
    uint64_t n = 1;
  };
  Scalars* s = env.Keep(Scalars{});
  std::vector<TsKernelArg> args(3);
  args[0].kind = TS_KERNEL_ARG_BUFFER;
  args[0].buffer = env.buffer();
  args[1].kind = TS_KERNEL_ARG_SCALAR;
  args[1].data = &s->value;
  args[1].size = sizeof s->value;
  args[2].kind = TS_KERNEL_ARG_SCALAR;
  args[2].data = &s->n;
  args[2].size = sizeof s->n;
  std::vector<TsKernelArg>* kept = env.Keep(std::move(args));
  a.args = kept->data();
  a.num_args = kept->size();
}
TsKernelArg& Arg(const A_Launch& a, size_t i) { return const_cast<TsKernelArg&>(a.args[i]); }

void ValidCompile(Env& env, A_Compile& a) {
  std::string target = env.compile_target();
  if (target.empty()) return;
  static const char kGarbage[] = "this is not MLIR bytecode";
  a.target = env.Keep(target)->c_str();
  a.ir_version = TESSERA_IR_VERSION;
  a.module = kGarbage;
  a.module_size = sizeof kGarbage;
  a.source_name = "abi_args";
}

}  // namespace

void AddKernelCases(CaseList* out) {
  {
    EntryCases<A_Load> c(out, "Executable_Load", &TsPluginApi::Executable_Load,
                         TS_EXECUTABLE_LOAD_ARGS_STRUCT_SIZE, ValidLoad);
    c.Header();
    c.Handle("Device", &A_Load::device);
    c.Add("FormatNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Load& a) { a.format = nullptr; });
    c.Add("FormatUnknown", TS_ERROR_UNSUPPORTED,
          [](Env&, A_Load& a) { a.format = "no-such-format"; });
    c.Add("NeitherDataNorPath", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Load& a) { a.path = nullptr; });
    c.Add("PathEmpty", TS_ERROR_NOT_FOUND, [](Env&, A_Load& a) { a.path = ""; });
    c.Add("PathMissing", TS_ERROR_NOT_FOUND,
          [](Env&, A_Load& a) { a.path = "/nonexistent/tessera/abi_args/kernels"; });
    c.Add("DataSizeZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Load& a) {
      a.path = nullptr;
      a.data = "x";
      a.size = 0;
    });
    c.Add("DataGarbage", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Load& a) {
      static const char kGarbage[] = "this is not an executable image of any format";
      a.path = nullptr;
      a.data = kGarbage;
      a.size = sizeof kGarbage;
    });
  }
  {
    EntryCases<A_XDestroy> c(out, "Executable_Destroy", &TsPluginApi::Executable_Destroy,
                             TS_EXECUTABLE_DESTROY_ARGS_STRUCT_SIZE,
                             [](Env& env, A_XDestroy& a) { a.executable = env.executable(); });
    c.Header();
    c.Handle("Executable", &A_XDestroy::executable);
  }
  {
    EntryCases<A_Get> c(out, "Executable_GetKernel", &TsPluginApi::Executable_GetKernel,
                        // Callers that know only the fields up to `kernel` are served.
                        TS_STRUCT_SIZE(A_Get, kernel), [](Env& env, A_Get& a) {
                          a.executable = env.executable();
                          a.name = "fill_u32";
                        });
    c.Header();
    c.Handle("Executable", &A_Get::executable);
    c.Add("NameNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Get& a) { a.name = nullptr; });
    c.Add("NameUnknown", TS_ERROR_NOT_FOUND, [](Env&, A_Get& a) { a.name = "no_such_kernel"; });
  }
  {
    EntryCases<A_Launch> c(out, "Kernel_Launch", &TsPluginApi::Kernel_Launch,
                           TS_KERNEL_LAUNCH_ARGS_MIN_STRUCT_SIZE, ValidLaunch);
    c.Header();
    c.Handle("Kernel", &A_Launch::kernel);
    c.Handle("Stream", &A_Launch::stream);
    c.Add("GridXZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Launch& a) { a.grid.x = 0; });
    c.Add("GridYZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Launch& a) { a.grid.y = 0; });
    c.Add("GridZZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Launch& a) { a.grid.z = 0; });
    c.Add("GroupXZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Launch& a) { a.group_size.x = 0; });
    c.Add("GroupZZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Launch& a) { a.group_size.z = 0; });
    c.Add("GroupAboveMax", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Launch& a) {
      a.group_size = TsDim3{env.info().max_group_size + 1, 1, 1};
    });
    c.Add("SharedMemoryAboveMax", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Launch& a) {
      a.shared_memory_bytes = env.info().shared_memory_per_group + 1;
    });
    c.Add("ArgsNullWithCount", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Launch& a) { a.args = nullptr; });
    c.Add("ArgKindUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Launch& a) { Arg(a, 1).kind = static_cast<TsKernelArgKind>(9); });
    c.Add("BufferArgNull", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Launch& a) { Arg(a, 0).buffer = nullptr; });
    c.Add("BufferArgForeign", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Launch& a) {
      Arg(a, 0).buffer = static_cast<TsBuffer*>(env.foreign());
    });
    c.Add("BufferArgWrongType", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Launch& a) {
      Arg(a, 0).buffer = EntryCases<A_Launch>::WrongType<TsBuffer>(env);
    });
    c.Add("BufferArgOffsetAtTheEnd", TS_ERROR_OUT_OF_RANGE,
          [](Env&, A_Launch& a) { Arg(a, 0).offset = kBuf; });
    c.Add("BufferArgOffsetWraps", TS_ERROR_OUT_OF_RANGE,
          [](Env&, A_Launch& a) { Arg(a, 0).offset = UINT64_MAX; });
    c.Add("ScalarArgDataNull", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Launch& a) { Arg(a, 1).data = nullptr; });
    c.Add("StreamOfOtherDevice", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_Launch& a) { a.stream = env.stream2(); });
    c.Add("StreamOfOtherClient", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_Launch& a) { a.stream = env.other_stream(); });
  }
  {
    EntryCases<A_Targets> c(out, "Compiler_GetTargets", &TsPluginApi::Compiler_GetTargets,
                            TS_COMPILER_GETTARGETS_ARGS_STRUCT_SIZE, [](Env&, A_Targets&) {});
    c.Header();
  }
  {
    EntryCases<A_Compile> c(out, "Compiler_Compile", &TsPluginApi::Compiler_Compile,
                            TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE, ValidCompile);
    c.Header();
    c.Add("TargetNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Compile& a) { a.target = nullptr; });
    c.Add("TargetUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Compile& a) { a.target = "no_such_target"; });
    c.Add("ArchUnknown", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Compile& a) {
      a.target = env.Keep(std::string(a.target ? a.target : "") + ":no_such_arch_9000")->c_str();
    });
    c.Add("IrVersionOther", TS_ERROR_ABI_MISMATCH,
          [](Env&, A_Compile& a) { a.ir_version = "tessera-ir-1999.01"; });
    c.Add("IrVersionNull", TS_ERROR_ABI_MISMATCH,
          [](Env&, A_Compile& a) { a.ir_version = nullptr; });
    c.Add("ModuleNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Compile& a) { a.module = nullptr; });
    c.Add("ModuleSizeZero", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Compile& a) { a.module_size = 0; });
    c.Add("ModuleGarbage", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Compile&) {});
    c.Add("EmitUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Compile& a) { a.emit = "no-such-emit-kind"; });
    c.Add("OptionsNullWithCount", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Compile& a) { a.num_options = 2; });
    c.Add("OptionUnknown", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Compile& a) {
      TsNamedValue v{};
      v.struct_size = TS_NAMED_VALUE_STRUCT_SIZE;
      v.name = "no_such_compile_option";
      v.type = TS_VALUE_STRING;
      v.string_value = "1";
      a.options = env.Keep(v);
      a.num_options = 1;
    });
    c.OptionalHandle("Device", &A_Compile::device);
  }
  {
    EntryCases<A_CDestroy> c(out, "Compilation_Destroy", &TsPluginApi::Compilation_Destroy,
                             TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE, [](Env& env, A_CDestroy& a) {
                               a.compilation = static_cast<TsCompilation*>(env.foreign());
                             });
    c.Header();
    c.Add("CompilationForeign", TS_ERROR_INVALID_HANDLE, [](Env&, A_CDestroy&) {});
  }
}

}  // namespace tessera::cts::abi
