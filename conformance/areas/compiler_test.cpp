// Area "compiler": the plugin's compiler (plugin ABI 1.2), without which no
// Tile IR program runs on it.  Its targets are listed and consistent with
// the device; a Tile IR kernel compiled for the device runs; every bad
// request is an error with the documented code and a message; a kernel the
// target cannot lower is UNSUPPORTED naming the op.
#include <algorithm>

#include "cts/cts.hpp"
#include "tessera/compiler.hpp"
#include "tessera/ir_version.h"

namespace tessera::cts {
namespace {

class Compiler : public CtsTest {
 protected:
  // The device's compiler, or skips the test as unsupported.
  bool Get(tessera::Compiler* out) {
    auto c = tessera::Compiler::ForDevice(device());
    if (!c.ok()) {
      if (c.status().code() != StatusCode::kUnsupported) ADD_FAILURE() << c.status().ToString();
      return false;
    }
    *out = *c;
    return true;
  }
  CompileRequest Request(const tessera::Compiler& c) {
    CompileRequest r;
    r.target = c.targets().front().name;
    r.ir_version = TESSERA_IR_VERSION;
    r.source_name = "conformance";
    r.module = "this is not MLIR bytecode";
    return r;
  }
};

#define CTS_REQUIRE_COMPILER(var)                                              \
  tessera::Compiler var;                                                       \
  do {                                                                         \
    if (!Get(&var)) GTEST_SKIP() << "unsupported: compiler (the plugin lists no compile targets)"; \
  } while (0)

TEST_F(Compiler, ListsTargetsTheDeviceLoads) {
  CTS_REQUIRE_COMPILER(c);
  ASSERT_FALSE(c.targets().empty());
  bool loadable = false;
  for (const CompileTargetInfo& t : c.targets()) {
    EXPECT_FALSE(t.name.empty());
    EXPECT_FALSE(t.executable_format.empty()) << t.name;
    EXPECT_TRUE(t.input_levels & TS_IR_LEVEL_TILE) << t.name << " must take Tile IR";
    for (const std::string& f : info().executable_formats) loadable |= f == t.executable_format;
  }
  EXPECT_TRUE(loadable) << "no target compiles to a format the device loads";
}

// ABI 1.5: the arch a device compiles for (scheduled for by the caller)
// is "" (the target's default) or one its plugin's first target lists.
TEST_F(Compiler, TheDeviceCompilesForAListedArch) {
  CTS_REQUIRE_COMPILER(c);
  const std::string& arch = info().compile_arch;
  if (arch.empty()) return;  // the target's default: always valid
  const CompileTargetInfo& t = c.targets().front();
  const bool listed = std::find(t.archs.begin(), t.archs.end(), arch) != t.archs.end() ||
                      std::find(t.archs.begin(), t.archs.end(), "*") != t.archs.end();
  EXPECT_TRUE(listed) << "compile_arch '" << arch << "' is not one of target '" << t.name << "''s archs";
}

TEST_F(Compiler, CompiledKernelRuns) {
  CTS_TILE_KERNEL(tk, "fill_u32", "fill_u32", {{"L", std::to_string(std::min<uint32_t>(32, info().max_group_size))}});
  const uint64_t n = 1000;
  CTS_ASSERT_OK_AND_ASSIGN(Buffer b, device().allocate(n * 4));
  Stream s = device().default_stream();
  CTS_ASSERT_OK(s.launch(tk.kernel, Dim(GroupsFor(n, tk.group.x)), tk.group,
                         {KernelArg::buffer(b), KernelArg::scalar(0xC0FFEEu), KernelArg::scalar(n)},
                         tk.shared_memory_bytes));
  CTS_ASSERT_OK(s.synchronize());
  CTS_ASSERT_OK_AND_ASSIGN(auto v, Download<uint32_t>(b, n));
  EXPECT_EQ(v, std::vector<uint32_t>(n, 0xC0FFEEu));
}

TEST_F(Compiler, NotBytecodeIsInvalidArgument) {
  CTS_REQUIRE_COMPILER(c);
  CTS_EXPECT_ERROR(c.Compile(Request(c), &device()), kInvalidArgument);
}

TEST_F(Compiler, EmptyModuleIsInvalidArgument) {
  CTS_REQUIRE_COMPILER(c);
  CompileRequest r = Request(c);
  r.module.clear();
  CTS_EXPECT_ERROR(c.Compile(r, &device()), kInvalidArgument);
}

TEST_F(Compiler, OtherIrVersionIsAbiMismatchNamingBoth) {
  CTS_REQUIRE_COMPILER(c);
  CompileRequest r = Request(c);
  r.ir_version = "tessera-ir-0";
  auto out = c.Compile(r, &device());
  CTS_EXPECT_ERROR(out, kAbiMismatch);
  if (!out.ok()) EXPECT_NE(out.status().message().find("tessera-ir-0"), std::string::npos) << out.status().ToString();
}

TEST_F(Compiler, UnknownTargetIsInvalidArgument) {
  CTS_REQUIRE_COMPILER(c);
  CompileRequest r = Request(c);
  r.target = "no_such_target";
  CTS_EXPECT_ERROR(c.Compile(r, &device()), kInvalidArgument);
}

TEST_F(Compiler, UnknownOptionIsInvalidArgument) {
  CTS_REQUIRE_COMPILER(c);
  CompileRequest r = Request(c);
  r.options.push_back(OptionValue::Int("no_such_option", 1));
  auto out = c.Compile(r, &device());
  CTS_EXPECT_ERROR(out, kInvalidArgument);
  if (!out.ok()) EXPECT_NE(out.status().message().find("no_such_option"), std::string::npos) << out.status().ToString();
}

TEST_F(Compiler, UnknownEmitKindIsInvalidArgument) {
  CTS_REQUIRE_COMPILER(c);
  CompileRequest r = Request(c);
  r.emit = "no_such_form";
  CTS_EXPECT_ERROR(c.Compile(r, &device()), kInvalidArgument);
}

TEST_F(Compiler, WhatTheTargetCannotLowerIsUnsupportedNamingTheOp) {
  // System-scope atomics: a device without atomic_scopes.mesh must refuse
  // to compile them (UNSUPPORTED, naming the op), one with it must run them.
  TileKernel tk;
  std::string why;
  bool ok = CompileTileKernel("atomic_add_mesh", "atomic_add_mesh", {{"L", "1"}}, &tk, &why);
  // No compiler at all (the plugin lists no targets, or this suite was built
  // without Tessera IR): nothing to check here.
  if (!ok && why.rfind("unsupported: ", 0) == 0 && why.find("tessera_tile.atomic_rmw") == std::string::npos)
    GTEST_SKIP() << why;
  if (info().atomic_scopes & TS_ATOMIC_SCOPE_MESH) {
    EXPECT_TRUE(ok) << why;
  } else {
    ASSERT_FALSE(ok);
    EXPECT_EQ(why.rfind("unsupported: compiler", 0), 0u) << why;
    EXPECT_NE(why.find("tessera_tile.atomic_rmw"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace tessera::cts
