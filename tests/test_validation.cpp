// The validation layer (tessera/validation.hpp, docs/runtime.md
// "Validation"): each kind of report on the cpu backend, through the C++
// API and through the raw ABI table, and no report for correct programs.
#include <memory>
#include <mutex>

#include "tessera/validation.hpp"
#include "test_util.hpp"

namespace tessera::testing {
namespace {

// Collects a runtime's reports; outlives it (leaks are reported when the
// runtime goes).
struct Reports {
  std::mutex mu;
  std::vector<ValidationMessage> messages;
  std::vector<ValidationMessage> Of(const std::string& kind) {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<ValidationMessage> out;
    for (const auto& m : messages)
      if (m.kind == kind) out.push_back(m);
    return out;
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu);
    std::string out;
    for (const auto& m : messages) out += m.text + "\n";
    return out;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return messages.size();
  }
};

RuntimeOptions ValidatingOptions(const std::shared_ptr<Reports>& reports) {
  RuntimeOptions options = CpuOptions();
  options.validate = 1;
  options.validation_callback = [reports](const ValidationMessage& m) {
    std::lock_guard<std::mutex> lock(reports->mu);
    reports->messages.push_back(m);
  };
  return options;
}

class ValidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rt = CreateCpuRuntime(1, 0, ValidatingOptions(reports_));
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    runtime_ = std::move(rt).value();
    auto exe = device().load_executable(NativeFormat(device()), TESSERA_TEST_KERNELS_PATH);
    ASSERT_TRUE(exe.ok()) << exe.status().ToString();
    exe_ = std::move(exe).value();
  }
  const Device& device() const { return runtime_.devices().at(0); }
  Kernel K(const std::string& name, std::vector<uint32_t> access = {}) {
    auto k = exe_.kernel(name);
    EXPECT_TRUE(k.ok()) << k.status().ToString();
    if (!access.empty()) k->declare_buffer_access(access);
    return k.ok() ? *k : Kernel();
  }
  Buffer Alloc(uint64_t bytes) {
    auto b = device().allocate(bytes);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : Buffer();
  }
  Stream NewStream(bool non_blocking = false) {
    StreamOptions o;
    o.non_blocking = non_blocking;
    auto s = device().create_stream(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : Stream();
  }
  Event NewEvent() {
    auto e = device().create_event();
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? *e : Event();
  }
  static constexpr uint32_t kN = 256;
  Status Fill(const Stream& s, const Buffer& dst, float v) {
    return s.launch(K("fill", {TS_PARAM_WRITE}), {kN / 32, 1, 1}, {32, 1, 1},
                    {KernelArg::buffer(dst), KernelArg::scalar(v), KernelArg::scalar(kN)});
  }
  // dst = src + v
  Status Add(const Stream& s, const Buffer& dst, const Buffer& src, float v,
             bool declare = true) {
    Kernel k = declare ? K("add", {TS_PARAM_WRITE, TS_PARAM_READ}) : K("add");
    return s.launch(k, {kN / 32, 1, 1}, {32, 1, 1},
                    {KernelArg::buffer(dst), KernelArg::buffer(src), KernelArg::scalar(v),
                     KernelArg::scalar(kN)});
  }

  // The hazard tests make a hazard in the layer's model (no event edge
  // between two streams) without racing for real: Hold() gates a stream's
  // later work, ReleaseAfter() lets it run once the other streams' work has
  // completed, so no two workers touch the buffer at once (ThreadSanitizer
  // runs these tests).  A gate has no buffer argument: the layer sees no
  // access of it.
  void Hold(const Stream& s) {
    ASSERT_TRUE(s.launch(K("gate"), {1, 1, 1}, {1, 1, 1}, gate_.args()).ok());
  }
  void ReleaseAfter(std::initializer_list<const Stream*> done) {
    for (const Stream* s : done) EXPECT_TRUE(s->synchronize().ok());
    gate_.open();
    EXPECT_TRUE(device().synchronize().ok());
    EXPECT_FALSE(gate_.timed_out());
  }

  std::shared_ptr<Reports> reports_ = std::make_shared<Reports>();
  Runtime runtime_;
  Executable exe_;
  testing::HostGate gate_;  // after runtime_: opened before the runtime goes
};

