#include "staged_collective.hpp"

#include <algorithm>
#include <vector>

#include "host_reduce.hpp"
#include "plugin_support.hpp"

namespace tessera::plugin_support {

TsError* CheckCollective(const TsCommunicator_Collective_Args* args, size_t n,
                         const StagedCollectiveHooks& hooks, CollectiveShape* shape, size_t total,
                         const uint32_t* rank_of) noexcept {
  const char* p = hooks.plugin;
  // N: the ranks counts and the root refer to (every process's).
  const size_t N = total ? total : n;
  auto global = [&](size_t r) -> size_t { return rank_of ? rank_of[r] : r; };
  // The enum fields are checked as integers before they are read as enums
  // (raw_enum): a C caller may store any value there.
  const int64_t dtype = raw_enum(args->dtype), op = raw_enum(args->op),
                reduce_op = raw_enum(args->reduce_op);
  if (dtype < TS_DTYPE_F32 || dtype > TS_DTYPE_U8)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: collective: dtype %lld is not a TsDataType", p,
                  static_cast<long long>(dtype));
  if (op < TS_COLLECTIVE_ALL_REDUCE || op > TS_COLLECTIVE_REDUCE_SCATTER)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: unknown collective %lld", p,
                  static_cast<long long>(op));
  const size_t es = dtype_size(args->dtype);
  if (es == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: collective: dtype %lld is not a TsDataType", p,
                  static_cast<long long>(dtype));
  if (n == 0) return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: collective: no ranks", p);
  if (!args->send || !args->recv || !args->streams)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: collective: send, recv and streams are required", p);
  const uint64_t count = args->count;
  if (count == 0)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: collective: count is 0 elements per rank", p);
  const bool reduces = args->op == TS_COLLECTIVE_ALL_REDUCE || args->op == TS_COLLECTIVE_REDUCE_SCATTER;
  if (reduces && (reduce_op < 0 || reduce_op > TS_REDUCE_MIN))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: collective: reduce_op %lld is not a TsReduceOp", p,
                  static_cast<long long>(reduce_op));
  if (count > (uint64_t{1} << 40) / es / N)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: collective: %llu elements per rank is too many", p,
                  static_cast<unsigned long long>(count));
  uint64_t send_elems = count, recv_elems = count;
  switch (args->op) {
    case TS_COLLECTIVE_ALL_REDUCE: case TS_COLLECTIVE_BROADCAST: break;
    case TS_COLLECTIVE_ALL_GATHER: recv_elems = count * N; break;
    case TS_COLLECTIVE_REDUCE_SCATTER: send_elems = count * N; break;
    default:
      return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: unknown collective %d", p, static_cast<int>(args->op));
  }
  if (args->op == TS_COLLECTIVE_BROADCAST && args->root >= N)
    return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: broadcast root %u, but %zu ranks", p, args->root, N);
  for (size_t r = 0; r < n; ++r) {
    const TsMemoryRef* refs[2] = {&args->send[r], &args->recv[r]};
    const uint64_t need[2] = {send_elems * es, recv_elems * es};
    for (int k = 0; k < 2; ++k) {
      // Broadcast reads send[root] only.
      if (k == 0 && args->op == TS_COLLECTIVE_BROADCAST && global(r) != args->root) continue;
      uint64_t size = 0;
      if (TsError* e = hooks.buffer(r, *refs[k], k == 1, &size)) return e;
      if (refs[k]->offset > size || need[k] > size - refs[k]->offset)
        return errorf(TS_ERROR_OUT_OF_RANGE,
                      "%s: collective: rank %zu's %s buffer holds %llu bytes past offset %llu; "
                      "%llu are needed",
                      p, r, k ? "recv" : "send",
                      static_cast<unsigned long long>(size - std::min(size, refs[k]->offset)),
                      static_cast<unsigned long long>(refs[k]->offset),
                      static_cast<unsigned long long>(need[k]));
    }
    if (TsError* e = hooks.stream(r)) return e;
  }
  shape->elem_size = es;
  shape->send_elems = send_elems;
  shape->recv_elems = recv_elems;
  return nullptr;
}

TsError* RunStagedCollective(const TsCommunicator_Collective_Args* args, size_t n,
                             const StagedCollectiveHooks& hooks) noexcept {
  CollectiveShape shape;
  if (TsError* e = CheckCollective(args, n, hooks, &shape)) return e;
  const size_t es = shape.elem_size;
  const uint64_t send_elems = shape.send_elems, recv_elems = shape.recv_elems;
  const char* p = hooks.plugin;
  return guard(p, "Communicator_Collective", [&]() -> TsError* {
    std::vector<std::vector<uint8_t>> in(n);
    for (size_t r = 0; r < n; ++r) {
      if (args->op == TS_COLLECTIVE_BROADCAST && r != args->root) continue;
      in[r].resize(send_elems * es);
      if (TsError* e = hooks.host_io(r, args->send[r], in[r].data(), in[r].size(), false)) return e;
    }
    std::vector<uint8_t> out =
        host_collective(args->op, args->dtype, args->reduce_op, args->root, in, send_elems);
    for (size_t r = 0; r < n; ++r) {
      const uint64_t bytes = recv_elems * es;
      uint8_t* src = out.data();
      if (args->op == TS_COLLECTIVE_REDUCE_SCATTER) src += r * bytes;
      if (TsError* e = hooks.host_io(r, args->recv[r], src, bytes, true)) return e;
    }
    return nullptr;
  });
}

}  // namespace tessera::plugin_support
