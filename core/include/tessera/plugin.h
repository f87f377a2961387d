/*
 * Tessera plugin ABI.  C99, no C++ types, nothing thrown across it.
 *
 * A plugin is a shared library named libtessera_plugin_<name>.so that exports
 * exactly one symbol, TESSERA_PLUGIN_ENTRY_POINT ("tessera_plugin_get_api"),
 * returning a pointer to a static TsPluginApi function table.
 *
 * VERSIONING (read this before changing the file)
 *   The ABI version is MAJOR.MINOR (TESSERA_ABI_VERSION_MAJOR/MINOR).
 *   - MINOR is bumped for additions only: a new entry point appended to the end
 *     of TsPluginApi, a new field appended to the end of an Args or property
 *     struct, a new enum value, a new flag bit.
 *   - MAJOR is bumped for anything else: removing or reordering an entry or a
 *     field, changing a type or the meaning of an existing field.
 *   - Tables and structs are APPEND-ONLY.  Every struct begins with
 *     `size_t struct_size` (set by whoever fills it, to TS_<TYPE>_STRUCT_SIZE
 *     of the header it was compiled against) and `TsExtension* extension_start`.
 *   - The core accepts any plugin of the same MAJOR, older or newer MINOR.
 *     A reader of a struct MUST look at struct_size to know which fields the
 *     writer knew about and MUST NOT reject a struct_size larger than its own
 *     (a newer writer) or smaller (an older writer) as long as it covers the
 *     fields introduced in MINOR 0.  Use TS_FIELD_PRESENT().
 *   - An entry point that is NULL, or that lies past the plugin's
 *     TsPluginApi.struct_size, is "not provided": the core reports
 *     TS_ERROR_UNSUPPORTED to its caller and never calls it.
 *
 * HISTORY
 *   1.0  the first version.
 *   1.1  TsDeviceProperties.max_buffer_arg_bytes, and what kernels may use:
 *        kernel_features_known, shader_types, subgroup_ops, float_atomics,
 *        subgroup_size_min/max, subgroup_size_control, full_subgroups,
 *        host_memory_import (TS_SHADER_TYPE_*, TS_SUBGROUP_OP_*,
 *        TS_FLOAT_ATOMIC_*), concurrent_streams.
 *   1.2  Options and the compiler.  Named, typed options (TsNamedValue):
 *        TsClient_Create_Args.options (what the plugin knows is listed by
 *        TsPlugin_GetInfo_Args.client_options); a plugin given an option it
 *        does not know fails Client_Create with TS_ERROR_INVALID_ARGUMENT
 *        listing the ones it knows.  The compiler part of the table:
 *        Compiler_GetTargets (what the plugin compiles for, no device
 *        needed), Compiler_Compile (Tile IR or Schedule IR as MLIR bytecode
 *        -> an executable or the target's intermediate text, plus the
 *        kernels' signatures), Compilation_Destroy.
 *   1.3  Stream_WriteTimestamp: the time a stream's work so far completed,
 *        written into the caller's memory (what TESSERA_TRACE times stream
 *        operations with: no event object per operation).  Optional.
 *        TsKernel_Launch_Args.completion_ns: the same for a launch, in the
 *        launch's own call (TS_KERNEL_LAUNCH_ARGS_MIN_STRUCT_SIZE is the
 *        1.0 size).
 *   1.4  Communicators whose ranks span processes: Communicator_CreateUniqueId,
 *        TsCommunicator_Create_Args.unique_id / ranks / num_ranks.
 *   1.5  TsDeviceProperties.compile_arch: the architecture Compiler_Compile
 *        takes for the device when the target names none ("sm_90a",
 *        "gfx90a"), so the caller schedules for the device's own arch.
 *   1.6  Device addresses both ways, for other libraries (DLPack), both
 *        optional: Buffer_GetDeviceAddress (the address the vendor's own
 *        API uses for a buffer) and Buffer_Import (a buffer over memory
 *        another library allocated at such an address).
 *
 * STRUCT SIZES
 *   TS_<ARGS>_STRUCT_SIZE is the size in this header's version; a plugin
 *   checks what a caller passes against TS_<ARGS>_MIN_STRUCT_SIZE where one
 *   is defined (the MINOR-0 size of a struct that grew later), else against
 *   TS_<ARGS>_STRUCT_SIZE.
 *
 * ERRORS
 *   Every entry point returns TsError*: NULL means success.  A non-NULL error
 *   is owned by the caller, who reads it with Error_GetCode / Error_Message
 *   and releases it with Error_Destroy.  The message string lives as long as
 *   the error.  Messages name the vendor call that failed, e.g.
 *   "cuMemAlloc(1.0 GiB) failed: CUDA_ERROR_OUT_OF_MEMORY".
 *   Arguments, whatever the entry point: a NULL handle, output or Args struct
 *   is TS_ERROR_INVALID_ARGUMENT; a handle that is not a live object of the
 *   plugin (destroyed, foreign, of another type) TS_ERROR_INVALID_HANDLE;
 *   objects of two clients in one call TS_ERROR_INVALID_ARGUMENT.  The
 *   conformance area "abi" checks every entry point (docs/conformance.md).
 *
 * THREADING
 *   Every entry point may be called from any thread.  Calls on different
 *   objects never need external synchronisation.  Destroying an object while
 *   another thread uses it is undefined (as in CUDA); the C++ API documents
 *   which of its objects are safe to share.
 */
#ifndef TESSERA_PLUGIN_H_
#define TESSERA_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_ABI_VERSION_MAJOR 1
#define TESSERA_ABI_VERSION_MINOR 6

#define TESSERA_PLUGIN_ENTRY_POINT "tessera_plugin_get_api"

#if defined(_WIN32)
#define TESSERA_PLUGIN_EXPORT __declspec(dllexport)
#else
#define TESSERA_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Size of a struct up to and including its last field; pins the layout. */
#define TS_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* Was `field` written by the producer of `s` (by struct_size)? */
#define TS_FIELD_PRESENT(s, type, field) \
  ((s)->struct_size >= TS_STRUCT_SIZE(type, field))

/* Only tail padding may follow the recorded last field: adding a field
 * without moving the traits macro to it fails to compile. */
#define TS_STRUCT_SIZE_CHECK(type, last_field)                          \
  static_assert(sizeof(type) - TS_STRUCT_SIZE(type, last_field) <      \
                    alignof(type),                                      \
                #type ": a field follows the recorded last field; "     \
                "update TS_DEFINE_STRUCT_TRAITS")

#ifdef __cplusplus
#define TS_DEFINE_STRUCT_TRAITS(type, last_field) \
  TS_STRUCT_SIZE_CHECK(type, last_field)
#else
#define TS_DEFINE_STRUCT_TRAITS(type, last_field) \
  typedef char type##_struct_traits_[1]
#endif

/* Extension chain: every Args struct may point at a list of these. */
typedef struct TsExtension {
  size_t struct_size;
  uint32_t type; /* TsExtensionType, vendor-registered ids start at 0x10000 */
  struct TsExtension* next;
} TsExtension;

/* ---------------------------------------------------------------- handles */
typedef struct TsError TsError;
typedef struct TsClient TsClient;
typedef struct TsDevice TsDevice;
typedef struct TsBuffer TsBuffer;
typedef struct TsStream TsStream;
typedef struct TsEvent TsEvent;
typedef struct TsGraph TsGraph;
typedef struct TsGraphExec TsGraphExec;
typedef struct TsExecutable TsExecutable;
typedef struct TsKernel TsKernel;
typedef struct TsCommunicator TsCommunicator;
typedef struct TsCompilation TsCompilation; /* MINOR 2 */

