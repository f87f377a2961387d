// Area "validation": the core's validation layer (TESSERA_VALIDATE=1,
// docs/runtime.md "Validation") stacked over the plugin under test.  Each
// misuse the layer knows is made once and must be reported (or refused
// before it reaches the plugin); correctly ordered work must get no report,
// which checks that the plugin's stream, event and default-stream behaviour
// is what the layer models.  Copies and memsets only: no kernels needed.
#include <memory>
#include <mutex>

#include "cts/cts.hpp"
#include "tessera/validation.hpp"

namespace tessera::cts {
namespace {

struct Reports {
  std::mutex mu;
  std::vector<ValidationMessage> all;
  size_t Count(const std::string& kind) {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& m : all) n += m.kind == kind;
    return n;
  }
  std::string Text() {
    std::lock_guard<std::mutex> lock(mu);
    std::string out;
    for (const auto& m : all) out += m.text + "\n";
    return out;
  }
};

class Validation : public ::testing::Test {
 protected:
  void SetUp() override {
    const Config& config = GlobalConfig();
    RuntimeOptions options;
    options.backend = config.backend;
    options.plugin_file = config.plugin_file;
    options.plugin_options = config.plugin_options;
    options.plugin_option_defaults = config.plugin_option_defaults;
    options.validate = 1;
    auto reports = reports_;
    options.validation_callback = [reports](const ValidationMessage& m) {
      std::lock_guard<std::mutex> lock(reports->mu);
      reports->all.push_back(m);
    };
    auto rt = Runtime::Create(options);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    runtime_ = std::move(*rt);
    ASSERT_FALSE(runtime_.devices().empty());
    device_ = runtime_.devices()[0];
  }

  // Code and message of a raw error; destroys it through the same table.
  std::pair<int, std::string> Take(TsError* e) { return TakeRawError(runtime_.plugin_api(), e); }

  std::shared_ptr<Reports> reports_ = std::make_shared<Reports>();
  Runtime runtime_;
  tessera::Device device_;
};

constexpr uint64_t kBytes = 4096;

TEST_F(Validation, OrderedWorkGetsNoReport) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device_.allocate(kBytes));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device_.allocate(kBytes));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s1, device_.create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s2, device_.create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device_.create_event());
  CTS_ASSERT_OK(s1.memset_async(a, 0, 7, kBytes));
  CTS_ASSERT_OK(e.record(s1));
  CTS_ASSERT_OK(s2.wait(e));
  CTS_ASSERT_OK(s2.copy_async(MemoryRef(b), MemoryRef(a), kBytes));
  // The default stream waits for earlier work of blocking streams, and their
  // later work waits for it.
  Stream def = device_.default_stream();
  CTS_ASSERT_OK(def.memset_async(a, 0, 1, kBytes));
  CTS_ASSERT_OK(s1.copy_async(MemoryRef(b), MemoryRef(a), kBytes));
  // Host synchronization orders everything after it.
  CTS_ASSERT_OK(s1.synchronize());
  CTS_ASSERT_OK(s2.memset_async(a, 0, 2, kBytes));
  CTS_ASSERT_OK(device_.synchronize());
  std::vector<uint8_t> host(kBytes);
  CTS_ASSERT_OK(tessera::copy(host.data(), MemoryRef(b), kBytes));
  EXPECT_EQ(host[0], 1);
  EXPECT_TRUE(reports_->all.empty()) << reports_->Text();
}

TEST_F(Validation, StreamHazardIsReported) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device_.allocate(kBytes));
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device_.allocate(kBytes));
  CTS_ASSERT_OK_AND_ASSIGN(Stream s1, device_.create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Stream s2, device_.create_stream());
  CTS_ASSERT_OK(s1.memset_async(a, 0, 7, kBytes));
  CTS_ASSERT_OK(s2.copy_async(MemoryRef(b), MemoryRef(a), kBytes));  // no event edge
  CTS_ASSERT_OK(device_.synchronize());
  EXPECT_EQ(reports_->Count("hazard"), 1u) << reports_->Text();
  const std::string text = reports_->Text();
  EXPECT_NE(text.find("Memset"), std::string::npos) << text;
  EXPECT_NE(text.find("Memcpy"), std::string::npos) << text;
}