TEST_F(ValidationTest, OrderedStreamsReportNothing) {
  Buffer a = Alloc(kN * 4), b = Alloc(kN * 4), c = Alloc(kN * 4);
  Stream s1 = NewStream(), s2 = NewStream();
  Event e = NewEvent();
  TS_ASSERT_OK(Fill(s1, a, 1.0f));
  TS_ASSERT_OK(e.record(s1));
  TS_ASSERT_OK(s2.wait(e));
  TS_ASSERT_OK(Add(s2, b, a, 1.0f));  // reads a after the event edge
  // The default stream waits for earlier work of blocking streams, and
  // their later work waits for it.
  Stream def = device().default_stream();
  TS_ASSERT_OK(Add(def, c, b, 1.0f));
  TS_ASSERT_OK(Add(s1, a, c, 1.0f));
  // The host synchronizes: later work on any stream is ordered after.
  TS_ASSERT_OK(s1.synchronize());
  TS_ASSERT_OK(Fill(s2, a, 3.0f));
  TS_ASSERT_OK(s2.synchronize());
  // Two streams reading one buffer is no hazard (declared reads).
  TS_ASSERT_OK(Add(s1, b, a, 1.0f));
  TS_ASSERT_OK(Add(s2, c, a, 1.0f));
  TS_ASSERT_OK(device().synchronize());
  std::vector<float> host(kN, 0.0f);
  TS_ASSERT_OK(copy(MemoryRef(a), host.data(), kN * 4));
  TS_ASSERT_OK(device().synchronize());
  EXPECT_EQ(reports_->size(), 0u) << reports_->All();
  EXPECT_EQ(Download<float>(c, 1)[0], 4.0f);
}

TEST_F(ValidationTest, WriteThenReadOnAnotherStreamIsAHazard) {
  Buffer a = Alloc(kN * 4), b = Alloc(kN * 4);
  Stream s1 = NewStream(), s2 = NewStream();
  Hold(s1);
  TS_ASSERT_OK(Fill(s1, a, 1.0f));
  TS_ASSERT_OK(Add(s2, b, a, 1.0f));  // no event edge
  ReleaseAfter({&s2});
  auto hazards = reports_->Of("hazard");
  ASSERT_EQ(hazards.size(), 1u) << reports_->All();
  const std::string& text = hazards[0].text;
  TS_EXPECT_CONTAINS(text, "Kernel_Launch 'add' argument 1");
  TS_EXPECT_CONTAINS(text, "reads");
  TS_EXPECT_CONTAINS(text, "Kernel_Launch 'fill' argument 0");
  TS_EXPECT_CONTAINS(text, "writes");
  TS_EXPECT_CONTAINS(text, "Stream_WaitEvent");
  TS_EXPECT_CONTAINS(text, "bytes [0, 1024)");
}

TEST_F(ValidationTest, WriteAfterReadAndWriteAfterWriteAreHazards) {
  Buffer a = Alloc(kN * 4), b = Alloc(kN * 4);
  Stream s1 = NewStream(), s2 = NewStream(), s3 = NewStream();
  Hold(s1);
  TS_ASSERT_OK(Add(s1, b, a, 1.0f));  // reads a, writes b
  TS_ASSERT_OK(Fill(s2, a, 2.0f));    // writes a: WAR against s1
  TS_ASSERT_OK(Fill(s3, b, 2.0f));    // writes b: WAW against s1
  ReleaseAfter({&s2, &s3});
  EXPECT_EQ(reports_->Of("hazard").size(), 2u) << reports_->All();
}

TEST_F(ValidationTest, UndeclaredKernelsCountAsReadingAndWriting) {
  Buffer a = Alloc(kN * 4), b = Alloc(kN * 4), c = Alloc(kN * 4);
  Stream s1 = NewStream(), s2 = NewStream();
  // Fresh kernel handles of another executable: nothing declared.
  auto exe = device().load_executable(NativeFormat(device()), TESSERA_TEST_KERNELS_PATH);
  ASSERT_TRUE(exe.ok());
  auto add = exe->kernel("add");
  ASSERT_TRUE(add.ok());
  auto launch = [&](const Stream& s, const Buffer& dst, const Buffer& src) {
    return s.launch(*add, {kN / 32, 1, 1}, {32, 1, 1},
                    {KernelArg::buffer(dst), KernelArg::buffer(src), KernelArg::scalar(1.0f),
                     KernelArg::scalar(kN)});
  };
  TS_ASSERT_OK(launch(s1, b, a));
  TS_ASSERT_OK(launch(s2, c, a));  // both "write" a as far as the layer knows
  TS_ASSERT_OK(device().synchronize());
  EXPECT_EQ(reports_->Of("hazard").size(), 1u) << reports_->All();
}

