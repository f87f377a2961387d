// Printable names of the ABI's enums, for messages and tessera-info.
#include "tessera/runtime.hpp"

namespace tessera {

const char* PluginStateName(PluginState state) {
  switch (state) {
    case PluginState::kLoaded: return "loaded";
    case PluginState::kAvailable: return "available";
    case PluginState::kUnavailable: return "unavailable";
    case PluginState::kRejected: return "rejected";
    case PluginState::kShadowed: return "shadowed";
    case PluginState::kNotProbed: return "not probed";
  }
  return "?";
}

const char* DeviceTypeName(TsDeviceType type) {
  switch (type) {
    case TS_DEVICE_TYPE_CPU: return "cpu";
    case TS_DEVICE_TYPE_DISCRETE_GPU: return "discrete-gpu";
    case TS_DEVICE_TYPE_INTEGRATED_GPU: return "integrated-gpu";
    case TS_DEVICE_TYPE_VIRTUAL: return "virtual";
    case TS_DEVICE_TYPE_SOFTWARE: return "software";
  }
  return "unknown";
}

const char* BufferKindName(TsBufferKind kind) {
  switch (kind) {
    case TS_BUFFER_DEVICE: return "device";
    case TS_BUFFER_HOST_PINNED: return "host-pinned";
    case TS_BUFFER_MANAGED: return "managed";
  }
  return "unknown";
}

const char* HintResultName(TsHintResult result) {
  switch (result) {
    case TS_HINT_IGNORED: return "ignored";
    case TS_HINT_EMULATED: return "emulated";
    case TS_HINT_APPLIED: return "applied";
  }
  return "unknown";
}

const char* CollectiveOpName(TsCollectiveOp op) {
  switch (op) {
    case TS_COLLECTIVE_ALL_REDUCE: return "all_reduce";
    case TS_COLLECTIVE_BROADCAST: return "broadcast";
    case TS_COLLECTIVE_ALL_GATHER: return "all_gather";
    case TS_COLLECTIVE_REDUCE_SCATTER: return "reduce_scatter";
  }
  return "collective";
}

const char* ReduceOpName(TsReduceOp op) {
  switch (op) {
    case TS_REDUCE_SUM: return "sum";
    case TS_REDUCE_PROD: return "prod";
    case TS_REDUCE_MAX: return "max";
    case TS_REDUCE_MIN: return "min";
  }
  return "?";
}

const char* PeerCopyModeName(TsPeerCopyMode mode) {
  switch (mode) {
    case TS_PEER_COPY_NONE: return "none";
    case TS_PEER_COPY_HOST_STAGED: return "host-staged";
    case TS_PEER_COPY_DIRECT: return "direct";
  }
  return "unknown";
}

size_t DataTypeSize(TsDataType dtype) {
  switch (dtype) {
    case TS_DTYPE_F32: case TS_DTYPE_I32: return 4;
    case TS_DTYPE_F64: case TS_DTYPE_I64: return 8;
    case TS_DTYPE_F16: case TS_DTYPE_BF16: return 2;
    case TS_DTYPE_I8: case TS_DTYPE_U8: return 1;
  }
  return 0;
}

const char* DataTypeName(TsDataType dtype) {
  switch (dtype) {
    case TS_DTYPE_F32: return "f32";
    case TS_DTYPE_F64: return "f64";
    case TS_DTYPE_I32: return "i32";
    case TS_DTYPE_I64: return "i64";
    case TS_DTYPE_F16: return "f16";
    case TS_DTYPE_BF16: return "bf16";
    case TS_DTYPE_I8: return "i8";
    case TS_DTYPE_U8: return "u8";
  }
  return "unknown";
}

}  // namespace tessera
