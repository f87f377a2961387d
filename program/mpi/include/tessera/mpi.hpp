// libtessera_mpi.so (Tessera::mpi): collectives and SPMD programs across
// processes over MPI (docs/spmd.md, "Across processes").  Built when CMake
// finds MPI (option TESSERA_WITH_MPI); links libmpi.  Applications that do
// not use MPI never link it; those that include this header call MPI
// themselves and link it too (CMake: find_package(MPI), MPI::MPI_C).
//
//   MPI_Init(&argc, &argv);                       // or tessera::mpi::World()
//   auto comm = tessera::mpi::CreateCommunicator(MPI_COMM_WORLD, {device});
//   comm->all_reduce({send}, {recv}, n, TS_DTYPE_F32, TS_REDUCE_SUM,
//                    {device.default_stream()}, /*deterministic=*/true);
//
// Buffers the host can address (the cpu plugin's) are used in place; others
// (vulkan) are staged through host memory.  Deterministic reductions
// combine the ranks in the same fixed tree as the cpu plugin
// (((r0+r1)+(r2+r3))...), whatever MPI's own algorithm: the bits equal a
// single-process run.
#ifndef TESSERA_MPI_HPP_
#define TESSERA_MPI_HPP_

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "tessera/process_group.hpp"

namespace tessera::mpi {

// "Open MPI v4.1.4, ..." (MPI_Get_library_version's first line).
std::string LibraryVersion();

// MPI_COMM_WORLD as a ProcessGroup, initializing MPI (MPI_Init_thread,
// MPI_THREAD_SERIALIZED) when the application has not.
StatusOr<std::shared_ptr<ProcessGroup>> World();
// Any communicator as a ProcessGroup (MPI_Comm_dup'ed; MPI must be
// initialized).
StatusOr<std::shared_ptr<ProcessGroup>> FromComm(MPI_Comm comm);

// A communicator over every process of `comm`: this process's ranks are
// `local_devices`, ranks numbered process by process (process 0's devices
// first).  Collective over `comm`.
StatusOr<Communicator> CreateCommunicator(MPI_Comm comm, const std::vector<Device>& local_devices);

// MPI_Finalize when World() initialized MPI (a no-op otherwise).
void Finalize();

}  // namespace tessera::mpi

#endif  // TESSERA_MPI_HPP_
