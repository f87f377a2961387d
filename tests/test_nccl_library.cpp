// plugins/common/nccl_library: the NCCL / RCCL loader the cuda and hip
// plugins share.  Checked here against nccl.h and the real libnccl.so.2 of
// the CUDA toolkit when the build found them (no GPU needed: without a
// driver ncclCommInitAll fails, and that failure is what the plugins must
// turn into staged collectives).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nccl_library.hpp"
#include "plugin_support.hpp"

#ifdef TESSERA_TEST_NCCL_HEADER
#include <nccl.h>
#endif

namespace tessera::plugin_support {
namespace {

struct ErrorText {
  TsErrorCode code;
  std::string message;
};
ErrorText Take(TsError* e) {
  ErrorText t{e->code, e->message};
  TsError_Destroy_Args a{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  Error_Destroy(&a);
  return t;
}

TEST(NcclLibrary, VersionText) {
  EXPECT_EQ(NcclVersionText(22809), "2.28.9");
  EXPECT_EQ(NcclVersionText(21003), "2.10.3");
  EXPECT_EQ(NcclVersionText(2708), "2.7.8");  // the form before 2.9
  EXPECT_EQ(NcclVersionText(0), "(unknown version)");
}

TEST(NcclLibrary, EveryDataTypeHasAnNcclType) {
  const TsDataType all[] = {TS_DTYPE_F32, TS_DTYPE_F64, TS_DTYPE_I32, TS_DTYPE_I64,
                            TS_DTYPE_F16, TS_DTYPE_BF16, TS_DTYPE_I8, TS_DTYPE_U8};
  std::vector<int> seen;
  for (TsDataType t : all) {
    int v = -1;
    ASSERT_TRUE(NcclDataType(t, 22809, &v)) << t;
    for (int s : seen) EXPECT_NE(s, v) << "two Tessera types share NCCL type " << v;
    seen.push_back(v);
  }
  int v = -1;
  EXPECT_FALSE(NcclDataType(TS_DTYPE_BF16, 20906, &v)) << "bf16 came in NCCL 2.10";
  EXPECT_TRUE(NcclDataType(TS_DTYPE_F16, 20906, &v));
  EXPECT_FALSE(NcclDataType(static_cast<TsDataType>(99), 22809, &v));
}

#ifdef TESSERA_TEST_NCCL_HEADER
// The values declared in nccl_library are nccl.h's.
TEST(NcclLibrary, DeclarationsMatchNcclHeader) {
  static_assert(sizeof(NcclUniqueId) == sizeof(ncclUniqueId), "ncclUniqueId's size");
  static_assert(sizeof(NcclUniqueId) == NCCL_UNIQUE_ID_BYTES, "NCCL_UNIQUE_ID_BYTES");
  const std::pair<TsDataType, ncclDataType_t> types[] = {
      {TS_DTYPE_F32, ncclFloat32}, {TS_DTYPE_F64, ncclFloat64}, {TS_DTYPE_I32, ncclInt32},
      {TS_DTYPE_I64, ncclInt64},   {TS_DTYPE_F16, ncclFloat16}, {TS_DTYPE_BF16, ncclBfloat16},
      {TS_DTYPE_I8, ncclInt8},     {TS_DTYPE_U8, ncclUint8}};
  for (auto [t, n] : types) {
    int v = -1;
    ASSERT_TRUE(NcclDataType(t, NCCL_VERSION_CODE, &v));
    EXPECT_EQ(v, static_cast<int>(n)) << "TsDataType " << t;
  }
  EXPECT_EQ(NcclReduceOp(TS_REDUCE_SUM), static_cast<int>(ncclSum));
  EXPECT_EQ(NcclReduceOp(TS_REDUCE_PROD), static_cast<int>(ncclProd));
  EXPECT_EQ(NcclReduceOp(TS_REDUCE_MAX), static_cast<int>(ncclMax));
  EXPECT_EQ(NcclReduceOp(TS_REDUCE_MIN), static_cast<int>(ncclMin));
  EXPECT_EQ(NcclErrorCode(ncclInvalidArgument), TS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(NcclErrorCode(ncclInvalidUsage), TS_ERROR_FAILED_PRECONDITION);
  EXPECT_EQ(NcclErrorCode(ncclRemoteError), TS_ERROR_UNAVAILABLE);
  EXPECT_EQ(NcclErrorCode(ncclSystemError), TS_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(NcclErrorCode(ncclUnhandledCudaError), TS_ERROR_INTERNAL);
}
#endif

TEST(NcclLibrary, MissingLibraryIsAReason) {
  std::string why;
  EXPECT_EQ(NcclLibrary::Open("/nonexistent/libnccl.so.2", "NCCL", &why), nullptr);
  EXPECT_NE(why.find("/nonexistent/libnccl.so.2"), std::string::npos) << why;
}

TEST(NcclLibrary, ALibraryWithoutTheApiIsAReason) {
  std::string why;
  EXPECT_EQ(NcclLibrary::Open("libm.so.6", "RCCL", &why), nullptr);
  EXPECT_NE(why.find("does not provide ncclGetVersion"), std::string::npos) << why;
  EXPECT_NE(why.find("RCCL"), std::string::npos) << why;
}

TEST(NcclLoader, EmptyOptionNeverLoads) {
  NcclLoader loader;
  loader.Configure("", "NCCL");
  std::string why;
  EXPECT_EQ(loader.Get(&why), nullptr);
  EXPECT_NE(why.find("option is empty"), std::string::npos) << why;
  EXPECT_TRUE(loader.CommsFor("cuda", {0}).empty());
  EXPECT_EQ(loader.library(), nullptr);
}

TEST(NcclLoader, MissingLibraryStagesEveryCommunicator) {
  NcclLoader loader;
  loader.Configure("/nonexistent/librccl.so.1", "RCCL");
  EXPECT_TRUE(loader.CommsFor("hip", {0, 1}).empty());
  EXPECT_TRUE(loader.CommsFor("hip", {0}).empty());  // the answer is kept
  std::string why;
  EXPECT_EQ(loader.Get(&why), nullptr);
  EXPECT_NE(why.find("/nonexistent/librccl.so.1"), std::string::npos) << why;
}

#ifdef TESSERA_TEST_NCCL_LIBRARY
// The toolkit's libnccl.so.2.  Without an NVIDIA driver its communicators
// cannot be made: the error must name the call and carry NCCL's own reason,
// and the loader must hand out no communicators.
TEST(NcclLibrary, RealNccl) {
  std::string why;
  std::unique_ptr<NcclLibrary> lib = NcclLibrary::Open(TESSERA_TEST_NCCL_LIBRARY, "NCCL", &why);
  ASSERT_NE(lib, nullptr) << why;
  EXPECT_GE(lib->version(), 21000);
  EXPECT_EQ(lib->description().rfind("NCCL 2.", 0), 0u) << lib->description();
  EXPECT_TRUE(lib->Supports(TS_DTYPE_BF16));
  std::vector<NcclComm> comms;
  TsError* e = lib->InitAll("cuda", {0}, &comms);
  if (e) {
    ErrorText t = Take(e);
    EXPECT_TRUE(comms.empty());
    EXPECT_NE(t.message.find("cuda: ncclCommInitAll(ndev=1): NCCL error"), std::string::npos)
        << t.message;
  } else {
    // A machine with a GPU and a driver: a real communicator.
    ASSERT_EQ(comms.size(), 1u);
    EXPECT_NE(comms[0], nullptr);
    lib->DestroyAll(&comms);
    EXPECT_TRUE(comms.empty());
  }
}

TEST(NcclLoader, RealNcclWithoutDriverStages) {
  NcclLoader loader;
  loader.Configure(TESSERA_TEST_NCCL_LIBRARY, "NCCL");
  std::string why;
  ASSERT_NE(loader.Get(&why), nullptr) << why;
  std::vector<NcclComm> comms = loader.CommsFor("cuda", {0});
  if (!comms.empty()) {
    loader.library()->DestroyAll(&comms);
    GTEST_SKIP() << "this machine has a CUDA driver and device";
  }
  EXPECT_NE(loader.library(), nullptr);
}
#endif

}  // namespace
}  // namespace tessera::plugin_support
