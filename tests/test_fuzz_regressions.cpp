// What fuzz/plugin_fuzzer.cpp found in the core's checks of a plugin's table
// and answers (docs/fuzzing.md), each as a plain test: the plugin is an
// embedded one (RegisterStaticPlugin) registered by the test itself, so the
// core checks run in this process, with no probe child in between.
//   - a table whose struct_size ends inside an entry point: the core copied
//     half a pointer and called it;
//   - an error code, an option type or a device property outside its enum:
//     loaded as the enum type (undefined behaviour), now read as bytes and
//     checked.
// And what fuzz/cache_fuzzer.cpp found in the program file reader: a
// step's reduction outside TsReduceOp was loaded as the enum.
// (The fuzz regression inputs are in fuzz/regressions/<harness>.)
#include <cstddef>
#include <cstring>
#include <limits>
#include <functional>
#include <string>

#include "test_util.hpp"
#include "tessera/ir_version.h"
#include "tessera/plugin.h"
#include "plugins/required_table.hpp"
#include "tessera/program.hpp"
#include "tessera/element_types.hpp"

struct TsError {
  uint32_t code;
  const char* message;
};
struct TsClient {
  int unused;
};
struct TsDevice {
  int unused;
};

namespace tessera {
namespace {

// What the plugin of the current test does wrong.
enum class Fault { kNone, kErrorCode, kOptionType, kDeviceType, kPeerCopy };
Fault g_fault = Fault::kNone;

TsClient g_client;
TsDevice g_device;
TsDevice* g_devices[1] = {&g_device};
TsError g_error;
TsOptionInfo g_option;

template <typename E>
void RawEnum(E* field, uint32_t value) {
  static_assert(sizeof(E) == sizeof(value));
  std::memcpy(field, &value, sizeof value);
}

TsError* ErrorDestroy(TsError_Destroy_Args*) { return nullptr; }
TsError* ErrorMessage(TsError_Message_Args* args) {
  args->message = args->error->message;
  args->message_size = std::strlen(args->message);
  return nullptr;
}
TsError* ErrorGetCode(TsError_GetCode_Args* args) {
  RawEnum(&args->code, args->error->code);
  return nullptr;
}
TsError* PluginGetInfo(TsPlugin_GetInfo_Args* args) {
  args->name = "fuzzreg";
  args->vendor = "Tessera test suite";
  args->plugin_version = "0";
  if (g_fault == Fault::kOptionType) {
    g_option = TsOptionInfo{};
    g_option.struct_size = sizeof(g_option);
    g_option.name = "level";
    RawEnum(&g_option.type, 0xd2d2d2d2u);
    g_option.default_value = "1";
    g_option.description = "an option of no known type";
    args->client_options = &g_option;
    args->num_client_options = 1;
  }
  return nullptr;
}
TsError* ClientCreate(TsClient_Create_Args* args) {
  if (g_fault == Fault::kErrorCode) {
    g_error = TsError{0x75f5f5f5u, "an error whose code is no TsErrorCode"};
    return &g_error;
  }
  args->client = &g_client;
  return nullptr;
}
TsError* ClientDestroy(TsClient_Destroy_Args*) { return nullptr; }
TsError* ClientGetDevices(TsClient_GetDevices_Args* args) {
  args->devices = g_devices;
  args->num_devices = 1;
  return nullptr;
}
TsError* DeviceGetProperties(TsDevice_GetProperties_Args* args) {
  TsDeviceProperties* p = args->properties;
  std::strcpy(p->name, "fuzz regression device");
  p->type = TS_DEVICE_TYPE_CPU;
  p->buffer_kinds = 1u << TS_BUFFER_DEVICE;
  if (g_fault == Fault::kDeviceType) RawEnum(&p->type, 1979053557u);
  if (g_fault == Fault::kPeerCopy) RawEnum(&p->peer_copy, 0xffffffffu);
  return nullptr;
}

TsPluginApi MakeTable() {
  TsPluginApi api = tessera_test::RequiredTable({ErrorDestroy, ErrorMessage, ErrorGetCode, PluginGetInfo, ClientCreate,
                                                  ClientDestroy, ClientGetDevices, DeviceGetProperties});
  return api;
}
TsPluginApi g_table = MakeTable();
const TsPluginApi* GetApi() { return &g_table; }

StatusOr<Runtime> CreateWith(Fault fault, size_t struct_size = TS_PLUGIN_API_STRUCT_SIZE) {
  g_fault = fault;
  g_table = MakeTable();
  g_table.struct_size = struct_size;
  RegisterStaticPlugin("fuzzreg", &GetApi);
  RuntimeOptions options;
  options.read_environment = false;
  options.backend = "fuzzreg";
  options.validate = 0;
  return Runtime::Create(options);
}

TEST(FuzzRegressions, PluginWorksWithoutFault) {
  auto rt = CreateWith(Fault::kNone);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  EXPECT_EQ(rt->devices().size(), 1u);
}

// A struct_size 4 bytes into Device_GetProperties: that entry is cut, so it
// is missing (a required one), never half a pointer called.
TEST(FuzzRegressions, TableEndingInsideAnEntryPoint) {
  auto rt = CreateWith(Fault::kNone, offsetof(TsPluginApi, Device_GetProperties) + 4);
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "lacks the required entry point Device_GetProperties");
  // Cut inside an optional entry: the plugin loads without it.
  rt = CreateWith(Fault::kNone, offsetof(TsPluginApi, Buffer_Allocate) + 5);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  auto buffer = rt->devices()[0].allocate(64);
  EXPECT_EQ(buffer.status().code(), StatusCode::kUnsupported) << buffer.status().ToString();
}

TEST(FuzzRegressions, ErrorCodeOutsideTheEnum) {
  auto rt = CreateWith(Fault::kErrorCode);
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(),
                     "Client_Create returned an error object whose code is 1979053557, not an error "
                     "code (the plugin is broken)");
  TS_EXPECT_CONTAINS(rt.status().message(), "an error whose code is no TsErrorCode");
}

