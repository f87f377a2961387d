// Programs: a Tessera program compiled for a plugin's target, loaded on one
// device (or on a mesh of devices, one per position) and run on streams.
//
//   #include <tessera/program.hpp>    // link Tessera::tessera
//   auto rt = tessera::Runtime::Create().value();
//   auto program = tessera::Program::Load({rt.devices()[0]}, "mlp.tsp");
//   // or, compiling: tessera::CompileProgram (tessera/program_compiler.hpp)
//   program->Run(stream, {KernelArg::buffer(x), KernelArg::buffer(w), ...});
//
// What a program is, device-independently, is a ProgramImage: the target it
// was compiled for, the executables the plugin's compiler made, and a plan
// (buffers and steps: kernel launches and collectives).  Save() writes it to
// a versioned file; Load() checks the file (format version, plugin ABI, IR
// version, target) and says what differs, naming both sides.
//
// Loading a program maps no LLVM or MLIR: this library only reads images and
// enqueues their steps.
//
// Ownership: a Program owns its executables and its intermediate buffers on
// every device; copies of the handle share them.  Thread-safety: Run may be
// called from several threads only on different Programs (the intermediate
// buffers are the program's); everything else is read-only.
#ifndef TESSERA_PROGRAM_HPP_
#define TESSERA_PROGRAM_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/compiler.hpp"
#include "tessera/process_group.hpp"
#include "tessera/runtime.hpp"

namespace tessera {

namespace detail {
struct ProgramImpl;
}

// How an argument of a program is used.
enum class ParamRole {
  kInput,   // read (a Graph IR function argument)
  kOutput,  // written (a Graph IR function result)
  kInOut,   // a buffer of a Tile IR kernel: read and written
  kScalar,  // a scalar of a Tile IR kernel, passed by value
};
const char* ParamRoleName(ParamRole role);

// How a program argument lies over the mesh (SPMD programs): per dim the
// mesh axes it is partitioned over, the major one first (empty: not
// partitioned; several: the device's block is its coordinates on them taken
// row-major); axes in `partial_sum_axes` hold partial sums; every other axis
// holds copies.
struct Sharding {
  std::vector<std::vector<int>> dim_axes;
  std::vector<int> partial_sum_axes;
  bool replicated() const;
};

struct ParamSpec {
  std::string name;            // "arg0", "result0", or the kernel's "%2"
  ParamRole role = ParamRole::kInput;
  std::string dtype;           // element type as MLIR prints it: f32, bf16, i32
  std::vector<int64_t> shape;  // logical shape (SPMD: each device's local shape)
  uint64_t bytes = 0;          // bytes of the buffer (a scalar: its size)
  Sharding sharding;           // SPMD programs
  bool is_buffer() const { return role != ParamRole::kScalar; }
};

// One buffer of the plan, allocated on every device; or a view: `bytes`
// of value `alias_of` from byte `offset` (a row block of a row-major
// tensor: the chunks an overlapped collective pipeline slices and joins).
struct PlanValue {
  std::string dtype;
  uint64_t bytes = 0;
  int32_t alias_of = -1;  // -1: a buffer of its own (or a param's)
  uint64_t offset = 0;    // views: bytes into alias_of
  // SPMD: a tessera_graph.mesh_position, the device's position in the
  // mesh as one i32; Create writes it into each device's buffer, no step
  // does.
  bool mesh_position = false;
};

// One argument of a launch: a plan value, or a program parameter (scalar).
struct PlanArg {
  enum Kind { kValue, kScalarParam } kind = kValue;
  uint32_t index = 0;
};

struct PlanStep {
  enum Kind { kLaunch, kAllReduce, kBroadcast, kAllGather, kReduceScatter } kind = kLaunch;
  // kLaunch
  uint32_t executable = 0;
  std::string kernel;
  TsDim3 grid{1, 1, 1};
  TsDim3 group_size{1, 1, 1};
  uint64_t shared_memory_bytes = 0;
  std::vector<PlanArg> args;
  // collectives: value `input` -> value `output` over `axes` of the mesh
  uint32_t input = 0, output = 0;
  std::vector<int> axes;
  uint64_t count = 0;
  TsReduceOp reduce = TS_REDUCE_SUM;
  TsDataType dtype = TS_DTYPE_F32;
  uint32_t root = 0;
  std::string location;  // the source location, for messages
  // The stream it is enqueued on: 0 the caller's, 1 the program's
  // communication stream per device (a collective of an overlapped
  // pipeline, docs/spmd.md "Overlap").  Run joins them with events.
  uint32_t stream = 0;
};
inline constexpr uint32_t kPlanStreams = 2;

struct ExecutableImage {
  std::string format;
  std::string data;
  std::vector<KernelSignature> kernels;
};

// A compiled program, independent of any device.
struct ProgramImage {
  std::string plugin;       // whose compiler made it
  std::string target;       // "cpu:znver3", "vulkan", "cuda:sm_90a"
  std::string ir_version;   // of the compiler that made it
  std::string source_name;  // the .mlir it came from
  std::string function;     // the function (or kernel) it runs
  std::vector<std::string> mesh_axes;  // SPMD: the mesh; empty: one device
  std::vector<int64_t> mesh_shape;
  std::vector<ParamSpec> params;
  std::vector<int32_t> param_values;  // per param: its plan value (-1: scalar)
  std::vector<PlanValue> values;
  std::vector<ExecutableImage> executables;
  std::vector<PlanStep> steps;
  // A program placed when it was compiled (ProgramCompileOptions::mesh,
  // in_shardings, out_shardings; its source declares no placement): the
  // shardings given, per argument and result, per dim the mesh axes, so a
  // runner can place its reference copy of the source the same way. The
  // mesh is mesh_axes / mesh_shape. `placed` false: nothing was given.
  bool placed = false;
  std::vector<std::vector<std::vector<std::string>>> placed_in, placed_out;
  // The SHA-256 (hex) of the source text compiled ("" when unknown): a
  // runner parses the source named above for its reference only when it is
  // still these bytes.
  std::string source_sha256;
  // A training step (docs/autodiff.md): after each run, the value of param
  // `result_param` (a result marked {tessera.update = N}) becomes that of
  // param `arg_param` (argument N); when step_ok_param >= 0 (the result
  // marked tessera.step_ok, a tensor<1xi1>) is false, the step is skipped.
  struct StateUpdate {
    uint32_t result_param = 0;
    uint32_t arg_param = 0;
  };
  std::vector<StateUpdate> state_updates;
  int32_t step_ok_param = -1;
  // The program cache's key (docs/program.md, "The program cache") when the
  // image was written there, "" otherwise: a cached file is used only under
  // its own key, so an entry renamed or copied over another is compiled
  // again instead of answering for a different program.
  std::string cache_key;