/* ------------------------------------------------------------------ enums */
typedef enum TsErrorCode {
  TS_ERROR_CANCELLED = 1,
  TS_ERROR_UNKNOWN = 2,
  TS_ERROR_INVALID_ARGUMENT = 3,
  TS_ERROR_DEADLINE_EXCEEDED = 4,
  TS_ERROR_NOT_FOUND = 5,
  TS_ERROR_ALREADY_EXISTS = 6,
  TS_ERROR_PERMISSION_DENIED = 7,
  TS_ERROR_RESOURCE_EXHAUSTED = 8, /* out of memory, mlock limit, ... */
  TS_ERROR_FAILED_PRECONDITION = 9, /* misuse: wrong state, pageable async */
  TS_ERROR_ABORTED = 10,
  TS_ERROR_OUT_OF_RANGE = 11,      /* copy past the end of a buffer */
  TS_ERROR_UNIMPLEMENTED = 12,     /* entry exists, body not written */
  TS_ERROR_INTERNAL = 13,
  TS_ERROR_UNAVAILABLE = 14,       /* no driver / no device */
  TS_ERROR_DATA_LOSS = 15,
  TS_ERROR_UNAUTHENTICATED = 16,
  TS_ERROR_UNSUPPORTED = 17,       /* capability missing on this device */
  TS_ERROR_NOT_READY = 18,         /* event/stream query: still running */
  TS_ERROR_INVALID_HANDLE = 19,    /* destroyed or foreign object */
  TS_ERROR_ABI_MISMATCH = 20
} TsErrorCode;

typedef enum TsDeviceType {
  TS_DEVICE_TYPE_CPU = 0,
  TS_DEVICE_TYPE_DISCRETE_GPU = 1,
  TS_DEVICE_TYPE_INTEGRATED_GPU = 2,
  TS_DEVICE_TYPE_VIRTUAL = 3,
  TS_DEVICE_TYPE_SOFTWARE = 4 /* e.g. lavapipe: a GPU API on the CPU */
} TsDeviceType;

typedef enum TsBufferKind {
  TS_BUFFER_DEVICE = 0,      /* device memory, not host-addressable in general */
  TS_BUFFER_HOST_PINNED = 1, /* page-locked host memory the device can reach */
  TS_BUFFER_MANAGED = 2      /* unified memory, migrates on demand */
} TsBufferKind;

/* Bit i set <=> TsBufferKind i supported. */
typedef uint32_t TsBufferKindMask;

typedef enum TsHintResult {
  TS_HINT_IGNORED = 0,  /* nothing happened; results are unaffected */
  TS_HINT_EMULATED = 1, /* the plugin did something equivalent by other means */
  TS_HINT_APPLIED = 2   /* mapped onto the vendor's unified-memory API */
} TsHintResult;

typedef enum TsAdvice {
  TS_ADVICE_PREFERRED_LOCATION = 0,
  TS_ADVICE_READ_MOSTLY = 1,
  TS_ADVICE_ACCESSED_BY = 2,
  TS_ADVICE_UNSET_PREFERRED_LOCATION = 3,
  TS_ADVICE_UNSET_READ_MOSTLY = 4,
  TS_ADVICE_UNSET_ACCESSED_BY = 5
} TsAdvice;

typedef enum TsDataType {
  TS_DTYPE_F32 = 0,
  TS_DTYPE_F64 = 1,
  TS_DTYPE_I32 = 2,
  TS_DTYPE_I64 = 3,
  TS_DTYPE_F16 = 4,
  TS_DTYPE_BF16 = 5,
  TS_DTYPE_I8 = 6,
  TS_DTYPE_U8 = 7
} TsDataType;

typedef enum TsReduceOp {
  TS_REDUCE_SUM = 0,
  TS_REDUCE_PROD = 1,
  TS_REDUCE_MAX = 2,
  TS_REDUCE_MIN = 3
} TsReduceOp;

typedef enum TsCollectiveOp {
  TS_COLLECTIVE_ALL_REDUCE = 0,
  TS_COLLECTIVE_BROADCAST = 1,
  TS_COLLECTIVE_ALL_GATHER = 2,
  TS_COLLECTIVE_REDUCE_SCATTER = 3
} TsCollectiveOp;

/* Capability bit sets (TsDeviceProperties). */
enum {
  TS_ATOMIC_SCOPE_TILE = 1u << 0,   /* within a lane's tile */
  TS_ATOMIC_SCOPE_GROUP = 1u << 1,  /* within a tile group */
  TS_ATOMIC_SCOPE_DEVICE = 1u << 2, /* across groups of one device */
  TS_ATOMIC_SCOPE_MESH = 1u << 3    /* system scope: host and peers */
};
enum {
  TS_COLLECTIVE_CAP_ALL_REDUCE = 1u << TS_COLLECTIVE_ALL_REDUCE,
  TS_COLLECTIVE_CAP_BROADCAST = 1u << TS_COLLECTIVE_BROADCAST,
  TS_COLLECTIVE_CAP_ALL_GATHER = 1u << TS_COLLECTIVE_ALL_GATHER,
  TS_COLLECTIVE_CAP_REDUCE_SCATTER = 1u << TS_COLLECTIVE_REDUCE_SCATTER,
  TS_COLLECTIVE_CAP_DETERMINISTIC = 1u << 16,
  /* MINOR 4: communicators whose ranks span processes
   * (Communicator_CreateUniqueId, TsCommunicator_Create_Args::unique_id) */
  TS_COLLECTIVE_CAP_MULTI_PROCESS = 1u << 17
};

/* What kernels may use (TsDeviceProperties, MINOR 1). */
enum { /* arithmetic on these types in kernels (32-bit ints and floats: always) */
  TS_SHADER_TYPE_INT8 = 1u << 0,
  TS_SHADER_TYPE_INT16 = 1u << 1,
  TS_SHADER_TYPE_INT64 = 1u << 2,
  TS_SHADER_TYPE_FLOAT16 = 1u << 3,
  TS_SHADER_TYPE_FLOAT64 = 1u << 4
};
enum { /* subgroup operations in kernels (Vulkan's VkSubgroupFeatureFlagBits) */
  TS_SUBGROUP_OP_BASIC = 1u << 0,
  TS_SUBGROUP_OP_VOTE = 1u << 1,
  TS_SUBGROUP_OP_ARITHMETIC = 1u << 2,
  TS_SUBGROUP_OP_BALLOT = 1u << 3,
  TS_SUBGROUP_OP_SHUFFLE = 1u << 4,
  TS_SUBGROUP_OP_SHUFFLE_RELATIVE = 1u << 5,
  TS_SUBGROUP_OP_CLUSTERED = 1u << 6,
  TS_SUBGROUP_OP_QUAD = 1u << 7
};
enum { /* 32-bit float atomics the device does natively, on global (buffer)
          or shared memory.  Compilers may emulate the others with
          compare-exchange loops. */
  TS_FLOAT_ATOMIC_ADD_GLOBAL = 1u << 0,
  TS_FLOAT_ATOMIC_ADD_SHARED = 1u << 1,
  TS_FLOAT_ATOMIC_MIN_MAX_GLOBAL = 1u << 2,
  TS_FLOAT_ATOMIC_MIN_MAX_SHARED = 1u << 3
};

typedef enum TsPeerCopyMode {
  TS_PEER_COPY_NONE = 0,        /* peers cannot exchange data at all */
  TS_PEER_COPY_HOST_STAGED = 1, /* through a host bounce buffer */
  TS_PEER_COPY_DIRECT = 2       /* device to device without the host */
} TsPeerCopyMode;

/* Stream creation flags. */
enum { TS_STREAM_NON_BLOCKING = 1u << 0 /* does not sync with default stream */ };
/* Event creation flags. */
enum { TS_EVENT_DISABLE_TIMING = 1u << 0 };

#define TS_NAME_MAX 256

/* ------------------------------------------------------ plain data types */
typedef struct TsAbiVersion {
  uint32_t major;
  uint32_t minor;
} TsAbiVersion;

/* A place in memory: a device buffer + offset, or a host pointer + offset.
 * Exactly one of `buffer` and `host` is non-NULL; `offset` applies to either. */
typedef struct TsMemoryRef {
  TsBuffer* buffer;
  uint64_t offset;
  void* host;
} TsMemoryRef;

typedef enum TsKernelArgKind {
  TS_KERNEL_ARG_BUFFER = 0, /* buffer + offset: the kernel sees a pointer */
  TS_KERNEL_ARG_SCALAR = 1  /* `size` bytes copied from `data` at launch */
} TsKernelArgKind;

typedef struct TsKernelArg {
  TsKernelArgKind kind;
  TsBuffer* buffer;
  uint64_t offset;
  const void* data;
  size_t size;
} TsKernelArg;