TEST_F(ValidationTest, NonBlockingStreamIsNotOrderedByTheDefaultStream) {
  Buffer a = Alloc(kN * 4), b = Alloc(kN * 4);
  Stream nb = NewStream(/*non_blocking=*/true);
  Stream def = device().default_stream();
  Hold(def);
  TS_ASSERT_OK(Fill(def, a, 1.0f));
  TS_ASSERT_OK(Add(nb, b, a, 1.0f));
  ReleaseAfter({&nb});
  EXPECT_EQ(reports_->Of("hazard").size(), 1u) << reports_->All();
}

TEST_F(ValidationTest, CopiesAreTracked) {
  Buffer a = Alloc(kN * 4), b = Alloc(kN * 4);
  Stream s1 = NewStream(), s2 = NewStream();
  Hold(s1);
  TS_ASSERT_OK(s1.copy_async(MemoryRef(b), MemoryRef(a), kN * 4));  // reads a
  TS_ASSERT_OK(s2.memset_async(a, 0, 0, 16));                      // writes a[0,16)
  ReleaseAfter({&s2});
  auto hazards = reports_->Of("hazard");
  ASSERT_EQ(hazards.size(), 1u) << reports_->All();
  TS_EXPECT_CONTAINS(hazards[0].text, "bytes [0, 16)");
  TS_EXPECT_CONTAINS(hazards[0].text, "Memset");
  TS_EXPECT_CONTAINS(hazards[0].text, "Memcpy");
}

TEST_F(ValidationTest, GraphLaunchesAreTracked) {
  Buffer a = Alloc(kN * 4), b = Alloc(kN * 4);
  Stream s1 = NewStream(), s2 = NewStream();
  TS_ASSERT_OK(s1.begin_capture());
  TS_ASSERT_OK(Fill(s1, a, 5.0f));
  TS_ASSERT_OK_AND_ASSIGN(Graph g, s1.end_capture());
  TS_ASSERT_OK_AND_ASSIGN(GraphExec exec, g.instantiate());
  EXPECT_EQ(reports_->size(), 0u) << "capturing runs nothing: " << reports_->All();
  Hold(s1);
  TS_ASSERT_OK(s1.launch(exec));
  TS_ASSERT_OK(Add(s2, b, a, 1.0f));
  ReleaseAfter({&s2});
  auto hazards = reports_->Of("hazard");
  ASSERT_EQ(hazards.size(), 1u) << reports_->All();
  TS_EXPECT_CONTAINS(hazards[0].text, "GraphExec_Launch (captured Kernel_Launch 'fill'");
}

TEST_F(ValidationTest, WaitingOnANeverRecordedEventIsReported) {
  Stream s = NewStream();
  Event e = NewEvent();
  TS_ASSERT_OK(s.wait(e));
  TS_ASSERT_OK(e.synchronize());
  auto waits = reports_->Of("wait-before-record");
  ASSERT_EQ(waits.size(), 2u) << reports_->All();
  TS_EXPECT_CONTAINS(waits[0].text, "Stream_WaitEvent");
  TS_EXPECT_CONTAINS(waits[0].text, "Event_Create");
  TS_EXPECT_CONTAINS(waits[1].text, "Event_Synchronize");
}

TEST_F(ValidationTest, UseAfterDestroyNamesWhereItWasDestroyed) {
  Buffer a = Alloc(64);
  TS_ASSERT_OK(a.destroy());
  float x[16] = {};
  Status st = copy(MemoryRef(a), x, sizeof x);
  EXPECT_EQ(st.code(), StatusCode::kInvalidHandle);
  TS_EXPECT_CONTAINS(st.message(), "Buffer_Free (call #");
  TS_EXPECT_CONTAINS(st.message(), "tessera::Buffer::destroy");
}

