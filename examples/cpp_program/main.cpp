// Compile a Tessera program from C++, run it many times, check it, save it
// and run the saved copy: what an application does with the installed
// package (examples/cpp_program/CMakeLists.txt builds it out of tree).
//
//   tessera-example-program PROGRAM.mlir [FUNCTION]
//
// The program's arguments are filled with a ramp; its results are checked
// against the first run (every run must give the same bytes) and against a
// second program loaded from the saved file.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/program_compiler.hpp"

namespace {

int Fail(const std::string& what, const tessera::Status& st) {
  std::fprintf(stderr, "tessera-example-program: %s: %s\n", what.c_str(), st.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM.mlir [FUNCTION]\n", argv[0]);
    return 2;
  }
  auto runtime = tessera::Runtime::Create();
  if (!runtime.ok()) return Fail("Runtime::Create", runtime.status());
  tessera::Device device = runtime->devices().front();

  tessera::ProgramCompileOptions options;
  if (argc > 2) options.function = argv[2];
  auto program = tessera::CompileProgram({device}, tessera::ProgramSource::File(argv[1]), options);
  if (!program.ok()) return Fail("compiling " + std::string(argv[1]), program.status());
  std::printf("compiled %s for %s on %s\n", program->image().function.c_str(), program->image().target.c_str(),
              device.info().name.c_str());

  // One buffer per parameter (this example takes programs of buffers);
  // inputs get a ramp of small f32 values.
  std::vector<tessera::Buffer> buffers;
  std::vector<tessera::KernelArg> args;
  buffers.reserve(program->params().size());
  for (const tessera::ParamSpec& p : program->params()) {
    if (!p.is_buffer()) {
      std::fprintf(stderr, "this example runs programs of buffers; %s is a scalar\n", p.name.c_str());
      return 2;
    }
    auto b = device.allocate(p.bytes);
    if (!b.ok()) return Fail("allocate", b.status());
    std::vector<unsigned char> host(p.bytes, 0);
    if (p.role != tessera::ParamRole::kOutput && p.dtype == "f32")
      for (size_t i = 0; i < p.bytes / 4; ++i) {
        float v = static_cast<float>(i % 17) / 17.0f - 0.5f;
        std::memcpy(&host[i * 4], &v, 4);
      }
    if (auto st = tessera::copy(*b, host.data(), host.size()); !st.ok()) return Fail("copy", st);
    buffers.push_back(*b);
    args.push_back(tessera::KernelArg::buffer(buffers.back()));
  }

  // Many runs on one stream, then the results read back.
  auto stream = device.create_stream();
  if (!stream.ok()) return Fail("create_stream", stream.status());
  auto results = [&](std::vector<std::vector<unsigned char>>* out) -> tessera::Status {
    out->clear();
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (program->params()[i].role == tessera::ParamRole::kInput) continue;
      out->emplace_back(buffers[i].size());
      TESSERA_RETURN_IF_ERROR(tessera::copy(out->back().data(), buffers[i], buffers[i].size()));
    }
    return tessera::Status::Ok();
  };
  std::vector<std::vector<unsigned char>> first, later;
  for (int run = 0; run < 5; ++run) {
    if (auto st = program->Run(*stream, args); !st.ok()) return Fail("Program::Run", st);
    if (auto st = stream->synchronize(); !st.ok()) return Fail("synchronize", st);
    if (auto st = results(run == 0 ? &first : &later); !st.ok()) return Fail("reading results", st);
    if (run > 0 && later != first) {
      std::fprintf(stderr, "run %d differs from the first run\n", run);
      return 1;
    }
  }

  // Saved, reloaded, run again: the same bytes.
  const std::string saved = "tessera-example-program.tsp";
  if (auto st = program->Save(saved); !st.ok()) return Fail("Program::Save", st);
  auto loaded = tessera::Program::Load({device}, saved);
  if (!loaded.ok()) return Fail("Program::Load", loaded.status());
  if (auto st = loaded->Run(*stream, args); !st.ok()) return Fail("Program::Run (loaded)", st);
  if (auto st = stream->synchronize(); !st.ok()) return Fail("synchronize", st);
  if (auto st = results(&later); !st.ok()) return Fail("reading results", st);
  if (later != first) {
    std::fprintf(stderr, "the reloaded program gives other results\n");
    return 1;
  }

  // A bad argument list is an error, not a crash.
  auto bad = program->Run(*stream, {});
  if (bad.ok()) {
    std::fprintf(stderr, "a run without arguments was accepted\n");
    return 1;
  }
  std::printf("6 runs, same results; saved and reloaded %s; a wrong call says: %s\n", saved.c_str(),
              bad.message().c_str());
  std::printf("OK\n");
  return 0;
}