typedef struct TsDim3 {
  uint32_t x, y, z;
} TsDim3;

/* ---- MINOR 2: named options.
 * An option is a name and one typed value.  Every reader also accepts the
 * text form of a value (TS_VALUE_STRING "4", "true", "0.5") for an option
 * of another type: that is how environment variables arrive. */
typedef enum TsValueType {
  TS_VALUE_STRING = 0,
  TS_VALUE_INT64 = 1,
  TS_VALUE_FLOAT64 = 2,
  TS_VALUE_BOOL = 3
} TsValueType;

typedef struct TsNamedValue {
  size_t struct_size;
  TsExtension* extension_start;
  const char* name;
  TsValueType type;
  const char* string_value; /* TS_VALUE_STRING: NUL-terminated */
  int64_t int64_value;      /* TS_VALUE_INT64 */
  double float64_value;     /* TS_VALUE_FLOAT64 */
  uint32_t bool_value;      /* TS_VALUE_BOOL: 0 or 1 */
} TsNamedValue;
TS_DEFINE_STRUCT_TRAITS(TsNamedValue, bool_value);
#define TS_NAMED_VALUE_STRUCT_SIZE TS_STRUCT_SIZE(TsNamedValue, bool_value)

/* What a plugin (or one of its compile targets) accepts: static storage. */
typedef struct TsOptionInfo {
  size_t struct_size;
  TsExtension* extension_start;
  const char* name;
  TsValueType type;
  const char* default_value; /* as text; "" when computed (e.g. all cores) */
  const char* description;   /* one line, for tessera-info and errors */
} TsOptionInfo;
TS_DEFINE_STRUCT_TRAITS(TsOptionInfo, description);
#define TS_OPTION_INFO_STRUCT_SIZE TS_STRUCT_SIZE(TsOptionInfo, description)

/* ---- MINOR 2: the compiler.
 * IR levels a compile target takes (TsCompilerTarget.input_levels). */
enum {
  /* Tile IR kernels (functions with tessera_tile.group_size): every
   * compiler takes them. */
  TS_IR_LEVEL_TILE = 1u << 0,
  /* Schedule IR functions on tensors (tessera_schedule.tile groups, the
   * fusion and tiling decisions made): the compiler turns each function
   * into one kernel whose parameters are the function's arguments, then its
   * results (TS_PARAM_WRITE).  Without this bit the caller lowers Graph IR
   * to Tile IR kernels and a launch plan itself. */
  TS_IR_LEVEL_SCHEDULE = 1u << 1
};

/* One compile target, e.g. "cpu", "vulkan", "cuda" (static storage). */
typedef struct TsCompilerTarget {
  size_t struct_size;
  TsExtension* extension_start;
  const char* name;              /* what follows "--target", before ':' */
  /* Architectures accepted after ':' ("sm_80,sm_90a"), comma-separated;
   * "*" accepts any name the plugin's own compiler knows (an LLVM cpu
   * name), "" none. */
  const char* archs;
  const char* default_arch;      /* taken when none is given; "" none */
  const char* executable_format; /* what Executable_Load takes */
  /* Comma-separated intermediate forms Compiler_Compile emits on request
   * (TsCompiler_Compile_Args.emit), e.g. "llvm,asm" or "spirv,spirv-asm". */
  const char* emit_kinds;
  uint32_t input_levels;         /* TS_IR_LEVEL_* */
  /* --tessera-graph-to-schedule options the target is tuned for
   * ("tile-m=128 tile-n=128 ..."); the caller lowers Graph IR with them
   * (then with the user's own, which win).  A token "ARCH:key=value"
   * applies only when compiling for architecture ARCH
   * ("sm_90a:mma=wgmma"), after the tokens before it. */
  const char* schedule;
  const TsOptionInfo* options;   /* compile options it knows */
  size_t num_options;
  /* Identifies the build of the compiler (e.g. its file's size and
   * modification time): caches of compiled programs are keyed on it, so a
   * rebuilt compiler is never answered from an older one's cache.  NULL or
   * "": unknown (caches then key on the version strings alone). */
  const char* build_id;
} TsCompilerTarget;
TS_DEFINE_STRUCT_TRAITS(TsCompilerTarget, build_id);
#define TS_COMPILER_TARGET_STRUCT_SIZE TS_STRUCT_SIZE(TsCompilerTarget, build_id)
/* What the core requires of a target (build_id may be absent). */
#define TS_COMPILER_TARGET_MIN_STRUCT_SIZE TS_STRUCT_SIZE(TsCompilerTarget, num_options)

/* Access of a kernel parameter (TsKernelParam.access).  TS_PARAM_ATOMIC
 * (with WRITE): every access the kernel makes to the buffer is an atomic
 * read-modify-write, so launches on other streams that also only use atomics
 * on it race benignly (the validation layer's hazard detector reports no
 * hazard between them).  Older callers ignore the bit.
 * TS_PARAM_SCRATCH (with READ and WRITE): a buffer of `bytes` the kernel
 * needs for itself (work shared by its groups, e.g. a matmul operand packed
 * once for all of them), after the parameters of the function it was
 * compiled from.  The caller allocates it, zero-filled before the first
 * launch, and passes the same buffer to later launches, never to two
 * launches that may run at the same time; the kernel leaves it as it needs
 * to find it. */
enum {
  TS_PARAM_READ = 1u << 0,
  TS_PARAM_WRITE = 1u << 1,
  TS_PARAM_ATOMIC = 1u << 2,
  TS_PARAM_SCRATCH = 1u << 3
};

/* One parameter of a compiled kernel, in launch order. */
typedef struct TsKernelParam {
  size_t struct_size;
  TsExtension* extension_start;
  TsKernelArgKind kind;
  /* Element type as MLIR prints it ("f32", "bf16", "f8E4M3FN", "i32"); a
   * scalar's own type. */
  const char* dtype;
  uint32_t rank;        /* buffers */
  const int64_t* shape; /* buffers: [rank] static extents, in elements */
  uint64_t bytes;       /* buffers: bytes the kernel spans; scalars: size */
  uint32_t access;      /* TS_PARAM_*: both when not known */
} TsKernelParam;
TS_DEFINE_STRUCT_TRAITS(TsKernelParam, access);
#define TS_KERNEL_PARAM_STRUCT_SIZE TS_STRUCT_SIZE(TsKernelParam, access)

/* One kernel of a compilation. */
typedef struct TsKernelSignature {
  size_t struct_size;
  TsExtension* extension_start;
  const char* name;     /* Executable_GetKernel takes it */
  TsDim3 grid;          /* the kernel's grid; {0,0,0}: the launch decides */
  TsDim3 group_size;    /* lanes per group the kernel was compiled for */
  /* Dynamic shared memory per group a launch must pass (0: the binary
   * declares what it uses). */
  uint64_t shared_memory_bytes;
  const TsKernelParam* params;
  size_t num_params;
} TsKernelSignature;
TS_DEFINE_STRUCT_TRAITS(TsKernelSignature, num_params);
#define TS_KERNEL_SIGNATURE_STRUCT_SIZE TS_STRUCT_SIZE(TsKernelSignature, num_params)

#define TS_MAX_MEMORY_HEAPS 16
#define TS_MAX_MEMORY_TYPES 32

enum {
  TS_MEMORY_DEVICE_LOCAL = 1u << 0,
  TS_MEMORY_HOST_VISIBLE = 1u << 1,
  TS_MEMORY_HOST_COHERENT = 1u << 2,
  TS_MEMORY_HOST_CACHED = 1u << 3
};

typedef struct TsMemoryHeap {
  uint64_t size;  /* bytes */
  uint32_t flags; /* TS_MEMORY_DEVICE_LOCAL or 0 */
} TsMemoryHeap;

typedef struct TsMemoryType {
  uint32_t heap_index;
  uint32_t flags; /* TS_MEMORY_* */
} TsMemoryType;