TEST(FuzzRegressions, OptionTypeOutsideTheEnum) {
  auto rt = CreateWith(Fault::kOptionType);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  for (const PluginCandidate& c : rt->candidates()) {
    if (c.name != "fuzzreg") continue;
    ASSERT_EQ(c.options.size(), 1u);
    EXPECT_EQ(c.options[0].type, TS_VALUE_STRING);  // unknown types read as text
  }
}

TEST(FuzzRegressions, DevicePropertiesOutsideTheirEnums) {
  auto rt = CreateWith(Fault::kDeviceType);
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "Device_GetProperties returned the device type 1979053557");
  rt = CreateWith(Fault::kPeerCopy);
  ASSERT_FALSE(rt.ok());
  TS_EXPECT_CONTAINS(rt.status().message(), "Device_GetProperties returned the peer copy mode 4294967295");
}

// A collective step whose reduction (or data type) is no enum value: the
// file is DATA_LOSS, never an enum loaded out of range.
TEST(FuzzRegressions, ProgramStepEnumsOutOfRange) {
  ProgramImage image;
  image.plugin = "cpu";
  image.target = "cpu";
  image.ir_version = TESSERA_IR_VERSION;
  PlanStep step;
  step.kind = PlanStep::kAllReduce;
  step.reduce = TS_REDUCE_MIN;
  step.dtype = TS_DTYPE_U8;
  step.root = 0x5eed1234;  // finds the fields in the bytes
  image.steps.push_back(step);
  const std::string good = image.Serialize();
  ASSERT_TRUE(ProgramImage::Deserialize(good, "good.tsp").ok());
  const uint32_t marker[3] = {TS_REDUCE_MIN, TS_DTYPE_U8, 0x5eed1234};
  const size_t at = good.find(std::string(reinterpret_cast<const char*>(marker), sizeof marker));
  ASSERT_NE(at, std::string::npos);
  for (int field = 0; field < 2; ++field) {
    std::string bad = good;
    const uint32_t value = 64768;
    std::memcpy(bad.data() + at + 4 * field, &value, 4);
    // The checksum trailer (FNV-1a 64 of every byte before it) made right,
    // so that the reader gets as far as the field.
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i + 8 < bad.size(); ++i) h = (h ^ static_cast<unsigned char>(bad[i])) * 0x100000001b3ull;
    std::memcpy(bad.data() + bad.size() - 8, &h, 8);
    auto read = ProgramImage::Deserialize(bad, "bad.tsp");
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().code(), StatusCode::kDataLoss) << read.status().ToString();
    TS_EXPECT_CONTAINS(read.status().message(), field == 0 ? "unknown reduction 64768" : "unknown data type 64768");
  }
}