// The raw ABI table goes through the layer too.
class RawValidationTest : public ValidationTest {
 protected:
  const TsPluginApi* api() const { return runtime_.plugin_api(); }
  // Code and message of an error, which is destroyed.
  std::pair<TsErrorCode, std::string> Take(TsError* e) {
    if (!e) return {TsErrorCode(0), ""};
    TsError_GetCode_Args g{};
    g.struct_size = sizeof g;
    g.error = e;
    EXPECT_EQ(api()->Error_GetCode(&g), nullptr);
    TsError_Message_Args m{};
    m.struct_size = sizeof m;
    m.error = e;
    EXPECT_EQ(api()->Error_Message(&m), nullptr);
    std::string text(m.message ? m.message : "");
    TsError_Destroy_Args d{};
    d.struct_size = sizeof d;
    d.error = e;
    api()->Error_Destroy(&d);
    return {g.code, text};
  }
  TsBuffer* RawAlloc(uint64_t size) {
    TsBuffer_Allocate_Args args{};
    args.struct_size = sizeof args;
    args.device = device().raw();
    args.size = size;
    EXPECT_EQ(Take(api()->Buffer_Allocate(&args)).first, TsErrorCode(0));
    return args.buffer;
  }
  TsError* RawFree(TsBuffer* b) {
    TsBuffer_Free_Args args{};
    args.struct_size = sizeof args;
    args.buffer = b;
    return api()->Buffer_Free(&args);
  }
};

TEST_F(RawValidationTest, TheRawTableIsTheLayer) {
  EXPECT_NE(api(), nullptr);
  EXPECT_NE(api()->Buffer_Allocate, nullptr);
  RuntimeOptions plain = CpuOptions();
  plain.validate = 0;
  auto rt = CreateCpuRuntime(1, 0, plain);
  ASSERT_TRUE(rt.ok());
  EXPECT_NE(rt->plugin_api()->Buffer_Allocate, api()->Buffer_Allocate)
      << "off, the plugin's own table is called";
}

TEST_F(RawValidationTest, DoubleFreeIsRefusedNamingBothSites) {
  TsBuffer* b = RawAlloc(256);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(Take(RawFree(b)).first, TsErrorCode(0));
  auto [code, message] = Take(RawFree(b));
  EXPECT_EQ(code, TS_ERROR_INVALID_HANDLE);
  TS_EXPECT_CONTAINS(message, "destroyed by Buffer_Free");
  TS_EXPECT_CONTAINS(message, "created by Buffer_Allocate");
  EXPECT_EQ(reports_->Of("destroyed-handle").size(), 1u) << reports_->All();
}

TEST_F(RawValidationTest, ForeignAndWrongKindHandlesAreRefused) {
  int not_a_buffer = 0;
  auto [code, message] = Take(RawFree(reinterpret_cast<TsBuffer*>(&not_a_buffer)));
  EXPECT_EQ(code, TS_ERROR_INVALID_HANDLE);
  TS_EXPECT_CONTAINS(message, "is not a TsBuffer of this client");
  // A stream passed where a buffer belongs.
  auto [code2, message2] = Take(RawFree(reinterpret_cast<TsBuffer*>(device().default_stream().raw())));
  EXPECT_EQ(code2, TS_ERROR_INVALID_HANDLE);
  TS_EXPECT_CONTAINS(message2, "is a TsStream");
}

TEST_F(RawValidationTest, OutOfBoundsAndPageableCopiesAreRefused) {
  TsBuffer* b = RawAlloc(256);
  std::vector<char> host(512);
  TsMemcpy_Args args{};
  args.struct_size = sizeof args;
  args.dst.buffer = b;
  args.dst.offset = 128;
  args.src.host = host.data();
  args.size = 256;  // 128 + 256 > 256
  auto [code, message] = Take(api()->Memcpy(&args));
  EXPECT_EQ(code, TS_ERROR_OUT_OF_RANGE);
  TS_EXPECT_CONTAINS(message, "runs past the end of buffer");
  args.dst.offset = 0;
  args.stream = device().default_stream().raw();
  auto [code2, message2] = Take(api()->Memcpy(&args));
  EXPECT_EQ(code2, TS_ERROR_FAILED_PRECONDITION);
  TS_EXPECT_CONTAINS(message2, "pageable host memory");
  // Pinned memory is fine.
  TS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime_.pinned_malloc(256));
  args.src.host = pinned;
  EXPECT_EQ(Take(api()->Memcpy(&args)).first, TsErrorCode(0));
  TS_ASSERT_OK(device().synchronize());
  TS_ASSERT_OK(runtime_.pinned_free(pinned));
  EXPECT_EQ(Take(RawFree(b)).first, TsErrorCode(0));
  EXPECT_EQ(reports_->Of("out-of-bounds").size(), 1u);
  EXPECT_EQ(reports_->Of("pageable-memory").size(), 1u);
}