typedef struct TsDeviceProperties {
  size_t struct_size;
  TsExtension* extension_start;
  char name[TS_NAME_MAX];
  char vendor[TS_NAME_MAX];
  char driver_version[TS_NAME_MAX];
  TsDeviceType type;
  uint32_t ordinal;               /* index within its plugin */
  uint64_t total_memory;          /* bytes of TS_BUFFER_DEVICE memory */
  TsBufferKindMask buffer_kinds;  /* which TsBufferKind are supported */
  uint32_t managed_memory;        /* 1 if TS_BUFFER_MANAGED buffers are
                                     reachable by host and device (migrated
                                     on demand, or shared in place) */
  TsHintResult prefetch_hint;     /* what Buffer_Prefetch will report */
  TsHintResult advise_hint;       /* what Buffer_Advise will report */
  TsPeerCopyMode peer_copy;       /* between devices of this plugin */
  uint32_t graphs;                /* stream capture + graph replay */
  uint32_t collectives;           /* TS_COLLECTIVE_CAP_* bits */
  uint32_t atomic_scopes;         /* TS_ATOMIC_SCOPE_* bits */
  uint32_t subgroup_size;         /* lanes that execute in lock step */
  uint64_t shared_memory_per_group; /* bytes */
  uint32_t max_group_size;        /* lanes per tile group */
  uint32_t compute_units;         /* SMs, CUs, EUs, cores; 0: unknown */
  uint32_t stream_weights;        /* 1 if weights shape scheduling */
  /* comma-separated executable formats Executable_Load accepts,
   * e.g. "elf-x86_64" "ptx,cubin" "spirv" "hsaco" */
  char executable_formats[TS_NAME_MAX];
  /* The vendor API and its version: "Vulkan 1.3.230", "CUDA 12.4", "". */
  char api_version[TS_NAME_MAX];
  /* Bytes of scalar kernel arguments a launch may pass (Vulkan: the
   * push-constant limit); 0: no limit beyond memory. */
  uint32_t max_scalar_arg_bytes;
  /* Memory heaps and types as the vendor reports them (Vulkan's
   * VkPhysicalDeviceMemoryProperties; one heap elsewhere). */
  uint32_t num_memory_heaps;
  TsMemoryHeap memory_heaps[TS_MAX_MEMORY_HEAPS];
  uint32_t num_memory_types;
  TsMemoryType memory_types[TS_MAX_MEMORY_TYPES];
  /* ---- MINOR 1 */
  /* The most bytes one buffer argument of a kernel may span, i.e. its
   * buffer's size minus the argument's offset (Vulkan: maxStorageBufferRange;
   * the whole buffer is bound, the binding cannot be shortened).  0: no
   * limit beyond the buffer.  See Kernel_Launch. */
  uint64_t max_buffer_arg_bytes;
  /* What kernels may use.  kernel_features_known is 1 when the plugin wrote
   * the fields below; a MINOR-0 plugin leaves them 0, which then means
   * "not reported", not "none". */
  uint32_t kernel_features_known;
  uint32_t shader_types;      /* TS_SHADER_TYPE_* bits */
  uint32_t subgroup_ops;      /* TS_SUBGROUP_OP_* bits */
  uint32_t float_atomics;     /* TS_FLOAT_ATOMIC_* bits */
  uint32_t subgroup_size_min; /* lanes; subgroup_size is the default */
  uint32_t subgroup_size_max;
  uint32_t subgroup_size_control; /* 1: a kernel may pick its subgroup size */
  uint32_t full_subgroups;    /* 1: a kernel may require full subgroups */
  /* 1: pinned host memory (Host_Allocate, Host_Register) is used in place
   * by the device (Vulkan: imported with VK_EXT_external_memory_host), so
   * async copies of it are asynchronous; 0: they go through a staging
   * buffer and block. */
  uint32_t host_memory_import;
  /* 1: kernels on different streams can run at the same time (given free
   * compute units); 0: the device runs one at a time (e.g. lavapipe, which
   * executes its single queue's submissions in order).  Valid with
   * kernel_features_known. */
  uint32_t concurrent_streams;
  /* ---- MINOR 5 */
  /* The architecture Compiler_Compile compiles for when it is given this
   * device and a target without one ("cuda" -> "sm_90a" on an H100, "hip"
   * -> "gfx90a" on an MI250): one of the target's archs.  The caller
   * lowers Graph IR with the target schedule's "ARCH:key=value" tokens of
   * this arch.  "": the target's default_arch (a target without archs, or
   * a plugin whose devices all compile alike). */
  char compile_arch[TS_NAME_MAX];
} TsDeviceProperties;
TS_DEFINE_STRUCT_TRAITS(TsDeviceProperties, compile_arch);
#define TS_DEVICE_PROPERTIES_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsDeviceProperties, compile_arch)
/* The MINOR-0 layout: a reader accepts any struct at least this large. */
#define TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsDeviceProperties, memory_types)

/* ============================================================ Args structs
 * Each entry point FOO takes one TsFOO_Args*.  Fields marked "// out" are
 * written by the plugin; all others are read.  */

#define TS_ARGS_HEADER   \
  size_t struct_size;    \
  TsExtension* extension_start

/* ---- errors */
typedef struct TsError_Destroy_Args {
  TS_ARGS_HEADER;
  TsError* error;
} TsError_Destroy_Args;
#define TS_ERROR_DESTROY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsError_Destroy_Args, error)

typedef struct TsError_Message_Args {
  TS_ARGS_HEADER;
  const TsError* error;
  const char* message;   /* out: NUL-terminated, lives as long as `error` */
  size_t message_size;   /* out: strlen(message) */
} TsError_Message_Args;
#define TS_ERROR_MESSAGE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsError_Message_Args, message_size)

typedef struct TsError_GetCode_Args {
  TS_ARGS_HEADER;
  const TsError* error;
  TsErrorCode code; /* out */
} TsError_GetCode_Args;
#define TS_ERROR_GETCODE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsError_GetCode_Args, code)

/* ---- plugin and client */
typedef struct TsPlugin_GetInfo_Args {
  TS_ARGS_HEADER;
  const char* name;           /* out: "cpu", "cuda", ... (static storage) */
  const char* vendor;         /* out: static storage */
  const char* plugin_version; /* out: the plugin's own version, static */
  /* ---- MINOR 2 */
  const TsOptionInfo* client_options; /* out: what Client_Create takes, static */
  size_t num_client_options;          /* out */
} TsPlugin_GetInfo_Args;
#define TS_PLUGIN_GETINFO_ARGS_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsPlugin_GetInfo_Args, num_client_options)
#define TS_PLUGIN_GETINFO_ARGS_MIN_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsPlugin_GetInfo_Args, plugin_version)

/* Opens the vendor driver and enumerates devices.  A plugin whose driver is
 * missing returns TS_ERROR_UNAVAILABLE with the reason ("libcuda.so.1: cannot
 * open shared object file: No such file or directory").
 * options (MINOR 2): the plugin's configuration, each one of
 * Plugin_GetInfo's client_options; an unknown name or a value of the wrong
 * type is TS_ERROR_INVALID_ARGUMENT naming it and listing the known ones.
 * Plugins read no environment variables: the core turns them into options. */
typedef struct TsClient_Create_Args {
  TS_ARGS_HEADER;
  TsClient* client; /* out */
  /* ---- MINOR 2 */
  const TsNamedValue* options;
  size_t num_options;
} TsClient_Create_Args;
#define TS_CLIENT_CREATE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsClient_Create_Args, num_options)
#define TS_CLIENT_CREATE_ARGS_MIN_STRUCT_SIZE TS_STRUCT_SIZE(TsClient_Create_Args, client)

/* Waits for all work, then frees everything the client owns. */
typedef struct TsClient_Destroy_Args {
  TS_ARGS_HEADER;
  TsClient* client;
} TsClient_Destroy_Args;
#define TS_CLIENT_DESTROY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsClient_Destroy_Args, client)

typedef struct TsClient_GetDevices_Args {
  TS_ARGS_HEADER;
  TsClient* client;
  TsDevice* const* devices; /* out: owned by the client */
  size_t num_devices;       /* out */
} TsClient_GetDevices_Args;
#define TS_CLIENT_GETDEVICES_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsClient_GetDevices_Args, num_devices)

/* ---- devices */
typedef struct TsDevice_GetProperties_Args {
  TS_ARGS_HEADER;
  TsDevice* device;
  TsDeviceProperties* properties; /* out: caller sets properties->struct_size */
} TsDevice_GetProperties_Args;
#define TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsDevice_GetProperties_Args, properties)

