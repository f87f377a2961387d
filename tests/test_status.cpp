// Status, StatusOr and the small formatting helpers of status.hpp.
#include "test_util.hpp"

namespace tessera {
namespace {

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(Status, CodesMatchTheAbi) {
  EXPECT_EQ(static_cast<int>(StatusCode::kInvalidArgument),
            TS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(static_cast<int>(StatusCode::kResourceExhausted),
            TS_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(static_cast<int>(StatusCode::kInvalidHandle),
            TS_ERROR_INVALID_HANDLE);
  EXPECT_EQ(static_cast<int>(StatusCode::kAbiMismatch), TS_ERROR_ABI_MISMATCH);
}

TEST(Status, CodeNames) {
  EXPECT_STREQ(StatusCodeName(StatusCode::kOk), "OK");
  EXPECT_STREQ(StatusCodeName(StatusCode::kInvalidArgument), "INVALID_ARGUMENT");
  EXPECT_STREQ(StatusCodeName(StatusCode::kOutOfRange), "OUT_OF_RANGE");
  EXPECT_STREQ(StatusCodeName(StatusCode::kResourceExhausted),
               "RESOURCE_EXHAUSTED");
  EXPECT_STREQ(StatusCodeName(StatusCode::kUnsupported), "UNSUPPORTED");
  EXPECT_STREQ(StatusCodeName(StatusCode::kInvalidHandle), "INVALID_HANDLE");
}

TEST(Status, ToStringHasCodeAndMessage) {
  Status s(StatusCode::kOutOfRange, "copy past the end");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "copy past the end");
  TS_EXPECT_CONTAINS(s.ToString(), "OUT_OF_RANGE");
  TS_EXPECT_CONTAINS(s.ToString(), "copy past the end");
}

TEST(Status, AnnotatePrefixesContext) {
  Status s(StatusCode::kNotFound, "no such kernel");
  s.Annotate("while loading executable x.so");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "while loading executable x.so: no such kernel");

  Status moved =
      Status(StatusCode::kInternal, "inner").Annotate("outer");
  EXPECT_EQ(moved.message(), "outer: inner");
}

TEST(Status, AnnotateOnOkIsNoOp) {
  Status s;
  s.Annotate("context");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(StatusOr, HoldsValueOrError) {
  StatusOr<int> v(42);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 42);
  EXPECT_EQ(v.value(), 42);

  StatusOr<std::string> e(Status(StatusCode::kNotFound, "gone"));
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(e.status().message(), "gone");
}

TEST(StatusOr, MovesOutValue) {
  StatusOr<std::unique_ptr<int>> v(std::make_unique<int>(7));
  ASSERT_TRUE(v.ok());
  std::unique_ptr<int> p = std::move(v).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 7);
}

Status ReturnsIfError(bool fail, int* reached) {
  TESSERA_RETURN_IF_ERROR(fail ? Status(StatusCode::kAborted, "stop")
                               : Status::Ok());
  ++*reached;
  return Status::Ok();
}

StatusOr<int> AssignsOrReturns(StatusOr<int> in) {
  TESSERA_ASSIGN_OR_RETURN(int v, std::move(in));
  return v + 1;
}

TEST(StatusMacros, ReturnIfErrorAndAssignOrReturn) {
  int reached = 0;
  EXPECT_TRUE(ReturnsIfError(false, &reached).ok());
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(ReturnsIfError(true, &reached).code(), StatusCode::kAborted);
  EXPECT_EQ(reached, 1);

  auto ok = AssignsOrReturns(StatusOr<int>(1));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 2);
  auto err = AssignsOrReturns(StatusOr<int>(Status(StatusCode::kNotFound, "x")));
  EXPECT_EQ(err.status().code(), StatusCode::kNotFound);
}

TEST(FormatBytes, ReadableUnits) {
  EXPECT_EQ(FormatBytes(12), "12 B");
  EXPECT_EQ(FormatBytes(64ull << 20), "64 MiB");
  // Whole values may be written with or without ".0" (the header's comment
  // shows both styles); fractions get one decimal.
  std::string gib = FormatBytes(1ull << 30);
  EXPECT_TRUE(gib == "1 GiB" || gib == "1.0 GiB") << gib;
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  TS_EXPECT_CONTAINS(FormatBytes(1ull << 40), "TiB");
}

TEST(Names, EnumNamesAreNotEmpty) {
  EXPECT_STRNE(PluginStateName(PluginState::kRejected), "");
  EXPECT_STRNE(DeviceTypeName(TS_DEVICE_TYPE_CPU), "");
  EXPECT_STRNE(BufferKindName(TS_BUFFER_MANAGED), "");
  EXPECT_STRNE(HintResultName(TS_HINT_EMULATED), "");
  EXPECT_STRNE(PeerCopyModeName(TS_PEER_COPY_DIRECT), "");
  EXPECT_EQ(DataTypeSize(TS_DTYPE_F32), 4u);
  EXPECT_EQ(DataTypeSize(TS_DTYPE_F64), 8u);
  EXPECT_EQ(DataTypeSize(TS_DTYPE_I32), 4u);
  EXPECT_STRNE(DataTypeName(TS_DTYPE_I32), "");
}

}  // namespace
}  // namespace tessera