TEST_F(RawValidationTest, LeaksAreListedWhenTheRuntimeGoes) {
  TsBuffer* leaked = RawAlloc(4096);
  ASSERT_NE(leaked, nullptr);
  TS_ASSERT_OK_AND_ASSIGN(void* pinned, runtime_.pinned_malloc(1024));
  (void)pinned;
  exe_ = Executable();
  runtime_ = Runtime();  // the last handle: Client_Destroy
  auto leaks = reports_->Of("leak");
  ASSERT_EQ(leaks.size(), 2u) << reports_->All();
  std::string all = leaks[0].text + leaks[1].text;
  TS_EXPECT_CONTAINS(all, "TsBuffer");
  TS_EXPECT_CONTAINS(all, "(4096 bytes), created by Buffer_Allocate");
  TS_EXPECT_CONTAINS(all, "pinned host memory");
  TS_EXPECT_CONTAINS(all, "Host_Allocate");
}

// A caller may create a second client through the layer's table: ending it
// ends only its own objects (and lists only its own leaks).
TEST_F(RawValidationTest, SecondClientThroughTheLayerIsItsOwn) {
  TsClient_Create_Args create{};
  create.struct_size = sizeof create;
  ASSERT_EQ(Take(api()->Client_Create(&create)).first, TsErrorCode(0));
  TsClient_GetDevices_Args list{};
  list.struct_size = sizeof list;
  list.client = create.client;
  ASSERT_EQ(Take(api()->Client_GetDevices(&list)).first, TsErrorCode(0));
  ASSERT_GE(list.num_devices, 1u);
  TsBuffer_Allocate_Args alloc{};
  alloc.struct_size = sizeof alloc;
  alloc.device = list.devices[0];
  alloc.size = 128;
  ASSERT_EQ(Take(api()->Buffer_Allocate(&alloc)).first, TsErrorCode(0));
  TsClient_Destroy_Args destroy{};
  destroy.struct_size = sizeof destroy;
  destroy.client = create.client;
  ASSERT_EQ(Take(api()->Client_Destroy(&destroy)).first, TsErrorCode(0));
  auto leaks = reports_->Of("leak");
  ASSERT_EQ(leaks.size(), 1u) << reports_->All();
  TS_EXPECT_CONTAINS(leaks[0].text, "(128 bytes)");
  // The runtime's own client is untouched.
  Buffer a = Alloc(kN * 4), b = Alloc(kN * 4);
  Stream s = NewStream();
  TS_ASSERT_OK(Fill(s, a, 2.0f));
  TS_ASSERT_OK(Add(s, b, a, 1.0f));
  TS_ASSERT_OK(s.synchronize());
  EXPECT_EQ(Download<float>(b, 1)[0], 3.0f);
  EXPECT_EQ(reports_->Of("destroyed-handle").size(), 0u) << reports_->All();
  EXPECT_EQ(reports_->Of("foreign-handle").size(), 0u) << reports_->All();
}

TEST(ValidationSwitch, EnvironmentValueIsChecked) {
  ScopedEnv validate("TESSERA_VALIDATE", std::string("maybe"));
  RuntimeOptions options;
  options.backend = "cpu";
  auto rt = Runtime::Create(options);
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().ToString(), "TESSERA_VALIDATE=maybe");
}

TEST(ValidationSwitch, EnvironmentTurnsItOn) {
  ScopedEnv validate("TESSERA_VALIDATE", std::string("1"));
  RuntimeOptions options;
  options.backend = "cpu";
  auto on = Runtime::Create(options);
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  RuntimeOptions off = CpuOptions();
  off.validate = 0;
  auto plain = Runtime::Create(off);
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(on->plugin_api()->Memcpy, plain->plugin_api()->Memcpy);
}

}  // namespace
}  // namespace tessera::testing