/* The device's default stream: sequential with respect to every other
 * blocking stream of the device.  Owned by the device; never destroyed. */
typedef struct TsDevice_GetDefaultStream_Args {
  TS_ARGS_HEADER;
  TsDevice* device;
  TsStream* stream; /* out */
} TsDevice_GetDefaultStream_Args;
#define TS_DEVICE_GETDEFAULTSTREAM_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsDevice_GetDefaultStream_Args, stream)

typedef struct TsDevice_Synchronize_Args {
  TS_ARGS_HEADER;
  TsDevice* device;
} TsDevice_Synchronize_Args;
#define TS_DEVICE_SYNCHRONIZE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsDevice_Synchronize_Args, device)

/* ---- buffers and host memory */
typedef struct TsBuffer_Allocate_Args {
  TS_ARGS_HEADER;
  TsDevice* device;
  uint64_t size;      /* bytes, > 0 */
  TsBufferKind kind;
  uint64_t alignment; /* 0: the device's natural alignment */
  TsBuffer* buffer;   /* out */
  void* host_pointer; /* out: non-NULL when the host can address the buffer */
} TsBuffer_Allocate_Args;
#define TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsBuffer_Allocate_Args, host_pointer)

/* MINOR 6.  The address of a buffer's first byte as the device's own API
 * and its kernels use it: a CUdeviceptr (cuda), a hipDeviceptr_t (hip), a
 * Level Zero USM pointer, a cpu buffer's host address.  What another
 * library is given to use the memory in place (DLPack's `data`, a BLAS
 * call).  Stable while the buffer lives; never 0 on success.  A plugin
 * whose memory has no such address (vulkan: a VkBuffer) leaves the entry
 * NULL (UNSUPPORTED). */
typedef struct TsBuffer_GetDeviceAddress_Args {
  TS_ARGS_HEADER;
  TsBuffer* buffer;
  uint64_t address; /* out */
} TsBuffer_GetDeviceAddress_Args;
#define TS_BUFFER_GETDEVICEADDRESS_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsBuffer_GetDeviceAddress_Args, address)

/* MINOR 6.  A buffer over `size` bytes of memory another library
 * allocated, at `address` as Buffer_GetDeviceAddress gives addresses (a
 * CUdeviceptr in the client's context, a hipDeviceptr_t, a USM pointer of
 * the client's context, a host address on cpu); `kind` says what the
 * memory is.  The plugin neither allocates nor frees it: Buffer_Free waits
 * for the device's work and forgets it, and the owner keeps the memory
 * alive until then.  The caller vouches for the range (it is not
 * checked against the owner's allocation).  Optional. */
typedef struct TsBuffer_Import_Args {
  TS_ARGS_HEADER;
  TsDevice* device;
  uint64_t address;   /* not 0 */
  uint64_t size;      /* bytes, > 0 */
  TsBufferKind kind;
  TsBuffer* buffer;   /* out */
  void* host_pointer; /* out: non-NULL when the host can address it */
} TsBuffer_Import_Args;
#define TS_BUFFER_IMPORT_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsBuffer_Import_Args, host_pointer)

/* Waits for the device's pending work, then frees (cudaFree semantics). */
typedef struct TsBuffer_Free_Args {
  TS_ARGS_HEADER;
  TsBuffer* buffer;
} TsBuffer_Free_Args;
#define TS_BUFFER_FREE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsBuffer_Free_Args, buffer)

/* Page-locked host memory usable by every device of the client. */
typedef struct TsHost_Allocate_Args {
  TS_ARGS_HEADER;
  TsClient* client;
  uint64_t size;
  void* pointer; /* out */
} TsHost_Allocate_Args;
#define TS_HOST_ALLOCATE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsHost_Allocate_Args, pointer)

typedef struct TsHost_Free_Args {
  TS_ARGS_HEADER;
  TsClient* client;
  void* pointer;
} TsHost_Free_Args;
#define TS_HOST_FREE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsHost_Free_Args, pointer)

/* Page-locks existing host memory (cudaHostRegister). */
typedef struct TsHost_Register_Args {
  TS_ARGS_HEADER;
  TsClient* client;
  void* pointer;
  uint64_t size;
} TsHost_Register_Args;
#define TS_HOST_REGISTER_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsHost_Register_Args, size)

typedef struct TsHost_Unregister_Args {
  TS_ARGS_HEADER;
  TsClient* client;
  void* pointer;
} TsHost_Unregister_Args;
#define TS_HOST_UNREGISTER_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsHost_Unregister_Args, pointer)

/* ---- copies
 * stream == NULL: synchronous copy, ordered as if on the default stream of
 * the device involved (pageable host memory allowed).  stream != NULL:
 * asynchronous; host memory must be pinned (Host_Allocate/Host_Register).
 * The core checks bounds, sizes and pinning before calling the plugin. */
typedef struct TsMemcpy_Args {
  TS_ARGS_HEADER;
  TsMemoryRef dst;
  TsMemoryRef src;
  uint64_t size;     /* bytes, > 0 */
  TsStream* stream;  /* NULL: synchronous */
  /* out: written only for buffer-to-buffer copies between two devices (how
   * the plugin moved the data); left unchanged for every other copy. */
  TsPeerCopyMode peer_mode;
} TsMemcpy_Args;
#define TS_MEMCPY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsMemcpy_Args, peer_mode)

typedef struct TsMemset_Args {
  TS_ARGS_HEADER;
  TsBuffer* buffer;
  uint64_t offset;
  uint64_t size;
  uint8_t value;
  TsStream* stream; /* NULL: synchronous */
} TsMemset_Args;
#define TS_MEMSET_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsMemset_Args, stream)

/* ---- unified-memory hints */
typedef struct TsBuffer_Prefetch_Args {
  TS_ARGS_HEADER;
  TsBuffer* buffer;
  uint64_t offset;
  uint64_t size;
  TsDevice* target; /* NULL: the host */
  TsStream* stream; /* NULL: the default stream of the buffer's device */
  TsHintResult result; /* out */
} TsBuffer_Prefetch_Args;
#define TS_BUFFER_PREFETCH_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsBuffer_Prefetch_Args, result)

typedef struct TsBuffer_Advise_Args {
  TS_ARGS_HEADER;
  TsBuffer* buffer;
  uint64_t offset;
  uint64_t size;
  TsAdvice advice;
  TsDevice* device; /* NULL: the host */
  TsHintResult result; /* out */
} TsBuffer_Advise_Args;
#define TS_BUFFER_ADVISE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsBuffer_Advise_Args, result)

/* ---- streams */
typedef struct TsStream_Create_Args {
  TS_ARGS_HEADER;
  TsDevice* device;
  int32_t priority; /* larger runs first when both are ready; 0 default */
  uint32_t weight;  /* share of the device under contention; 0 means 1 */
  uint32_t flags;   /* TS_STREAM_* */
  TsStream* stream; /* out */
} TsStream_Create_Args;
#define TS_STREAM_CREATE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsStream_Create_Args, stream)

/* Returns at once; work already queued still runs to completion and the
 * stream's resources are released after it (cudaStreamDestroy semantics).
 * A stream in a capture (its origin or one that joined it) is refused with
 * TS_ERROR_FAILED_PRECONDITION and stays usable: the capture is ended first
 * (the core does that when the last handle of an origin goes). */
typedef struct TsStream_Destroy_Args {
  TS_ARGS_HEADER;
  TsStream* stream;
} TsStream_Destroy_Args;
#define TS_STREAM_DESTROY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsStream_Destroy_Args, stream)

typedef struct TsStream_Synchronize_Args {
  TS_ARGS_HEADER;
  TsStream* stream;
} TsStream_Synchronize_Args;
#define TS_STREAM_SYNCHRONIZE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsStream_Synchronize_Args, stream)

typedef struct TsStream_Query_Args {
  TS_ARGS_HEADER;
  TsStream* stream;
  uint32_t idle; /* out: 1 when all queued work has completed */
} TsStream_Query_Args;
#define TS_STREAM_QUERY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsStream_Query_Args, idle)

