// Area "errors": misuse.  Every call with bad arguments returns an error
// with a non-empty message (and the documented code where the ABI or
// docs/memory-model.md names one), never a crash, and the runtime keeps
// working afterwards.  Destroyed handles, size 0, out of range, null and
// host-only pointers, pageable async copies, unknown kernels and formats,
// empty grids, resource limits, graph and collective misuse.
#include <cstring>

#include "cts/cts.hpp"

namespace tessera::cts {
namespace {

class Errors : public CtsTest {
 protected:
  void TearDown() override {
    // After all that, the device still works.
    if (!runtime().valid() || IsSkipped()) return;
    StatusOr<Buffer> b = device().allocate(64);
    ASSERT_TRUE(b.ok()) << "the device is unusable after the misuse: " << b.status().ToString();
    EXPECT_TRUE(tessera::memset(*b, 0, 1, 64).ok());
    EXPECT_TRUE(device().synchronize().ok());
  }
};

TEST_F(Errors, DestroyedBuffer) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(256));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer ok, device().allocate(256));
  Buffer alias = b;
  CTS_ASSERT_OK(b.destroy());
  std::vector<uint8_t> host(256);
  CTS_EXPECT_ERROR(tessera::copy(alias, host.data(), 256), kInvalidHandle);
  CTS_EXPECT_ERROR(tessera::copy(host.data(), alias, 256), kInvalidHandle);
  CTS_EXPECT_ERROR(tessera::copy(ok, alias, 256), kInvalidHandle);
  CTS_EXPECT_ERROR(tessera::memset(alias, 0, 0, 256), kInvalidHandle);
  CTS_EXPECT_ERROR(tessera::advise(alias, TS_ADVICE_READ_MOSTLY, nullptr), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.destroy(), kInvalidHandle);
  EXPECT_EQ(alias.raw(), nullptr);
}

TEST_F(Errors, DestroyedBufferAsKernelArgument) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, kernel("fill_u32"));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(256));
  CTS_ASSERT_OK(b.destroy());
  CTS_EXPECT_ERROR(device().default_stream().launch(
                       k, Dim(1), GroupFor(k, Dim(1)),
                       {KernelArg::buffer(b), KernelArg::scalar(1u), KernelArg::scalar(uint64_t(1))}),
                   kInvalidHandle);
}

TEST_F(Errors, DestroyedStream) {
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  CTS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime().pinned_malloc(64));
  Stream alias = s;
  CTS_ASSERT_OK(s.destroy());
  CTS_EXPECT_ERROR(alias.synchronize(), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.query(), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.record(e), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.wait(e), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.copy_async(b, pinned, 64), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.memset_async(b, 0, 0, 64), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.begin_capture(), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.destroy(), kInvalidHandle);
  CTS_EXPECT_OK(runtime().pinned_free(pinned));
}

TEST_F(Errors, DestroyedEvent) {
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device().create_event());
  CTS_ASSERT_OK_AND_ASSIGN(Event other, device().create_event());
  CTS_ASSERT_OK(s.record(other));
  Event alias = e;
  CTS_ASSERT_OK(e.destroy());
  CTS_EXPECT_ERROR(alias.record(s), kInvalidHandle);
  CTS_EXPECT_ERROR(s.record(alias), kInvalidHandle);
  CTS_EXPECT_ERROR(s.wait(alias), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.query(), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.synchronize(), kInvalidHandle);
  CTS_EXPECT_ERROR(Event::elapsed_ms(alias, other), kInvalidHandle);
  CTS_EXPECT_ERROR(alias.destroy(), kInvalidHandle);
}

TEST_F(Errors, DestroyedExecutableAndKernel) {
  CTS_REQUIRE_KERNELS();
  const KernelModule& m = *ShippedModuleFor(info());
  CTS_ASSERT_OK_AND_ASSIGN(Executable exe,
                           device().load_executable(m.format, KernelModulePath(m, "fill_u32")));
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, exe.kernel("fill_u32"));
  Executable alias = exe;
  CTS_ASSERT_OK(exe.destroy());
  CTS_EXPECT_ERROR(alias.kernel("fill_u32"), kInvalidHandle);
  EXPECT_FALSE(k.valid()) << "a kernel of a destroyed executable is still valid";
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  CTS_EXPECT_ERROR(device().default_stream().launch(
                       k, Dim(1), GroupFor(k, Dim(1)),
                       {KernelArg::buffer(b), KernelArg::scalar(1u), KernelArg::scalar(uint64_t(1))}),
                   kInvalidHandle);
  CTS_EXPECT_ERROR(alias.destroy(), kInvalidHandle);
}

