// tessera-mpi-bench: collectives across processes, Tessera over MPI against
// raw MPI in the same run (bench/README.md, "Across processes").
//
//   mpirun -np 4 --oversubscribe build/bin/tessera-mpi-bench > mpi.json
//
// Google Benchmark cannot time a collective: it picks iteration counts per
// process, and ranks that disagree on the count wait on each other for
// ever.  This binary runs a fixed schedule instead: repetitions x
// iterations rounds, in each of which every implementation of a metric
// makes one call between two barriers (implementations taking turns call by
// call, so the machine's noise hits both sides), and rank 0 reports the
// median call in Google Benchmark's JSON layout
// (`<metric>/<implementation>/<size>`, run_type "aggregate",
// aggregate_name "median") plus the ratios, tessera throughput / raw MPI's.
//
// Sizes follow nccl-tests: "16MiB" is the larger buffer of the call (the
// all_reduce vector, reduce_scatter's input, all_gather's output).
//
// With --program=FILE.mlir (an SPMD program whose mesh has one device per
// process; built with the compiler), also `<function>/no_overlap` and
// `<function>/overlap<N>`: one Program::Run + synchronize of the program as
// compiled plainly and with --overlap-chunks N (docs/spmd.md, "Overlap"),
// and their ratio.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "tessera/mpi.hpp"
#include "tessera/tcp.hpp"
#ifdef TESSERA_MPI_BENCH_PROGRAMS
#include "tessera/program_compiler.hpp"
#endif

using namespace tessera;