  uint64_t devices() const;  // product of mesh_shape (1 without a mesh)
  // Serialized (the .tsp file): "TSPROG" + versions + the fields above.
  std::string Serialize() const;
  // Bounded reader: a truncated or foreign file is an error, never a crash.
  static StatusOr<ProgramImage> Deserialize(const std::string& bytes, const std::string& origin);
  static StatusOr<ProgramImage> ReadFile(const std::string& path);
  Status WriteFile(const std::string& path) const;  // atomic (temporary + rename)
};

// The most devices a program's mesh may have (and the most per axis):
// compiling for a larger mesh is an error, and so is loading one.
inline constexpr int64_t kMaxProgramDevices = 4096;

// The version of the program file format (ProgramImage::Serialize).
// 2: a trailing checksum (FNV-1a 64) of every byte before it.
// 3: views among the plan values, a stream per step.
// 4: plan values holding the device's mesh position.
// 5: a list of mesh axes per sharded dim.
// 6: the placement given at compile time.
// 7: the source's SHA-256, the training marks (state updates, step_ok).
// 8: the program cache's key.
inline constexpr uint32_t kProgramFileVersion = 8;

struct RunOptions {
  // A Tile IR kernel program: the grid of its launch, instead of the
  // kernel's own ({0,0,0}: the kernel's).
  TsDim3 grid{0, 0, 0};
};

class Program {
 public:
  Program() = default;