// Views among the plan values (file version 3) and step streams: a chain
// that loops, leaves the image or ends past its value, a parameter that is a
// view, a launch off the program's stream: all DATA_LOSS at Program::Create
// (before any device is touched), never a read out of bounds at Run.
TEST(FuzzRegressions, ProgramViewsAndStreamsOutOfRange) {
  auto image = [] {
    ProgramImage im;
    im.plugin = "cpu";
    im.target = "cpu";
    im.ir_version = TESSERA_IR_VERSION;
    im.values = {{"f32", 64}, {"f32", 16, 0, 16}, {"f32", 16, 1, 0}};
    return im;
  };
  struct Case {
    std::function<void(ProgramImage&)> edit;
    const char* error;
  } cases[] = {
      {[](ProgramImage& im) { im.values[0].alias_of = 2; }, "is a view of no value (or of itself)"},
      {[](ProgramImage& im) { im.values[1].alias_of = 7; }, "is a view of no value"},
      {[](ProgramImage& im) { im.values[1].offset = 56; }, "past the end of its value"},
      {[](ProgramImage& im) { im.values[2].offset = UINT64_MAX; }, "view"},
      {[](ProgramImage& im) {
         im.params.push_back({"arg0", ParamRole::kInput, "f32", {4}, 16, {}});
         im.param_values.push_back(1);
       },
       "is a parameter and a view"},
      // A value that holds the mesh position is an i32 of its own.
      {[](ProgramImage& im) { im.values[0].mesh_position = true; }, "holds the mesh position"},
      {[](ProgramImage& im) { im.values[1].mesh_position = true; }, "holds the mesh position"},
      {[](ProgramImage& im) {
         im.values.push_back({"i32", 4, -1, 0, true});
         im.params.push_back({"arg0", ParamRole::kInput, "i32", {1}, 4, {}});
         im.param_values.push_back(3);
       },
       "holds the mesh position"},
      {[](ProgramImage& im) {
         PlanStep s;
         s.kind = PlanStep::kAllReduce;
         s.count = 4;
         s.stream = 2;
         im.steps.push_back(s);
       },
       "runs on an unknown stream"},
  };
  {
    ProgramImage ok = image();
    Status st = Program::Create({}, ok).status();
    EXPECT_NE(st.code(), StatusCode::kDataLoss) << "a good image: " << st.ToString();
  }
  for (const Case& c : cases) {
    ProgramImage bad = image();
    c.edit(bad);
    Status st = Program::Create({}, bad).status();
    EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.ToString();
    TS_EXPECT_CONTAINS(st.message(), c.error);
  }
  // The mesh-position flag survives the file.
  {
    ProgramImage positions = image();
    positions.values.push_back({"i32", 4, -1, 0, true});
    std::string bytes = positions.Serialize();
    auto good = ProgramImage::Deserialize(bytes, "position.tsp");
    ASSERT_TRUE(good.ok()) << good.status().ToString();
    EXPECT_TRUE(good->values.back().mesh_position);
    EXPECT_FALSE(good->values.front().mesh_position);
  }
  // A stream the reader does not know never becomes a step.
  ProgramImage streams = image();
  PlanStep s;
  s.kind = PlanStep::kAllReduce;
  s.count = 4;
  s.stream = 9;
  streams.steps.push_back(s);
  auto read = ProgramImage::Deserialize(streams.Serialize(), "streams.tsp");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kDataLoss);
  TS_EXPECT_CONTAINS(read.status().message(), "a step on stream 9");
}


// Shardings in a program image (file version 5: a list of mesh axes per
// dim): a dim over several axes survives the file; an axis out of range,
// used by two dims, by one dim twice, or both splitting and reducing is
// DATA_LOSS at Program::Create, never an out-of-bounds coordinate at Run.
// An empty program image on a 2 x 2 (dp, tp) mesh of cpu devices.
ProgramImage ImageOnMesh() {
  ProgramImage im;
  im.plugin = "cpu";
  im.target = "cpu";
  im.ir_version = TESSERA_IR_VERSION;
  im.mesh_axes = {"dp", "tp"};
  im.mesh_shape = {2, 2};
  return im;
}