TEST_F(Validation, WaitOnNeverRecordedEventIsReported) {
  CTS_ASSERT_OK_AND_ASSIGN(Stream s, device_.create_stream());
  CTS_ASSERT_OK_AND_ASSIGN(Event e, device_.create_event());
  CTS_EXPECT_OK(s.wait(e));
  CTS_EXPECT_OK(e.synchronize());
  EXPECT_EQ(reports_->Count("wait-before-record"), 2u) << reports_->Text();
}

TEST_F(Validation, DestroyedHandlesNeverReachThePlugin) {
  const TsPluginApi* api = runtime_.plugin_api();
  TsBuffer_Allocate_Args alloc{};
  alloc.struct_size = TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE;
  alloc.device = device_.raw();
  alloc.size = kBytes;
  ASSERT_EQ(Take(api->Buffer_Allocate(&alloc)).first, 0);
  TsBuffer_Free_Args free_args{};
  free_args.struct_size = TS_BUFFER_FREE_ARGS_STRUCT_SIZE;
  free_args.buffer = alloc.buffer;
  ASSERT_EQ(Take(api->Buffer_Free(&free_args)).first, 0);
  auto [code, message] = Take(api->Buffer_Free(&free_args));  // a double free
  EXPECT_EQ(code, TS_ERROR_INVALID_HANDLE);
  EXPECT_NE(message.find("destroyed by Buffer_Free"), std::string::npos) << message;

  TsStream_Create_Args create{};
  create.struct_size = TS_STREAM_CREATE_ARGS_STRUCT_SIZE;
  create.device = device_.raw();
  ASSERT_EQ(Take(api->Stream_Create(&create)).first, 0);
  TsStream_Destroy_Args destroy{};
  destroy.struct_size = TS_STREAM_DESTROY_ARGS_STRUCT_SIZE;
  destroy.stream = create.stream;
  ASSERT_EQ(Take(api->Stream_Destroy(&destroy)).first, 0);
  TsStream_Synchronize_Args sync{};
  sync.struct_size = TS_STREAM_SYNCHRONIZE_ARGS_STRUCT_SIZE;
  sync.stream = create.stream;
  EXPECT_EQ(Take(api->Stream_Synchronize(&sync)).first, TS_ERROR_INVALID_HANDLE);
  EXPECT_EQ(reports_->Count("destroyed-handle"), 2u) << reports_->Text();
}

TEST_F(Validation, BadCopiesNeverReachThePlugin) {
  CTS_ASSERT_OK_AND_ASSIGN(Buffer a, device_.allocate(kBytes));
  const TsPluginApi* api = runtime_.plugin_api();
  std::vector<uint8_t> pageable(2 * kBytes);
  TsMemcpy_Args copy{};
  copy.struct_size = TS_MEMCPY_ARGS_STRUCT_SIZE;
  copy.dst.buffer = a.raw();
  copy.dst.offset = kBytes / 2;
  copy.src.host = pageable.data();
  copy.size = kBytes;  // runs past the end
  EXPECT_EQ(Take(api->Memcpy(&copy)).first, TS_ERROR_OUT_OF_RANGE);
  copy.dst.offset = 0;
  copy.stream = device_.default_stream().raw();  // async from pageable memory
  EXPECT_EQ(Take(api->Memcpy(&copy)).first, TS_ERROR_FAILED_PRECONDITION);
  EXPECT_EQ(reports_->Count("out-of-bounds"), 1u) << reports_->Text();
  EXPECT_EQ(reports_->Count("pageable-memory"), 1u) << reports_->Text();
}

TEST_F(Validation, LeaksAreListedWhenTheRuntimeGoes) {
  const TsPluginApi* api = runtime_.plugin_api();
  TsBuffer_Allocate_Args alloc{};
  alloc.struct_size = TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE;
  alloc.device = device_.raw();
  alloc.size = kBytes;
  ASSERT_EQ(Take(api->Buffer_Allocate(&alloc)).first, 0);  // never freed
  device_ = tessera::Device();
  runtime_ = Runtime();  // the last handle: Client_Destroy
  EXPECT_EQ(reports_->Count("leak"), 1u) << reports_->Text();
  EXPECT_NE(reports_->Text().find("created by Buffer_Allocate"), std::string::npos)
      << reports_->Text();
}

}  // namespace
}  // namespace tessera::cts