namespace {

int g_rank = 0, g_size = 1;

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median seconds per call of `run` over `reps` repetitions of `iters` calls.
struct Timed {
  std::string name;
  std::function<bool()> run;
  std::vector<double> per_call;
};

void Die(const std::string& what) {
  std::fprintf(stderr, "tessera-mpi-bench (rank %d): %s\n", g_rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  uint64_t bytes = 16ull << 20;
  int reps = 7, iters = 10;
  std::string program;
  int overlap = 4;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--bytes=", 0) == 0) bytes = std::strtoull(a.c_str() + 8, nullptr, 10);
    else if (a.rfind("--repetitions=", 0) == 0) reps = std::atoi(a.c_str() + 14);
    else if (a.rfind("--iterations=", 0) == 0) iters = std::atoi(a.c_str() + 13);
    else if (a.rfind("--program=", 0) == 0) program = a.substr(10);
    else if (a.rfind("--overlap-chunks=", 0) == 0) overlap = std::atoi(a.c_str() + 17);
    else {
      if (g_rank == 0)
        std::fprintf(stderr, "usage: mpirun -np N tessera-mpi-bench [--bytes=16777216] [--repetitions=7] [--iterations=10]\n"
                             "                  [--program=FILE.mlir [--overlap-chunks=4]]\n");
      MPI_Finalize();
      return 1;
    }
  }
  RuntimeOptions ro;
  ro.backend = "cpu";
  auto rt = Runtime::Create(ro);
  if (!rt.ok()) Die(rt.status().ToString());
  Device dev = rt->devices()[0];
  auto comm = mpi::CreateCommunicator(MPI_COMM_WORLD, {dev});
  if (!comm.ok()) Die(comm.status().ToString());
  // The same ranks over TCP (tessera/tcp.hpp), the id made by rank 0 and
  // passed with MPI_Bcast, as an application would with any channel.
  std::string id_text(256, '\0');
  if (g_rank == 0) {
    auto id = tcp::GetUniqueId();
    if (!id.ok()) Die(id.status().ToString());
    id_text = id->text();
    id_text.resize(256, '\0');
  }
  MPI_Bcast(id_text.data(), 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  auto tcp_id = tcp::UniqueId::Parse(id_text.c_str());
  if (!tcp_id.ok()) Die(tcp_id.status().ToString());
  auto tcp_comm = tcp::CreateCommunicator(*tcp_id, g_size, g_rank, {dev});
  if (!tcp_comm.ok()) Die(tcp_comm.status().ToString());
  // The cpu plugin's own communicator across processes (ABI 1.4: shared
  // memory, docs/spmd.md), its id made by rank 0 and passed with MPI_Bcast.
  std::vector<uint8_t> own_id(TS_UNIQUE_ID_BYTES, 0);
  if (g_rank == 0) {
    auto id = rt->create_collective_id();
    if (!id.ok()) Die(id.status().ToString());
    own_id = *id;
  }
  MPI_Bcast(own_id.data(), TS_UNIQUE_ID_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
  auto shm_comm = rt->create_communicator({dev}, static_cast<uint32_t>(g_size), {static_cast<uint32_t>(g_rank)}, own_id);
  if (!shm_comm.ok()) Die(shm_comm.status().ToString());
  const uint64_t n = bytes / 4, part = n / static_cast<uint64_t>(g_size);
  Stream stream = dev.default_stream();
  auto alloc = [&](uint64_t b) {
    auto buf = dev.allocate(b);
    if (!buf.ok()) Die(buf.status().ToString());
    std::vector<float> init(b / 4, 1.0f + g_rank);
    if (!copy(*buf, init.data(), b).ok()) Die("copy");
    return *buf;
  };
  Buffer big_a = alloc(n * 4), big_b = alloc(n * 4), small = alloc(part * 4);
  std::vector<float> raw_a(n, 1.0f + g_rank), raw_b(n), raw_small(part, 1.0f + g_rank);
  auto ok = [](const Status& st) {
    if (!st.ok()) Die(st.ToString());
    return true;
  };
  const std::string size = std::to_string(bytes >> 20) + "MiB";
  std::vector<std::vector<Timed>> metrics = {
      {{"all_reduce/tessera_mpi/" + size,
        [&] { return ok(comm->all_reduce({big_a}, {big_b}, n, TS_DTYPE_F32, TS_REDUCE_SUM, {stream}, false)); }, {}},
       {"all_reduce/raw_mpi/" + size,
        [&] { return MPI_Allreduce(raw_a.data(), raw_b.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS; }, {}},
       {"all_reduce/tessera_mpi_deterministic/" + size,
        [&] { return ok(comm->all_reduce({big_a}, {big_b}, n, TS_DTYPE_F32, TS_REDUCE_SUM, {stream}, true)); }, {}},
       {"all_reduce/tessera_tcp/" + size,
        [&] { return ok(tcp_comm->all_reduce({big_a}, {big_b}, n, TS_DTYPE_F32, TS_REDUCE_SUM, {stream}, true)); }, {}},
       {"all_reduce/tessera_cpu_shm/" + size,
        [&] { return ok(shm_comm->all_reduce({big_a}, {big_b}, n, TS_DTYPE_F32, TS_REDUCE_SUM, {stream}, true)); }, {}}},
      {{"reduce_scatter/tessera_mpi/" + size,
        [&] { return ok(comm->reduce_scatter({big_a}, {small}, part, TS_DTYPE_F32, TS_REDUCE_SUM, {stream}, false)); }, {}},
       {"reduce_scatter/raw_mpi/" + size,
        [&] {
          return MPI_Reduce_scatter_block(raw_a.data(), raw_small.data(), static_cast<int>(part), MPI_FLOAT, MPI_SUM,
                                          MPI_COMM_WORLD) == MPI_SUCCESS;
        }, {}},
       {"reduce_scatter/tessera_mpi_deterministic/" + size,
        [&] { return ok(comm->reduce_scatter({big_a}, {small}, part, TS_DTYPE_F32, TS_REDUCE_SUM, {stream}, true)); }, {}},
       {"reduce_scatter/tessera_cpu_shm/" + size,
        [&] { return ok(shm_comm->reduce_scatter({big_a}, {small}, part, TS_DTYPE_F32, TS_REDUCE_SUM, {stream}, true)); }, {}}},
      {{"all_gather/tessera_mpi/" + size, [&] { return ok(comm->all_gather({small}, {big_b}, part, TS_DTYPE_F32, {stream})); }, {}},
       {"all_gather/tessera_cpu_shm/" + size,
        [&] { return ok(shm_comm->all_gather({small}, {big_b}, part, TS_DTYPE_F32, {stream})); }, {}},
       {"all_gather/raw_mpi/" + size,
        [&] {
          return MPI_Allgather(raw_small.data(), static_cast<int>(part), MPI_FLOAT, raw_b.data(), static_cast<int>(part),
                               MPI_FLOAT, MPI_COMM_WORLD) == MPI_SUCCESS;
        }, {}}},
  };
  // The program plain and overlapped: compiled for this process's device,
  // created over MPI_COMM_WORLD, arguments filled with small values.
  std::vector<Program> programs;
  std::vector<std::vector<KernelArg>> program_args;
  std::deque<Buffer> program_buffers;  // KernelArgs point at them: never moved
  if (!program.empty()) {
#ifdef TESSERA_MPI_BENCH_PROGRAMS
    auto world = mpi::FromComm(MPI_COMM_WORLD);
    if (!world.ok()) Die(world.status().ToString());
    std::vector<Timed> group;
    for (int chunks : {0, overlap}) {
      ProgramCompileOptions co;
      co.overlap_chunks = chunks;
      auto image = CompileProgramImage(ProgramSource::File(program), co, &dev);
      if (!image.ok()) Die(image.status().ToString());
      auto p = Program::Create({dev}, *image, *world);
      if (!p.ok()) Die(p.status().ToString());
      std::vector<KernelArg> args;
      for (const ParamSpec& ps : p->params()) {
        if (!ps.is_buffer()) Die("--program: " + program + " takes a scalar; pass a program of tensors");
        auto buf = dev.allocate(ps.bytes);
        if (!buf.ok()) Die(buf.status().ToString());
        if (ps.dtype == "f32") {
          std::vector<float> init(ps.bytes / 4);
          for (size_t i = 0; i < init.size(); ++i) init[i] = 0.01f * static_cast<float>((i * 7 + g_rank) % 13);
          if (!copy(*buf, init.data(), ps.bytes).ok()) Die("copy");
        }
        program_buffers.push_back(*buf);
        args.push_back(KernelArg::buffer(program_buffers.back()));
      }
      programs.push_back(*p);
      program_args.push_back(std::move(args));
      const size_t k = programs.size() - 1;
      const std::string name = image->function + (chunks ? "/overlap" + std::to_string(chunks) : "/no_overlap") +
                               "/" + std::to_string(g_size) + "ranks";
      group.push_back({name, [&, k] {
                         ok(programs[k].Run(stream, program_args[k]));
                         return ok(stream.synchronize());
                       }, {}});
    }
    metrics.push_back(std::move(group));
#else
    Die("--program: this tessera-mpi-bench was built without the compiler (TESSERA_BUILD_IR=OFF)");
#endif
  }
  // Warm-up: every implementation once (first touch, connections).
  for (auto& m : metrics)
    for (auto& t : m) t.run();
  // Every call timed on its own between barriers, the implementations of a
  // metric taking turns call by call (a burst of load from elsewhere then
  // hits both sides alike); the median of reps x iters calls is reported.
  for (int r = 0; r < reps; ++r)
    for (int i = 0; i < iters; ++i)
      for (auto& m : metrics)
        for (auto& t : m) {
          MPI_Barrier(MPI_COMM_WORLD);
          const double t0 = Seconds();
          t.run();
          MPI_Barrier(MPI_COMM_WORLD);
          t.per_call.push_back(Seconds() - t0);
        }
  if (g_rank == 0) {
    std::string out = "{\n  \"context\": {\"executable\": \"tessera-mpi-bench\", \"processes\": " +
                      std::to_string(g_size) + ", \"mpi\": \"" + mpi::LibraryVersion() +
                      "\", \"repetitions\": " + std::to_string(reps) + ", \"iterations\": " + std::to_string(iters) +
                      "},\n  \"benchmarks\": [\n";
    std::string ratios;
    bool first = true;
    for (auto& m : metrics) {
      double raw = 0;
      // The group's reference: raw MPI for the collectives, the program
      // without overlap for --program.
      auto is_reference = [](const std::string& n) {
        return n.find("/raw_mpi/") != std::string::npos || n.find("/no_overlap/") != std::string::npos;
      };
      for (auto& t : m)
        if (is_reference(t.name)) raw = Median(t.per_call);
      for (auto& t : m) {
        const double med = Median(t.per_call);
        char line[512];
        std::snprintf(line, sizeof line,
                      "%s    {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"aggregate\", \"aggregate_name\": "
                      "\"median\", \"repetitions\": %d, \"iterations\": %d, \"real_time\": %.6f, \"cpu_time\": %.6f, "
                      "\"time_unit\": \"ms\", \"bytes_per_second\": %.1f}",
                      first ? "" : ",\n", t.name.c_str(), t.name.c_str(), reps, iters, med * 1e3, med * 1e3,
                      static_cast<double>(bytes) / med);
        out += line;
        first = false;
        const bool program_metric = t.name.find("overlap") != std::string::npos;
        if (!is_reference(t.name)) {
          std::snprintf(line, sizeof line, "%s    \"%s\": %.3f", ratios.empty() ? "" : ",\n", t.name.c_str(), raw / med);
          ratios += line;
          if (program_metric)
            std::fprintf(stderr, "%-44s %8.3f ms  %.3fx the run without overlap\n", t.name.c_str(), med * 1e3, raw / med);
          else
            std::fprintf(stderr, "%-44s %8.3f ms  %7.2f GB/s  %.3fx raw MPI%s\n", t.name.c_str(), med * 1e3,
                         static_cast<double>(bytes) / med / 1e9, raw / med,
                         t.name.find("/tessera_mpi/") != std::string::npos ? (raw / med >= 0.95 ? "  (goal >= 0.95x: met)" : "  (goal >= 0.95x: MISSED)") : "");
        } else if (program_metric) {
          std::fprintf(stderr, "%-44s %8.3f ms\n", t.name.c_str(), med * 1e3);
        } else {
          std::fprintf(stderr, "%-44s %8.3f ms  %7.2f GB/s\n", t.name.c_str(), med * 1e3, static_cast<double>(bytes) / med / 1e9);
        }
      }
    }
    out += "\n  ],\n  \"ratios_vs_reference\": {\n" + ratios + "\n  }\n}\n";
    std::fputs(out.c_str(), stdout);
  }
  comm = Communicator();
  tcp_comm = Communicator();
  shm_comm = Communicator();
  programs.clear();
  program_args.clear();
  program_buffers.clear();
  MPI_Finalize();
  return 0;
}