/* ---- MINOR 3: completion timestamps.  Optional (NULL: use Event_Record and
 * Event_ElapsedTime).  Once the work enqueued on `stream` before this call
 * has completed, the plugin stores the time it completed into
 * *timestamp_ns: nanoseconds of the host's CLOCK_MONOTONIC (C++
 * std::chrono::steady_clock on Linux), converted from the device's own
 * clock where it has one; never 0; one aligned 64-bit store with release
 * ordering.  No event object and no dependency is added to the stream (as
 * Level Zero's zeCommandListAppendWriteGlobalTimestamp).
 * The caller sets *timestamp_ns to 0 first, keeps it valid until it has
 * been written, and reads it with acquire ordering (0: not yet).  The plugin
 * writes it at the latest before any call that observes that work complete
 * returns: Stream_Synchronize, Device_Synchronize, Stream_Query reporting
 * idle, and Event_Synchronize or Event_Query reporting complete for an
 * event recorded on the stream after this call.  To release the memory
 * before then, synchronize the stream.
 * Errors: NULL stream or timestamp_ns: TS_ERROR_INVALID_ARGUMENT; a stream
 * that is capturing: TS_ERROR_FAILED_PRECONDITION (a graph replayed later
 * has nowhere to write). */
typedef struct TsStream_WriteTimestamp_Args {
  TS_ARGS_HEADER;
  TsStream* stream;
  uint64_t* timestamp_ns; /* out, later: see above */
} TsStream_WriteTimestamp_Args;
#define TS_STREAM_WRITETIMESTAMP_ARGS_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsStream_WriteTimestamp_Args, timestamp_ns)

/* Work queued on `stream` after this call waits for the event's most recent
 * record.  A never-recorded event makes this a no-op.  An event of another
 * device: a plugin that cannot order work across its devices returns
 * TS_ERROR_UNSUPPORTED (synchronize the event from the host instead). */
typedef struct TsStream_WaitEvent_Args {
  TS_ARGS_HEADER;
  TsStream* stream;
  TsEvent* event;
} TsStream_WaitEvent_Args;
#define TS_STREAM_WAITEVENT_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsStream_WaitEvent_Args, event)

/* From now on work issued to `stream` (and to streams that join the capture
 * by waiting on an event recorded in it) is recorded, not run.  The default
 * stream can neither begin nor join a capture (TS_ERROR_FAILED_PRECONDITION). */
typedef struct TsStream_BeginCapture_Args {
  TS_ARGS_HEADER;
  TsStream* stream;
} TsStream_BeginCapture_Args;
#define TS_STREAM_BEGINCAPTURE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsStream_BeginCapture_Args, stream)

/* Every stream that joined and issued work must have been joined back: the
 * origin's work depends on its last work, directly (the origin waits on an
 * event recorded last in it) or through other streams of the capture; else
 * TS_ERROR_FAILED_PRECONDITION, the capture ends and no graph is made.
 * While a stream captures, these are TS_ERROR_FAILED_PRECONDITION on it:
 * Stream_Synchronize, Stream_Query, waiting on an event recorded outside the
 * capture, launching a graph into it, synchronous copies and Stream_Destroy.
 * Waiting on an event whose last record was made in a capture that has
 * ended is TS_ERROR_FAILED_PRECONDITION too. */
typedef struct TsStream_EndCapture_Args {
  TS_ARGS_HEADER;
  TsStream* stream;
  TsGraph* graph; /* out */
} TsStream_EndCapture_Args;
#define TS_STREAM_ENDCAPTURE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsStream_EndCapture_Args, graph)

/* ---- events */
typedef struct TsEvent_Create_Args {
  TS_ARGS_HEADER;
  TsDevice* device;
  uint32_t flags;  /* TS_EVENT_* */
  TsEvent* event;  /* out */
} TsEvent_Create_Args;
#define TS_EVENT_CREATE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsEvent_Create_Args, event)

typedef struct TsEvent_Destroy_Args {
  TS_ARGS_HEADER;
  TsEvent* event;
} TsEvent_Destroy_Args;
#define TS_EVENT_DESTROY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsEvent_Destroy_Args, event)

/* Captures all work queued on `stream` so far; re-recording replaces it. */
typedef struct TsEvent_Record_Args {
  TS_ARGS_HEADER;
  TsEvent* event;
  TsStream* stream;
} TsEvent_Record_Args;
#define TS_EVENT_RECORD_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsEvent_Record_Args, stream)

typedef struct TsEvent_Query_Args {
  TS_ARGS_HEADER;
  TsEvent* event;
  uint32_t complete; /* out: 1 when done, or never recorded */
} TsEvent_Query_Args;
#define TS_EVENT_QUERY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsEvent_Query_Args, complete)

typedef struct TsEvent_Synchronize_Args {
  TS_ARGS_HEADER;
  TsEvent* event;
} TsEvent_Synchronize_Args;
#define TS_EVENT_SYNCHRONIZE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsEvent_Synchronize_Args, event)

/* Milliseconds between two completed timing events of one client (they may
 * be on different devices): negative when `end` completed before `start`
 * (as cuEventElapsedTime gives it), never NaN.  Either never recorded:
 * TS_ERROR_FAILED_PRECONDITION; either still pending: TS_ERROR_NOT_READY;
 * either created with TS_EVENT_DISABLE_TIMING: TS_ERROR_FAILED_PRECONDITION. */
typedef struct TsEvent_ElapsedTime_Args {
  TS_ARGS_HEADER;
  TsEvent* start;
  TsEvent* end;
  double milliseconds; /* out */
} TsEvent_ElapsedTime_Args;
#define TS_EVENT_ELAPSEDTIME_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsEvent_ElapsedTime_Args, milliseconds)

/* ---- graphs */
typedef struct TsGraph_Destroy_Args {
  TS_ARGS_HEADER;
  TsGraph* graph;
} TsGraph_Destroy_Args;
#define TS_GRAPH_DESTROY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsGraph_Destroy_Args, graph)

typedef struct TsGraph_GetInfo_Args {
  TS_ARGS_HEADER;
  TsGraph* graph;
  size_t num_nodes; /* out */
  size_t num_edges; /* out: cross-stream and in-stream dependencies */
} TsGraph_GetInfo_Args;
#define TS_GRAPH_GETINFO_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsGraph_GetInfo_Args, num_edges)

typedef struct TsGraph_Instantiate_Args {
  TS_ARGS_HEADER;
  TsGraph* graph;
  TsGraphExec* exec; /* out: independent of `graph` afterwards */
} TsGraph_Instantiate_Args;
#define TS_GRAPH_INSTANTIATE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsGraph_Instantiate_Args, exec)

typedef struct TsGraphExec_Destroy_Args {
  TS_ARGS_HEADER;
  TsGraphExec* exec;
} TsGraphExec_Destroy_Args;
#define TS_GRAPHEXEC_DESTROY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsGraphExec_Destroy_Args, exec)

/* Runs the whole graph once, ordered after earlier work of `stream`; later
 * work of `stream` waits for all of it. */
typedef struct TsGraphExec_Launch_Args {
  TS_ARGS_HEADER;
  TsGraphExec* exec;
  TsStream* stream;
} TsGraphExec_Launch_Args;
#define TS_GRAPHEXEC_LAUNCH_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsGraphExec_Launch_Args, stream)

/* ---- executables and kernels */
typedef struct TsExecutable_Load_Args {
  TS_ARGS_HEADER;
  TsDevice* device;
  const char* format; /* one of TsDeviceProperties.executable_formats */
  const void* data;   /* the image in memory, or NULL to read `path` */
  size_t size;
  const char* path;
  TsExecutable* executable; /* out */
} TsExecutable_Load_Args;
#define TS_EXECUTABLE_LOAD_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsExecutable_Load_Args, executable)

/* Waits for the device's pending work first, like Buffer_Free. */
typedef struct TsExecutable_Destroy_Args {
  TS_ARGS_HEADER;
  TsExecutable* executable;
} TsExecutable_Destroy_Args;
#define TS_EXECUTABLE_DESTROY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsExecutable_Destroy_Args, executable)

/* The kernel handle is owned by the executable.  Formats that fix the group
 * size or the argument layout in the binary (SPIR-V's LocalSize and
 * descriptor bindings) report them; the others report zeros. */