  // Loads `image` on `devices` (one per mesh position; one for a program
  // without a mesh): its executables, the kernels of the plan, intermediate
  // buffers, and for SPMD programs one communicator per group of devices a
  // collective spans.  The devices must belong to the plugin that compiled
  // it.
  static StatusOr<Program> Create(const std::vector<Device>& devices, ProgramImage image);
  // Reads a file written by Save() or tessera-compile, then Create().
  static StatusOr<Program> Load(const std::vector<Device>& devices, const std::string& path);
  // SPMD across processes (docs/spmd.md, "Across processes"; an MPI
  // ProcessGroup from tessera/mpi.hpp): every process of `processes` holds
  // as many of the mesh's devices, process p the positions [p * L, (p + 1) *
  // L) for L = local_devices.size(), and calls Create with the same image
  // (collectively: groups that span processes get a communicator of the
  // group's provider, the others the plugin's own).  Run then takes the
  // streams and arguments of the local devices only.
  static StatusOr<Program> Create(const std::vector<Device>& local_devices, ProgramImage image,
                                  std::shared_ptr<ProcessGroup> processes);

  bool valid() const { return impl_ != nullptr; }
  const ProgramImage& image() const;
  const std::vector<ParamSpec>& params() const;
  const std::vector<Device>& devices() const;  // this process's
  // The mesh position of devices()[0]: 0 unless the program spans processes.
  size_t first_device() const;
  Status Save(const std::string& path) const;

  // Enqueues the program once on `stream` (a program on one device): `args`
  // follow params() (buffers of at least ParamSpec::bytes on the stream's
  // device; scalars of the param's size).  Everything is checked before
  // anything is enqueued.
  Status Run(const Stream& stream, const std::vector<KernelArg>& args,
             const RunOptions& options = {}) const;
  // SPMD: one stream per device of the mesh (devices() order), and per
  // device its local arguments.
  Status Run(const std::vector<Stream>& streams,
             const std::vector<std::vector<KernelArg>>& args,
             const RunOptions& options = {}) const;

  // Global <-> local tensors of an SPMD program (host bytes, row-major):
  // the local part of argument `param` for every device, and the global
  // result assembled from every device's local result (partitioned dims
  // placed, partial sums added; copies are taken from the first holder).
  std::vector<std::string> ScatterGlobal(size_t param, const std::string& global) const;
  // `replica_difference` (may be null): the largest difference between a
  // block and its copies on other devices (0 when they agree).
  std::string GatherGlobal(size_t param, const std::vector<std::string>& locals,
                           double* replica_difference = nullptr) const;
  // The global shape of param `param` (its local shape on one device).
  std::vector<int64_t> GlobalShape(size_t param) const;

 private:
  Status RunOn(const Stream* streams, const std::vector<KernelArg>* args, size_t n, const RunOptions& options) const;
  // Step `sidx` (a launch) on device d's stream with that device's
  // arguments; errors name the step.
  Status LaunchStep(size_t sidx, size_t d, const Stream& stream, const std::vector<KernelArg>& args,
                    TsDim3 grid) const;
  // Prefixes a failed launch's status with the step ("launching <kernel>").
  void AnnotateStep(size_t sidx, Status* st) const;
  // A failed launch of Run's single pass-through fast path: RunOn's message
  // when the stream is not usable on the program's device (the launch
  // queued nothing), else the launch's, annotated.
  void DiagnoseFastLaunch(const Stream& stream, const std::vector<KernelArg>& args, const RunOptions& options,
                          Status* st) const;
  // LaunchStep of a step whose kernel takes other arguments than the
  // program's, in another order: its list is built on the stack.
  Status LaunchWithPlanArgs(size_t sidx, size_t d, const Stream& stream, const std::vector<KernelArg>& args,
                            TsDim3 grid) const;
  // The buffer holding value v on device d (an argument's or the
  // program's own) and v's byte offset in it.
  const Buffer& BufferOf(size_t d, uint32_t v, const std::vector<KernelArg>& args, uint64_t* offset) const;
  std::shared_ptr<detail::ProgramImpl> impl_;
};

}  // namespace tessera

#endif  // TESSERA_PROGRAM_HPP_