TEST(FuzzRegressions, ShardingsOverUnknownOrRepeatedAxes) {
  auto image = [](std::vector<std::vector<int>> dims, std::vector<int> partial) {
    ProgramImage im = ImageOnMesh();
    im.values = {{"f32", 64}};
    ParamSpec p{"arg0", ParamRole::kInput, "f32", {4, 4}, 64, {}};
    p.sharding.dim_axes = std::move(dims);
    p.sharding.partial_sum_axes = std::move(partial);
    im.params.push_back(p);
    im.param_values.push_back(0);
    return im;
  };
  {
    ProgramImage two = image({{0, 1}, {}}, {});
    auto read = ProgramImage::Deserialize(two.Serialize(), "two.tsp");
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->params[0].sharding.dim_axes, (std::vector<std::vector<int>>{{0, 1}, {}}));
    Status st = Program::Create({}, two).status();
    EXPECT_NE(st.code(), StatusCode::kDataLoss) << "a good image: " << st.ToString();
  }
  const std::pair<std::vector<std::vector<int>>, std::vector<int>> bad[] = {
      {{{0, 2}, {}}, {}},  // no axis 2
      {{{-1}, {}}, {}},    // no axis -1
      {{{0}, {0}}, {}},    // dp splits two dims
      {{{1, 1}, {}}, {}},  // tp twice in one dim
      {{{0}, {}}, {0}},    // dp splits and reduces
  };
  for (const auto& [dims, partial] : bad) {
    Status st = Program::Create({}, image(dims, partial)).status();
    EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.ToString();
    TS_EXPECT_CONTAINS(st.message(), "sharding on an unknown or repeated axis");
  }
}

// The placement given at compile time (file version 6) survives the file,
// and an image that lies about it (shardings without the flag, a flag of
// 2) is DATA_LOSS, not a placement invented by the reader.
TEST(FuzzRegressions, PlacementGivenAtCompileTime) {
  ProgramImage im = ImageOnMesh();
  im.placed = true;
  im.placed_in = {{{"dp", "tp"}, {}}, {{}, {"tp"}}};
  im.placed_out = {{{"dp", "tp"}, {}}};
  auto read = ProgramImage::Deserialize(im.Serialize(), "placed.tsp");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->placed);
  EXPECT_EQ(read->placed_in, im.placed_in);
  EXPECT_EQ(read->placed_out, im.placed_out);

  ProgramImage unflagged = im;
  unflagged.placed = false;
  auto lie = ProgramImage::Deserialize(unflagged.Serialize(), "unflagged.tsp");
  ASSERT_FALSE(lie.ok());
  EXPECT_EQ(lie.status().code(), StatusCode::kDataLoss);
  TS_EXPECT_CONTAINS(lie.status().message(), "shardings given at compile time without a placement");

  // The flag is the u32 after the steps' count (0 here) and before the two
  // placement vectors; set it to 2 and fix the checksum up so only the
  // field check can catch it.
  ProgramImage bare = im;
  bare.placed_in.clear();
  bare.placed_out.clear();
  std::string bytes = bare.Serialize();
  // checksum, no cache key, step_ok, no state updates, no source digest,
  // two empty placement counts, the flag
  const size_t flag = bytes.size() - 8 - 8 - 8 - 8 - 8 - 8 - 8 - 4;
  ASSERT_EQ(bytes[flag], 1);
  bytes[flag] = 2;
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64, as the writer
  for (size_t i = 0; i + 8 < bytes.size(); ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 1099511628211ull;
  std::memcpy(&bytes[bytes.size() - 8], &h, 8);
  auto two = ProgramImage::Deserialize(bytes, "flag2.tsp");
  ASSERT_FALSE(two.ok());
  TS_EXPECT_CONTAINS(two.status().message(), "a placement flag of 2");
}