TEST_F(Errors, DestroyedGraphAndExec) {
  CTS_REQUIRE(info().graphs, "graphs");
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  CTS_ASSERT_OK(s.begin_capture());
  CTS_ASSERT_OK(s.memset_async(b, 0, 1, 64));
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  CTS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  Graph galias = g;
  GraphExec ealias = exec;
  CTS_ASSERT_OK(g.destroy());
  CTS_ASSERT_OK(exec.destroy());
  CTS_EXPECT_ERROR(galias.instantiate(), kInvalidHandle);
  CTS_EXPECT_ERROR(s.launch(ealias), kInvalidHandle);
  CTS_EXPECT_ERROR(galias.destroy(), kInvalidHandle);
  CTS_EXPECT_ERROR(ealias.destroy(), kInvalidHandle);
}

TEST_F(Errors, SizeZero) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  std::vector<uint8_t> host(64);
  CTS_EXPECT_ERROR(device().allocate(0), kInvalidArgument);
  CTS_EXPECT_ERROR(tessera::copy(b, host.data(), 0), kInvalidArgument);
  CTS_EXPECT_ERROR(tessera::copy(host.data(), b, 0), kInvalidArgument);
  CTS_EXPECT_ERROR(tessera::memset(b, 0, 0, 0), kInvalidArgument);
  CTS_EXPECT_ERROR(s.memset_async(b, 0, 0, 0), kInvalidArgument);
  CTS_EXPECT_ERROR(runtime().pinned_malloc(0), kInvalidArgument);
}

TEST_F(Errors, OutOfRange) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(100));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer c, device().allocate(100));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  std::vector<uint8_t> host(200);
  CTS_EXPECT_ERROR(tessera::copy(b, host.data(), 101), kOutOfRange);
  CTS_EXPECT_ERROR(tessera::copy(MemoryRef(b, 50), host.data(), 51), kOutOfRange);
  CTS_EXPECT_ERROR(tessera::copy(host.data(), MemoryRef(b, 100), 1), kOutOfRange);
  CTS_EXPECT_ERROR(tessera::copy(c, MemoryRef(b, 1), 100), kOutOfRange);
  CTS_EXPECT_ERROR(tessera::copy(MemoryRef(b, UINT64_MAX), host.data(), 2), kOutOfRange);
  CTS_EXPECT_ERROR(tessera::memset(b, 99, 0, 2), kOutOfRange);
  CTS_EXPECT_ERROR(s.memset_async(b, 1000, 0, 1), kOutOfRange);
  CTS_EXPECT_ERROR(tessera::advise(b, TS_ADVICE_READ_MOSTLY, nullptr, 90, 20), kOutOfRange);
}

TEST_F(Errors, OutOfRangeKernelArgument) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, kernel("fill_u32"));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  CTS_EXPECT_ERROR(device().default_stream().launch(
                       k, Dim(1), GroupFor(k, Dim(1)),
                       {KernelArg::buffer(b, 64), KernelArg::scalar(1u), KernelArg::scalar(uint64_t(1))}),
                   kOutOfRange);
}

TEST_F(Errors, BadPointersAndDirections) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  std::vector<uint8_t> h1(64), h2(64);
  CTS_EXPECT_ERROR(tessera::copy(b, static_cast<const void*>(nullptr), 64), kInvalidArgument);
  CTS_EXPECT_ERROR(tessera::copy(static_cast<void*>(nullptr), b, 64), kInvalidArgument);
  CTS_EXPECT_ERROR(tessera::copy(h1.data(), h2.data(), 64), kInvalidArgument);
  CTS_EXPECT_ERROR(tessera::copy(MemoryRef(b, 0), MemoryRef(b, 8), 16), kInvalidArgument);
}

TEST_F(Errors, PageableAsyncCopy) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  std::vector<uint8_t> pageable(64);
  CTS_EXPECT_ERROR(s.copy_async(b, pageable.data(), 64), kFailedPrecondition);
  CTS_EXPECT_ERROR(s.copy_async(pageable.data(), b, 64), kFailedPrecondition);
  CTS_EXPECT_ERROR(device().default_stream().copy_async(b, pageable.data(), 64),
                   kFailedPrecondition);
}

TEST_F(Errors, AsyncCopyOnAStreamOfAnotherDevice) {
  CTS_REQUIRE(devices().size() >= 2, "devices>=2 (for cpu: TESSERA_CPU_DEVICES)");
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, devices()[0].allocate(64));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s1, devices()[1].create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime().pinned_malloc(64));
  CTS_EXPECT_ERROR(s1.copy_async(b, pinned, 64), kInvalidArgument);
  CTS_EXPECT_ERROR(s1.memset_async(b, 0, 0, 64), kInvalidArgument);
  CTS_EXPECT_OK(runtime().pinned_free(pinned));
}