typedef struct TsExecutable_GetKernel_Args {
  TS_ARGS_HEADER;
  TsExecutable* executable;
  const char* name;
  TsKernel* kernel; /* out */
  TsDim3 required_group_size;   /* out: {0,0,0}: any group size */
  uint32_t num_buffer_args;     /* out: 0 with `args_known` == 0: unknown */
  uint32_t scalar_arg_bytes;    /* out */
  uint32_t static_shared_memory_bytes; /* out: declared in the binary */
  uint32_t args_known;          /* out: 1 when the two counts above are exact */
} TsExecutable_GetKernel_Args;
#define TS_EXECUTABLE_GETKERNEL_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsExecutable_GetKernel_Args, args_known)

/* Runs grid.x*grid.y*grid.z tile groups of group_size lanes each.  Arguments
 * are copied at launch; the arrays may be reused when the call returns.
 * Argument mapping: buffers in argument order become the kernel's buffer
 * parameters (CUDA/HIP: pointer params; Level Zero: zeKernelSetArgumentValue;
 * Vulkan: storage buffers at set 0, bindings 0..n-1); scalars in order become
 * its value parameters (Vulkan: push constants at the offsets the shader
 * declares).  A group size other than a required one is
 * TS_ERROR_INVALID_ARGUMENT.  shared_memory_bytes is dynamic shared memory
 * on top of what the binary declares; formats without dynamic shared memory
 * (SPIR-V) accept only 0 or at most the declared size.
 * shared_memory_bytes over TsDeviceProperties.shared_memory_per_group, a
 * group over max_group_size, or a buffer argument spanning more than
 * max_buffer_arg_bytes (buffer size - offset): TS_ERROR_INVALID_ARGUMENT
 * naming the limit.  A plugin never silently binds less than the argument
 * spans. */
typedef struct TsKernel_Launch_Args {
  TS_ARGS_HEADER;
  TsKernel* kernel;
  TsStream* stream; /* must not be NULL: use the default stream explicitly */
  TsDim3 grid;
  TsDim3 group_size;
  uint64_t shared_memory_bytes; /* per group, dynamic */
  const TsKernelArg* args;
  size_t num_args;
  /* ---- MINOR 3 */
  /* NULL, or where to write the time the launch completed, exactly as
   * Stream_WriteTimestamp called right after it would (the same rules: the
   * caller's memory, 0 until written, host CLOCK_MONOTONIC ns), without a
   * second call: the trace times every launch with it.  A plugin that
   * provides Stream_WriteTimestamp honours it; others ignore it.  Not NULL
   * on a capturing stream: TS_ERROR_FAILED_PRECONDITION. */
  uint64_t* completion_ns;
} TsKernel_Launch_Args;
#define TS_KERNEL_LAUNCH_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsKernel_Launch_Args, completion_ns)
#define TS_KERNEL_LAUNCH_ARGS_MIN_STRUCT_SIZE TS_STRUCT_SIZE(TsKernel_Launch_Args, num_args)

/* ---- collectives
 * A communicator spans `num_devices` devices of one client (one rank each,
 * single process).  A collective call covers every rank at once: arrays are
 * indexed by rank.  Each rank's part is ordered on its own stream.
 *
 * MINOR 4, across processes: with `unique_id` set, the communicator has
 * `num_ranks` ranks spread over every process that calls
 * Communicator_Create with the same id (as ncclCommInitRank), and this
 * process's devices[i] is rank ranks[i] (distinct, < num_ranks).  Every
 * process makes the call, with its own devices; it returns once all ranks
 * have joined, or fails after the plugin's own bound (it never waits for
 * ever).  Collective calls then pass arrays indexed like `devices` (this
 * process's ranks only); counts keep their meaning over all num_ranks ranks
 * (all_gather's recv and reduce_scatter's send hold count * num_ranks, in
 * rank order) and a broadcast's root is a rank of the whole communicator.
 * Only plugins reporting TS_COLLECTIVE_CAP_MULTI_PROCESS accept a
 * unique_id; others answer TS_ERROR_UNSUPPORTED. */
#define TS_UNIQUE_ID_BYTES 128
typedef struct TsCommunicator_Create_Args {
  TS_ARGS_HEADER;
  TsClient* client;
  TsDevice* const* devices;
  size_t num_devices;
  TsCommunicator* communicator; /* out */
  /* ---- MINOR 4 (NULL unique_id: one process; the next two are ignored) */
  const uint8_t* unique_id; /* TS_UNIQUE_ID_BYTES from Communicator_CreateUniqueId */
  const uint32_t* ranks;    /* [num_devices] */
  uint32_t num_ranks;
} TsCommunicator_Create_Args;
#define TS_COMMUNICATOR_CREATE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsCommunicator_Create_Args, num_ranks)
#define TS_COMMUNICATOR_CREATE_ARGS_MIN_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsCommunicator_Create_Args, communicator)

/* MINOR 4.  Optional (NULL where the plugin's communicators cannot span
 * processes).  Makes the id one process hands every other process of a
 * communicator (by MPI_Bcast, a file, ...) before all of them call
 * Communicator_Create with it, as ncclGetUniqueId.  Opaque bytes; an id is
 * meant for one communicator. */
typedef struct TsCommunicator_CreateUniqueId_Args {
  TS_ARGS_HEADER;
  TsClient* client;
  uint8_t unique_id[TS_UNIQUE_ID_BYTES]; /* out */
} TsCommunicator_CreateUniqueId_Args;
#define TS_COMMUNICATOR_CREATEUNIQUEID_ARGS_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsCommunicator_CreateUniqueId_Args, unique_id)

typedef struct TsCommunicator_Destroy_Args {
  TS_ARGS_HEADER;
  TsCommunicator* communicator;
} TsCommunicator_Destroy_Args;
#define TS_COMMUNICATOR_DESTROY_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsCommunicator_Destroy_Args, communicator)

/* Data types a plugin does not support: TS_ERROR_UNSUPPORTED naming the
 * type.  Broadcast reads send[root] only; other ranks' send may be NULL.
 * count: elements per rank in the send buffer (all_reduce, broadcast,
 * all_gather) or per rank in the recv buffer (reduce_scatter).
 * all_gather: recv holds count*num_devices.  reduce_scatter: send holds
 * count*num_devices.  deterministic != 0: fixed association tree, results
 * bitwise identical run to run. */
typedef struct TsCommunicator_Collective_Args {
  TS_ARGS_HEADER;
  TsCommunicator* communicator;
  TsCollectiveOp op;
  TsReduceOp reduce_op;
  TsDataType dtype;
  uint64_t count;
  uint32_t root; /* broadcast */
  uint32_t deterministic;
  TsMemoryRef const* send; /* [num_devices] buffer refs */
  TsMemoryRef const* recv; /* [num_devices] buffer refs */
  TsStream* const* streams; /* [num_devices] */
} TsCommunicator_Collective_Args;
#define TS_COMMUNICATOR_COLLECTIVE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsCommunicator_Collective_Args, streams)

/* ---- the compiler (MINOR 2)
 * A plugin's compiler works without a device: tools compile ahead of time
 * on machines without the vendor's driver.  It may live in a part of the
 * plugin loaded on the first compile, so that creating a client stays
 * cheap. */

/* The targets this plugin compiles for; static storage, no client needed. */
typedef struct TsCompiler_GetTargets_Args {
  TS_ARGS_HEADER;
  const TsCompilerTarget* targets; /* out */
  size_t num_targets;              /* out */
} TsCompiler_GetTargets_Args;
#define TS_COMPILER_GETTARGETS_ARGS_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsCompiler_GetTargets_Args, num_targets)

/* Compiles one module.  `module` is MLIR bytecode of Tessera IR at one of
 * the target's input_levels, written by a producer of `ir_version`; a
 * plugin built for another IR version returns TS_ERROR_ABI_MISMATCH naming
 * both.  Errors carry the MLIR diagnostics with file:line:col
 * (TS_ERROR_INVALID_ARGUMENT for IR the compiler rejects,
 * TS_ERROR_UNSUPPORTED naming an op, its location and the target when it
 * cannot lower it).  With `device` the result may use what that device has
 * (its shared memory, its subgroup size); without, the target's defaults.
 * The outputs live until Compilation_Destroy. */