// The training marks (file version 7) travel in the image, so a compiled
// program trains without its source; an update or step_ok mark that names
// no matching param is DATA_LOSS at Program::Create, not a copy between
// buffers of other sizes at Run.
TEST(FuzzRegressions, TrainingMarksInTheImage) {
  auto image = [] {
    ProgramImage im;
    im.plugin = "cpu";
    im.target = "cpu";
    im.ir_version = TESSERA_IR_VERSION;
    im.function = "step";
    im.values = {{"f32", 16}, {"f32", 16}, {"i1", 1}};
    im.params = {{"w", ParamRole::kInput, "f32", {4}, 16, {}},
                 {"w_next", ParamRole::kOutput, "f32", {4}, 16, {}},
                 {"ok", ParamRole::kOutput, "i1", {1}, 1, {}}};
    im.param_values = {0, 1, 2};
    im.state_updates = {{1, 0}};
    im.step_ok_param = 2;
    im.source_sha256 = std::string(64, 'a');
    return im;
  };
  auto read = ProgramImage::Deserialize(image().Serialize(), "train.tsp");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->state_updates.size(), 1u);
  EXPECT_EQ(read->state_updates[0].result_param, 1u);
  EXPECT_EQ(read->state_updates[0].arg_param, 0u);
  EXPECT_EQ(read->step_ok_param, 2);
  EXPECT_EQ(read->source_sha256, std::string(64, 'a'));
  {
    ProgramImage ok = image();
    Status st = Program::Create({}, ok).status();
    EXPECT_NE(st.code(), StatusCode::kDataLoss) << "a good image: " << st.ToString();
  }
  const struct {
    std::function<void(ProgramImage&)> edit;
    const char* says;
  } bad[] = {
      {[](ProgramImage& im) { im.state_updates[0].result_param = 9; }, "a state update of param 0 by param 9"},
      {[](ProgramImage& im) { im.state_updates[0] = {0, 1}; }, "that do not match"},     // input <- output
      {[](ProgramImage& im) { im.state_updates[0] = {2, 0}; }, "that do not match"},     // 1 byte -> 16
      {[](ProgramImage& im) { im.state_updates.push_back({1, 0}); }, "that do not match"},  // twice
      {[](ProgramImage& im) { im.step_ok_param = 0; }, "a step_ok mark on param 0"},
      {[](ProgramImage& im) { im.step_ok_param = 3; }, "a step_ok mark on param 3"},
  };
  for (const auto& c : bad) {
    ProgramImage im = image();
    c.edit(im);
    Status st = Program::Create({}, im).status();
    EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.ToString();
    TS_EXPECT_CONTAINS(st.message(), c.says);
  }
}

// A parameter's bytes are what its shape and element type say, and a
// placement names the mesh's axes: an image that lies (each found by
// crafting .tsp files with a valid checksum) is DATA_LOSS at
// Program::Create, not a crash, a hang or a silent PASS in a runner.
TEST(FuzzRegressions, ParamsThatDisagreeWithTheirShape) {
  auto image = [](const std::string& dtype, std::vector<int64_t> shape, uint64_t bytes) {
    ProgramImage im = ImageOnMesh();
    im.values = {{"f32", 1ull << 40}};
    im.params.push_back({"arg0", ParamRole::kInput, dtype, std::move(shape), bytes, {}});
    im.param_values.push_back(0);
    return im;
  };
  const struct {
    ProgramImage im;
    const char* says;
  } bad[] = {
      {image("f32", {4, 4}, 1ull << 62), "holds 4611686018427387904 bytes, its shape and f32 elements 64"},
      {image("f32", {1024, 1024}, 64), "holds 64 bytes, its shape and f32 elements 4194304"},
      {image("f32", {0, 512}, 64), "holds 64 bytes, its shape and f32 elements 0"},
      {image("f32", {1ll << 62, 1ll << 62}, 64), "an overflowing shape"},
      {image("zz", {4, 4}, 64), "element type 'zz', which has no known size"},
  };
  for (const auto& c : bad) {
    Status st = Program::Create({}, c.im).status();
    EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.ToString();
    TS_EXPECT_CONTAINS(st.message(), c.says);
  }
  // A dynamic dim (a Tile IR kernel's memref<?xf32>) leaves the bytes to
  // the caller.
  Status dynamic = Program::Create({}, image("f32", {std::numeric_limits<int64_t>::min()}, 0)).status();
  EXPECT_NE(dynamic.code(), StatusCode::kDataLoss) << dynamic.ToString();
  // The sizes of integer types as MLIR prints them.
  EXPECT_EQ(elements::DtypeSize("ui32"), 4u);
  EXPECT_EQ(elements::DtypeSize("si16"), 2u);
  EXPECT_EQ(elements::DtypeSize("i1"), 1u);
  EXPECT_EQ(elements::DtypeSize("index"), 8u);
  EXPECT_FALSE(elements::HasElementSize("i0"));
  EXPECT_FALSE(elements::HasElementSize("i999999"));
  EXPECT_FALSE(elements::HasElementSize("vector<4xf32>"));

  ProgramImage placed = ImageOnMesh();
  placed.placed = true;
  placed.placed_in = {{{"dp"}, {"pp"}}};
  Status st = Program::Create({}, placed).status();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.ToString();
  TS_EXPECT_CONTAINS(st.message(), "a placement of more tensors than the program has");
  ProgramImage unknown = image("f32", {4, 4}, 64);
  unknown.placed = true;
  unknown.placed_in = {{{"dp"}, {"pp"}}};
  st = Program::Create({}, unknown).status();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.ToString();
  TS_EXPECT_CONTAINS(st.message(), "a placement over an unknown or repeated mesh axis 'pp'");
}

}  // namespace
}  // namespace tessera