TEST_F(Errors, UnknownKernelAndFormat) {
  CTS_REQUIRE_KERNELS();
  CTS_EXPECT_ERROR(kernel("no_such_kernel"), kNotFound);
  CTS_EXPECT_SOME_ERROR(kernel(""));
  CTS_EXPECT_ERROR(device().load_executable("no-such-format", "/dev/null"), kUnsupported);
  const KernelModule& m = *ShippedModuleFor(info());
  CTS_EXPECT_SOME_ERROR(device().load_executable(m.format, "/nonexistent/kernels.so"));
  const char garbage[] = "this is not an executable image";
  CTS_EXPECT_SOME_ERROR(device().load_executable(m.format, garbage, sizeof(garbage)));
  CTS_EXPECT_ERROR(device().load_executable(m.format, std::string()), kInvalidArgument);
}

TEST_F(Errors, BadLaunchGeometry) {
  CTS_REQUIRE_KERNELS();
  CTS_ASSERT_OK_AND_ASSIGN(Kernel k, kernel("fill_u32"));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  std::vector<KernelArg> args = {KernelArg::buffer(b), KernelArg::scalar(1u),
                                 KernelArg::scalar(uint64_t(16))};
  Stream s = device().default_stream();
  const TsDim3 g = GroupFor(k, Dim(1));
  CTS_EXPECT_ERROR(s.launch(k, Dim(0), g, args), kInvalidArgument);
  CTS_EXPECT_ERROR(s.launch(k, Dim(1, 0), g, args), kInvalidArgument);
  CTS_EXPECT_ERROR(s.launch(k, Dim(1), Dim(0), args), kInvalidArgument);
  // Beyond the device's limits: an error, whatever its code.
  CTS_EXPECT_SOME_ERROR(s.launch(k, Dim(1), Dim(info().max_group_size + 1), args));
  CTS_EXPECT_SOME_ERROR(s.launch(k, Dim(1), g, args, info().shared_memory_per_group + 1));
  CTS_EXPECT_OK(s.synchronize());
}

TEST_F(Errors, BadEnumValues) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  CTS_EXPECT_ERROR(device().allocate(64, static_cast<TsBufferKind>(7)), kInvalidArgument);
  CTS_EXPECT_ERROR(tessera::advise(b, static_cast<TsAdvice>(42), nullptr), kInvalidArgument);
}

// Struct sizes from the caller, at the ABI itself (the C++ API always
// passes the current ones): a TsDeviceProperties of ABI 1.0's size is
// accepted and nothing is written past it; one smaller than that, or an Args
// struct of size 0, is INVALID_ARGUMENT, never a write out of bounds.
TEST_F(Errors, CallerStructSizesAreChecked) {
  const TsPluginApi* api = runtime().plugin_api();
  ASSERT_NE(api, nullptr);
  auto code_of = [&](TsError* e) { return static_cast<TsErrorCode>(TakeRawError(api, e).first); };
  struct {
    TsDeviceProperties props;
    unsigned char canary[64];
  } block;
  std::memset(&block, 0xA5, sizeof block);
  block.props.struct_size = TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE;
  block.props.extension_start = nullptr;
  TsDevice_GetProperties_Args args{};
  args.struct_size = TS_DEVICE_GETPROPERTIES_ARGS_STRUCT_SIZE;
  args.device = device().raw();
  args.properties = &block.props;
  TsError* e = api->Device_GetProperties(&args);
  EXPECT_EQ(e, nullptr) << "a TsDeviceProperties of ABI 1.0's size must be accepted";
  if (e) code_of(e);
  const unsigned char* tail = reinterpret_cast<const unsigned char*>(&block.props) + TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE;
  const unsigned char* end = reinterpret_cast<const unsigned char*>(&block) + sizeof block;
  for (const unsigned char* p = tail; p < end; ++p)
    ASSERT_EQ(*p, 0xA5) << "the plugin wrote " << (p - tail) << " bytes past the caller's struct_size";

  block.props.struct_size = TS_DEVICE_PROPERTIES_MIN_STRUCT_SIZE - 1;
  e = api->Device_GetProperties(&args);
  ASSERT_NE(e, nullptr) << "a TsDeviceProperties smaller than ABI 1.0's must be refused";
  EXPECT_EQ(code_of(e), TS_ERROR_INVALID_ARGUMENT);

  block.props.struct_size = TS_DEVICE_PROPERTIES_STRUCT_SIZE;
  args.struct_size = 0;
  e = api->Device_GetProperties(&args);
  ASSERT_NE(e, nullptr) << "an Args struct of size 0 must be refused";
  EXPECT_EQ(code_of(e), TS_ERROR_INVALID_ARGUMENT);
}

