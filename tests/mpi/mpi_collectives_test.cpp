// tessera-mpi-test: communicators across processes over MPI
// (tessera/mpi.hpp), run under mpirun by tests/mpi/run_mpi_tests.sh.
//
//   mpirun -np N tessera-mpi-test            every collective, f32/i32/bf16,
//                                            deterministic and not; with
//                                            TESSERA_CPU_DEVICES=D each
//                                            process holds D ranks (hybrid)
//   mpirun -np 2 tessera-mpi-test --mismatch rank 1 passes another count:
//                                            every rank gets the error
//   mpirun -np 2 tessera-mpi-test --die      the last process dies before
//                                            an all_reduce: the others must
//                                            not hang (mpirun ends them)
//   mpirun -np 2 tessera-mpi-test --stuck    the last process never calls
//                                            it: with TESSERA_MPI_TIMEOUT=N
//                                            the others abort after N s
//
// Values are small integers, so every association order gives the same
// exact result and each rank checks its own recv against a formula.  Prints
// "mpi test: ok" on rank 0 and exits 0 when every rank passed.
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "tessera/mpi.hpp"

using namespace tessera;

namespace {

int g_rank = 0;
int g_failures = 0;

#define CHECK_OK(expr)                                                                       \
  do {                                                                                       \
    Status st_ = (expr);                                                                     \
    if (!st_.ok()) {                                                                         \
      std::fprintf(stderr, "rank %d: %s:%d: %s\n", g_rank, __FILE__, __LINE__, st_.ToString().c_str()); \
      ++g_failures;                                                                          \
    }                                                                                        \
  } while (0)

// The value rank r sends at element i (exact in f32, i32 and bf16).
float Value(uint32_t r, uint64_t i) { return static_cast<float>((r + 1) * ((i % 7) + 1)); }

uint16_t ToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return static_cast<uint16_t>(x >> 16);  // exact for these small integers
}
float FromBf16(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

void Store(TsDataType t, void* p, uint64_t i, float v) {
  if (t == TS_DTYPE_F32) static_cast<float*>(p)[i] = v;
  else if (t == TS_DTYPE_I32) static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
  else static_cast<uint16_t*>(p)[i] = ToBf16(v);
}
float Load(TsDataType t, const void* p, uint64_t i) {
  if (t == TS_DTYPE_F32) return static_cast<const float*>(p)[i];
  if (t == TS_DTYPE_I32) return static_cast<float>(static_cast<const int32_t*>(p)[i]);
  return FromBf16(static_cast<const uint16_t*>(p)[i]);
}

struct Fixture {
  Communicator comm;
  std::vector<Device> devices;
  std::vector<uint32_t> ranks;  // the global rank of each local device
  size_t N = 0;
};

// One collective on every local rank; each checks its own recv.
void RunOne(Fixture& f, TsCollectiveOp op, TsDataType t, TsReduceOp red, bool det, uint64_t count) {
  const size_t L = f.devices.size(), N = f.N, es = DataTypeSize(t);
  const uint64_t send_n = op == TS_COLLECTIVE_REDUCE_SCATTER ? count * N : count;
  const uint64_t recv_n = op == TS_COLLECTIVE_ALL_GATHER ? count * N : count;
  std::vector<Buffer> send, recv;
  std::vector<Stream> streams;
  const uint32_t root = static_cast<uint32_t>(N - 1);
  for (size_t k = 0; k < L; ++k) {
    auto s = f.devices[k].allocate(send_n * es);
    auto r = f.devices[k].allocate(recv_n * es);
    if (!s.ok() || !r.ok()) { ++g_failures; return; }
    std::vector<uint8_t> host(send_n * es);
    for (uint64_t i = 0; i < send_n; ++i) Store(t, host.data(), i, Value(f.ranks[k], i));
    CHECK_OK(copy(*s, host.data(), host.size()));
    send.push_back(*s);
    recv.push_back(*r);
    streams.push_back(f.devices[k].default_stream());
  }
  Status st;
  switch (op) {
    case TS_COLLECTIVE_ALL_REDUCE: st = f.comm.all_reduce(send, recv, count, t, red, streams, det); break;
    case TS_COLLECTIVE_REDUCE_SCATTER: st = f.comm.reduce_scatter(send, recv, count, t, red, streams, det); break;
    case TS_COLLECTIVE_ALL_GATHER: st = f.comm.all_gather(send, recv, count, t, streams); break;
    case TS_COLLECTIVE_BROADCAST: st = f.comm.broadcast(send, recv, count, t, root, streams); break;
  }
  CHECK_OK(st);
  if (!st.ok()) return;
  for (size_t k = 0; k < L; ++k) {
    CHECK_OK(streams[k].synchronize());
    std::vector<uint8_t> host(recv_n * es);
    CHECK_OK(copy(host.data(), recv[k], host.size()));
    const uint32_t me = f.ranks[k];
    for (uint64_t i = 0; i < recv_n; ++i) {
      float want = 0;
      switch (op) {
        case TS_COLLECTIVE_ALL_REDUCE:
        case TS_COLLECTIVE_REDUCE_SCATTER: {
          const uint64_t at = op == TS_COLLECTIVE_ALL_REDUCE ? i : me * count + i;
          for (uint32_t r = 0; r < N; ++r)
            want = r == 0 ? Value(r, at) : red == TS_REDUCE_MAX ? std::max(want, Value(r, at)) : want + Value(r, at);
          break;
        }
        case TS_COLLECTIVE_ALL_GATHER: want = Value(static_cast<uint32_t>(i / count), i % count); break;
        case TS_COLLECTIVE_BROADCAST: want = Value(root, i); break;
      }
      const float got = Load(t, host.data(), i);
      if (got != want) {
        std::fprintf(stderr, "rank %u: op %d dtype %d det %d count %llu: element %llu is %g, expected %g\n", me, op, t,
                     det, static_cast<unsigned long long>(count), static_cast<unsigned long long>(i), got, want);
        ++g_failures;
        break;
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const std::string mode = argc > 1 ? argv[1] : "";
  // TESSERA_BACKEND picks the plugin: cpu (buffers used in place) or
  // vulkan (staged through host memory); vulkan missing is a skip (77) on
  // every rank alike.
  auto rt = Runtime::Create();
  if (!rt.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", g_rank, rt.status().ToString().c_str());
    const char* b = std::getenv("TESSERA_BACKEND");
    if (b && std::string(b) == "vulkan") {
      MPI_Finalize();
      return 77;
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Fixture f;
  f.devices = rt->devices();
  auto comm = mpi::CreateCommunicator(MPI_COMM_WORLD, f.devices);
  if (!comm.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", g_rank, comm.status().ToString().c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  f.comm = *comm;
  f.N = f.comm.size();
  for (size_t k = 0; k < f.devices.size(); ++k)
    f.ranks.push_back(static_cast<uint32_t>(g_rank * f.devices.size() + k));  // same count per process here

  if (mode == "--mismatch") {
    // Rank 1 asks for one element more: every rank must fail, naming both.
    const uint64_t count = 1000 + (g_rank == 1 ? 1 : 0);
    std::vector<Buffer> send, recv;
    std::vector<Stream> streams;
    for (const Device& d : f.devices) {
      send.push_back(*d.allocate(count * 4));
      recv.push_back(*d.allocate(count * 4));
      streams.push_back(d.default_stream());
    }
    Status st = f.comm.all_reduce(send, recv, count, TS_DTYPE_F32, TS_REDUCE_SUM, streams, true);
    const std::string msg = st.ToString();
    std::fprintf(stderr, "rank %d: %s\n", g_rank, msg.c_str());
    const bool named = msg.find("disagree") != std::string::npos && msg.find("1000 F32") != std::string::npos &&
                       msg.find("1001 F32") != std::string::npos;
    int ok = !st.ok() && named, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (g_rank == 0) std::printf("mpi test: %s\n", all ? "mismatch detected on every rank: ok" : "FAILED");
    f = Fixture();
    MPI_Finalize();
    return all ? 0 : 1;
  }
  if (mode == "--stuck") {
    // The last process is alive but never reaches the all_reduce: with
    // TESSERA_MPI_TIMEOUT the others abort the job after that many seconds.
    if (g_rank == world - 1) {
      std::fprintf(stderr, "rank %d: stuck (sleeping) instead of calling the all_reduce\n", g_rank);
      sleep(600);
    }
    RunOne(f, TS_COLLECTIVE_ALL_REDUCE, TS_DTYPE_F32, TS_REDUCE_SUM, true, 1 << 16);
    std::fprintf(stderr, "rank %d: the all_reduce returned\n", g_rank);
    MPI_Finalize();
    return 1;
  }
  if (mode == "--die") {
    if (g_rank == world - 1) {
      std::fprintf(stderr, "rank %d: dying before the all_reduce (SIGKILL)\n", g_rank);
      raise(SIGKILL);
    }
    RunOne(f, TS_COLLECTIVE_ALL_REDUCE, TS_DTYPE_F32, TS_REDUCE_SUM, true, 1 << 16);
    std::fprintf(stderr, "rank %d: the all_reduce returned (%d failures)\n", g_rank, g_failures);
    MPI_Finalize();
    return 1;
  }

  for (uint64_t count : {1ull, 5ull, 4096ull, 100003ull})
    for (TsDataType t : {TS_DTYPE_F32, TS_DTYPE_I32, TS_DTYPE_BF16})
      for (bool det : {true, false}) {
        RunOne(f, TS_COLLECTIVE_ALL_REDUCE, t, TS_REDUCE_SUM, det, count);
        RunOne(f, TS_COLLECTIVE_ALL_REDUCE, t, TS_REDUCE_MAX, det, count);
        RunOne(f, TS_COLLECTIVE_REDUCE_SCATTER, t, TS_REDUCE_SUM, det, count);
        if (det) {
          RunOne(f, TS_COLLECTIVE_ALL_GATHER, t, TS_REDUCE_SUM, det, count);
          RunOne(f, TS_COLLECTIVE_BROADCAST, t, TS_REDUCE_SUM, det, count);
        }
      }
  int mine = g_failures, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0)
    std::printf("mpi test: %zu ranks in %d processes on %s (%s; data moved by %s): %s\n", f.N, world,
                rt->backend().c_str(), mpi::LibraryVersion().c_str(),
                f.comm.provider().empty() ? "the plugin" : f.comm.provider().c_str(), all ? "FAILED" : "ok");
  f = Fixture();
  MPI_Finalize();
  return all ? 1 : 0;
}