typedef struct TsCompiler_Compile_Args {
  TS_ARGS_HEADER;
  const char* target;       /* "cpu", "cuda:sm_90a"; no arch: default_arch */
  const char* ir_version;   /* the producer's TESSERA_IR_VERSION */
  const void* module;       /* MLIR bytecode */
  size_t module_size;
  const char* source_name;  /* for messages; may be NULL */
  const TsNamedValue* options; /* compile options of the target */
  size_t num_options;
  /* NULL or "": the executable; else one of the target's emit_kinds */
  const char* emit;
  TsDevice* device;         /* may be NULL */
  TsCompilation* compilation; /* out: owned by the caller */
  const char* format;       /* out: executable format, or the emit kind */
  const void* data;         /* out: the executable or the emitted text */
  size_t size;              /* out: bytes of data */
  const TsKernelSignature* kernels; /* out: every kernel, sorted by name */
  size_t num_kernels;       /* out */
  const char* log;          /* out: warnings, "" when none */
} TsCompiler_Compile_Args;
#define TS_COMPILER_COMPILE_ARGS_STRUCT_SIZE TS_STRUCT_SIZE(TsCompiler_Compile_Args, log)

typedef struct TsCompilation_Destroy_Args {
  TS_ARGS_HEADER;
  TsCompilation* compilation;
} TsCompilation_Destroy_Args;
#define TS_COMPILATION_DESTROY_ARGS_STRUCT_SIZE \
  TS_STRUCT_SIZE(TsCompilation_Destroy_Args, compilation)

/* ============================================================ the table */
#define TS_API_ENTRY(name) TsError* (*name)(Ts##name##_Args* args)

typedef struct TsPluginApi {
  size_t struct_size;
  TsExtension* extension_start;
  TsAbiVersion abi_version;

  TS_API_ENTRY(Error_Destroy);
  TS_API_ENTRY(Error_Message);
  TS_API_ENTRY(Error_GetCode);

  TS_API_ENTRY(Plugin_GetInfo);
  TS_API_ENTRY(Client_Create);
  TS_API_ENTRY(Client_Destroy);
  TS_API_ENTRY(Client_GetDevices);

  TS_API_ENTRY(Device_GetProperties);
  TS_API_ENTRY(Device_GetDefaultStream);
  TS_API_ENTRY(Device_Synchronize);

  TS_API_ENTRY(Buffer_Allocate);
  TS_API_ENTRY(Buffer_Free);
  TS_API_ENTRY(Host_Allocate);
  TS_API_ENTRY(Host_Free);
  TS_API_ENTRY(Host_Register);
  TS_API_ENTRY(Host_Unregister);
  TS_API_ENTRY(Memcpy);
  TS_API_ENTRY(Memset);

  TS_API_ENTRY(Buffer_Prefetch);
  TS_API_ENTRY(Buffer_Advise);

  TS_API_ENTRY(Stream_Create);
  TS_API_ENTRY(Stream_Destroy);
  TS_API_ENTRY(Stream_Synchronize);
  TS_API_ENTRY(Stream_Query);
  TS_API_ENTRY(Stream_WaitEvent);
  TS_API_ENTRY(Stream_BeginCapture);
  TS_API_ENTRY(Stream_EndCapture);

  TS_API_ENTRY(Event_Create);
  TS_API_ENTRY(Event_Destroy);
  TS_API_ENTRY(Event_Record);
  TS_API_ENTRY(Event_Query);
  TS_API_ENTRY(Event_Synchronize);
  TS_API_ENTRY(Event_ElapsedTime);

  TS_API_ENTRY(Graph_Destroy);
  TS_API_ENTRY(Graph_GetInfo);
  TS_API_ENTRY(Graph_Instantiate);
  TS_API_ENTRY(GraphExec_Destroy);
  TS_API_ENTRY(GraphExec_Launch);

  TS_API_ENTRY(Executable_Load);
  TS_API_ENTRY(Executable_Destroy);
  TS_API_ENTRY(Executable_GetKernel);
  TS_API_ENTRY(Kernel_Launch);

  TS_API_ENTRY(Communicator_Create);
  TS_API_ENTRY(Communicator_Destroy);
  TS_API_ENTRY(Communicator_Collective);

  /* ---- MINOR 2 */
  TS_API_ENTRY(Compiler_GetTargets);
  TS_API_ENTRY(Compiler_Compile);
  TS_API_ENTRY(Compilation_Destroy);

  /* ---- MINOR 3 */
  TS_API_ENTRY(Stream_WriteTimestamp);

  /* ---- MINOR 4 */
  TS_API_ENTRY(Communicator_CreateUniqueId);

  /* ---- MINOR 6 */
  TS_API_ENTRY(Buffer_GetDeviceAddress);
  TS_API_ENTRY(Buffer_Import);
} TsPluginApi;
TS_DEFINE_STRUCT_TRAITS(TsPluginApi, Buffer_Import);
#define TS_PLUGIN_API_STRUCT_SIZE TS_STRUCT_SIZE(TsPluginApi, Buffer_Import)

/* Every entry point of TsPluginApi, in table order, as X(Name) per entry:
 * for C and C++ code that handles each entry alike (a layer's forwarding
 * thunks, a plugin's table, tests).  The MINOR-0..2 entries after Error_*
 * are the ones every in-tree plugin implements; later ones are optional. */
#define TS_PLUGIN_API_ERROR_ENTRIES(X) X(Error_Destroy) X(Error_Message) X(Error_GetCode)
#define TS_PLUGIN_API_ENTRIES_1_2(X)                                             \
  X(Plugin_GetInfo) X(Client_Create) X(Client_Destroy) X(Client_GetDevices)    \
  X(Device_GetProperties) X(Device_GetDefaultStream) X(Device_Synchronize)     \
  X(Buffer_Allocate) X(Buffer_Free) X(Host_Allocate) X(Host_Free)              \
  X(Host_Register) X(Host_Unregister) X(Memcpy) X(Memset) X(Buffer_Prefetch)   \
  X(Buffer_Advise) X(Stream_Create) X(Stream_Destroy) X(Stream_Synchronize)    \
  X(Stream_Query) X(Stream_WaitEvent) X(Stream_BeginCapture)                   \
  X(Stream_EndCapture) X(Event_Create) X(Event_Destroy) X(Event_Record)        \
  X(Event_Query) X(Event_Synchronize) X(Event_ElapsedTime) X(Graph_Destroy)    \
  X(Graph_GetInfo) X(Graph_Instantiate) X(GraphExec_Destroy)                   \
  X(GraphExec_Launch) X(Executable_Load) X(Executable_Destroy)                 \
  X(Executable_GetKernel) X(Kernel_Launch) X(Communicator_Create)              \
  X(Communicator_Destroy) X(Communicator_Collective) X(Compiler_GetTargets)    \
  X(Compiler_Compile) X(Compilation_Destroy)
#define TS_PLUGIN_API_ENTRIES_1_3(X) X(Stream_WriteTimestamp)
#define TS_PLUGIN_API_ENTRIES_1_4(X) X(Communicator_CreateUniqueId)
#define TS_PLUGIN_API_ENTRIES_1_6(X) X(Buffer_GetDeviceAddress) X(Buffer_Import)
#define TS_PLUGIN_API_FOR_EACH_ENTRY(X)                                       \
  TS_PLUGIN_API_ERROR_ENTRIES(X) TS_PLUGIN_API_ENTRIES_1_2(X) TS_PLUGIN_API_ENTRIES_1_3(X) \
  TS_PLUGIN_API_ENTRIES_1_4(X) TS_PLUGIN_API_ENTRIES_1_6(X)

/* A table must reach at least the Error_* entry points (the first three of
 * MINOR 0); a shorter one is not a Tessera table. */
#define TS_PLUGIN_API_MIN_STRUCT_SIZE TS_STRUCT_SIZE(TsPluginApi, Error_GetCode)

/* The one exported symbol.  Returns a table with static lifetime, or NULL
 * (the loader reports it as a broken plugin). */
typedef const TsPluginApi* (*TsPluginGetApiFn)(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_H_ */