TEST_F(Errors, DefaultStreamCannotBeDestroyed) {
  Stream def = device().default_stream();
  CTS_EXPECT_ERROR(def.destroy(), kFailedPrecondition);
  CTS_EXPECT_OK(def.synchronize());
}

TEST_F(Errors, CaptureMisuse) {
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  if (!info().graphs) {
    // Without the capability, capture is UNSUPPORTED, with a message.
    CTS_EXPECT_ERROR(s.begin_capture(), kUnsupported);
    return;
  }
  CTS_EXPECT_ERROR(s.end_capture(), kFailedPrecondition);  // never began
  CTS_ASSERT_OK(s.begin_capture());
  CTS_EXPECT_SOME_ERROR(s.begin_capture());  // already capturing
  CTS_EXPECT_SOME_ERROR(s.synchronize());    // cannot wait on recorded work
  CTS_ASSERT_OK_AND_ASSIGN(Graph g, s.end_capture());
  CTS_EXPECT_OK(s.synchronize());
}

TEST_F(Errors, ElapsedTimeWithoutTiming) {
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event a, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK_AND_ASSIGN(Event b, device().create_event(TS_EVENT_DISABLE_TIMING));
  CTS_ASSERT_OK(s.record(a));
  CTS_ASSERT_OK(s.record(b));
  CTS_ASSERT_OK(s.synchronize());
  CTS_EXPECT_SOME_ERROR(Event::elapsed_ms(a, b));
}

TEST_F(Errors, HostMemoryMisuse) {
  std::vector<uint8_t> host(4096);
  CTS_EXPECT_SOME_ERROR(runtime().unregister_host(host.data()));  // never registered
  CTS_EXPECT_SOME_ERROR(runtime().pinned_free(host.data()));      // not from pinned_malloc
  CTS_EXPECT_SOME_ERROR(runtime().register_host(nullptr, 64));
  CTS_EXPECT_SOME_ERROR(runtime().register_host(host.data(), 0));
  CTS_ASSERT_OK(runtime().register_host(host.data(), host.size()));
  CTS_EXPECT_SOME_ERROR(runtime().register_host(host.data(), host.size()));  // twice
  CTS_EXPECT_OK(runtime().unregister_host(host.data()));
}

TEST_F(Errors, CollectiveMisuse) {
  CTS_REQUIRE(info().collectives & TS_COLLECTIVE_CAP_ALL_REDUCE, "collectives.all_reduce");
  CTS_EXPECT_SOME_ERROR(runtime().create_communicator({}));
  CTS_ASSERT_OK_AND_ASSIGN(Communicator comm, runtime().create_communicator({device()}));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(64));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device().create_stream());
  // Array sizes that do not match the ranks.
  CTS_EXPECT_SOME_ERROR(comm.all_reduce({}, {}, 16, TS_DTYPE_F32, TS_REDUCE_SUM, {}));
  CTS_EXPECT_SOME_ERROR(comm.all_reduce({b, b}, {b}, 16, TS_DTYPE_F32, TS_REDUCE_SUM, {s}));
  // More elements than the buffers hold.
  CTS_EXPECT_SOME_ERROR(comm.all_reduce({b}, {b}, 1000, TS_DTYPE_F32, TS_REDUCE_SUM, {s}));
  CTS_EXPECT_SOME_ERROR(comm.broadcast({b}, {b}, 4, TS_DTYPE_F32, /*root=*/5, {s}));
  Communicator alias = comm;
  CTS_ASSERT_OK(comm.destroy());
  CTS_EXPECT_ERROR(alias.all_reduce({b}, {b}, 4, TS_DTYPE_F32, TS_REDUCE_SUM, {s}),
                   kInvalidHandle);
  CTS_EXPECT_OK(s.synchronize());
}

TEST_F(Errors, UnknownBackendNamesTheKnownOnes) {
  RuntimeOptions options;
  options.backend = "no_such_backend";
  options.read_environment = false;
  StatusOr<Runtime> rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  EXPECT_FALSE(rt.status().message().empty());
  EXPECT_NE(rt.status().message().find("no_such_backend"), std::string::npos)
      << rt.status().message();
}

}  // namespace
}  // namespace tessera::cts
