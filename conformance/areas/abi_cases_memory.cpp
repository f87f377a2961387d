// The "abi" area's invalid-argument cases of buffers, host memory, copies
// and the unified-memory hints (abi_util.hpp).  The buffers of Env are
// 1 KiB; a range past 1024 bytes is OUT_OF_RANGE, also when offset + size
// wraps past 2^64.
#include <cstring>

#include "areas/abi_util.hpp"

namespace tessera::cts::abi {
namespace {

using A_Alloc = TsBuffer_Allocate_Args;
using A_Free = TsBuffer_Free_Args;
using A_Addr = TsBuffer_GetDeviceAddress_Args;
using A_Import = TsBuffer_Import_Args;
using A_HAlloc = TsHost_Allocate_Args;
using A_HFree = TsHost_Free_Args;
using A_HReg = TsHost_Register_Args;
using A_HUnreg = TsHost_Unregister_Args;
using A_Copy = TsMemcpy_Args;
using A_Set = TsMemset_Args;
using A_Pre = TsBuffer_Prefetch_Args;
using A_Adv = TsBuffer_Advise_Args;

constexpr uint64_t kBuf = 1024;  // Env's buffers

// Host memory of the case (pageable), kept until it ends.
void* HostBlock(Env& env, size_t size = 4096) {
  return env.Keep(std::vector<unsigned char>(size))->data();
}

// A copy host -> buffer(); `stream` asynchronous (the host side pinned).
void HostToBuffer(Env& env, A_Copy& a) {
  a.dst.buffer = env.buffer();
  a.src.host = env.pinned();
  a.size = 64;
}
void BufferToHost(Env& env, A_Copy& a) {
  a.src.buffer = env.buffer();
  a.dst.host = env.pinned();
  a.size = 64;
}

}  // namespace

void AddMemoryCases(CaseList* out) {
  {
    EntryCases<A_Alloc> c(out, "Buffer_Allocate", &TsPluginApi::Buffer_Allocate,
                          TS_BUFFER_ALLOCATE_ARGS_STRUCT_SIZE, [](Env& env, A_Alloc& a) {
                            a.device = env.device();
                            a.size = 256;
                            a.kind = TS_BUFFER_DEVICE;
                          });
    c.Header();
    c.Handle("Device", &A_Alloc::device);
    c.Add("SizeZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Alloc& a) { a.size = 0; });
    c.Add("KindUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Alloc& a) { a.kind = static_cast<TsBufferKind>(7); });
    c.Add("KindNegative", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Alloc& a) { a.kind = static_cast<TsBufferKind>(-1); });
    c.Add("AlignmentNotPowerOfTwo", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Alloc& a) { a.alignment = 48; });
    c.Add("SizeMax", TS_ERROR_RESOURCE_EXHAUSTED, [](Env&, A_Alloc& a) { a.size = UINT64_MAX; });
    c.Add("SizeAboveMemory", TS_ERROR_RESOURCE_EXHAUSTED, [](Env& env, A_Alloc& a) {
      a.size = env.info().total_memory > (UINT64_MAX >> 2) ? UINT64_MAX - 4095
                                                           : env.info().total_memory * 4;
    });
  }
  {
    EntryCases<A_Free> c(out, "Buffer_Free", &TsPluginApi::Buffer_Free,
                         TS_BUFFER_FREE_ARGS_STRUCT_SIZE,
                         [](Env& env, A_Free& a) { a.buffer = env.buffer(); });
    c.Header();
    c.Handle("Buffer", &A_Free::buffer);
  }
  {
    // MINOR 6, optional: "unsupported: entry point" where the plugin has none.
    EntryCases<A_Addr> c(out, "Buffer_GetDeviceAddress", &TsPluginApi::Buffer_GetDeviceAddress,
                         TS_BUFFER_GETDEVICEADDRESS_ARGS_STRUCT_SIZE,
                         [](Env& env, A_Addr& a) { a.buffer = env.buffer(); });
    c.Header();
    c.Handle("Buffer", &A_Addr::buffer);
  }
  {
    // MINOR 6, optional.  Every case is refused before the address is used
    // (it is an address nothing was allocated at).
    EntryCases<A_Import> c(out, "Buffer_Import", &TsPluginApi::Buffer_Import, TS_BUFFER_IMPORT_ARGS_STRUCT_SIZE,
                           [](Env& env, A_Import& a) {
                             a.device = env.device();
                             a.address = 0x10000;
                             a.size = 256;
                             a.kind = TS_BUFFER_DEVICE;
                           });
    c.Header();
    c.Handle("Device", &A_Import::device);
    c.Add("AddressZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Import& a) { a.address = 0; });
    c.Add("SizeZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Import& a) { a.size = 0; });
    c.Add("RangeWraps", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Import& a) { a.address = UINT64_MAX - 15; });
    c.Add("KindUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Import& a) { a.kind = static_cast<TsBufferKind>(7); });
  }
  {
    EntryCases<A_HAlloc> c(out, "Host_Allocate", &TsPluginApi::Host_Allocate,
                           TS_HOST_ALLOCATE_ARGS_STRUCT_SIZE, [](Env& env, A_HAlloc& a) {
                             a.client = env.client();
                             a.size = 4096;
                           });
    c.Header();
    c.Handle("Client", &A_HAlloc::client);
    c.Add("SizeZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_HAlloc& a) { a.size = 0; });
    c.Add("SizeMax", TS_ERROR_RESOURCE_EXHAUSTED, [](Env&, A_HAlloc& a) { a.size = UINT64_MAX; });
  }
  {
    EntryCases<A_HFree> c(out, "Host_Free", &TsPluginApi::Host_Free, TS_HOST_FREE_ARGS_STRUCT_SIZE,
                          [](Env& env, A_HFree& a) {
                            a.client = env.client();
                            a.pointer = env.pinned();
                          });
    c.Header();
    c.Handle("Client", &A_HFree::client);
    c.Add("PointerNotAllocated", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_HFree& a) { a.pointer = HostBlock(env); });
    c.Add("PointerInsideAllocation", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_HFree& a) {
      a.pointer = static_cast<char*>(a.pointer) + 64;
    });
    c.Add("PointerOfOtherClient", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_HFree& a) { a.client = env.other_client(); });
  }
  {
    EntryCases<A_HReg> c(out, "Host_Register", &TsPluginApi::Host_Register,
                         TS_HOST_REGISTER_ARGS_STRUCT_SIZE, [](Env& env, A_HReg& a) {
                           a.client = env.client();
                           a.pointer = HostBlock(env);
                           a.size = 4096;
                         });
    c.Header();
    c.Handle("Client", &A_HReg::client);
    c.Add("PointerNull", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_HReg& a) { a.pointer = nullptr; });
    c.Add("SizeZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_HReg& a) { a.size = 0; });
  }
  {
    EntryCases<A_HUnreg> c(out, "Host_Unregister", &TsPluginApi::Host_Unregister,
                           TS_HOST_UNREGISTER_ARGS_STRUCT_SIZE, [](Env& env, A_HUnreg& a) {
                             a.client = env.client();
                             a.pointer = HostBlock(env);
                           });
    c.Header();
    c.Handle("Client", &A_HUnreg::client);
    c.Add("PointerNull", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_HUnreg& a) { a.pointer = nullptr; });
    c.Add("PointerNotRegistered", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_HUnreg&) {});
  }
  {
    // Valid: 64 bytes from pinned host memory into buffer(), synchronous.
    EntryCases<A_Copy> c(out, "Memcpy", &TsPluginApi::Memcpy, TS_MEMCPY_ARGS_STRUCT_SIZE,
                         HostToBuffer);
    c.Header();
    c.Add("SizeZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Copy& a) { a.size = 0; });
    c.Add("DstBufferForeign", TS_ERROR_INVALID_HANDLE,
          [](Env& env, A_Copy& a) { a.dst.buffer = static_cast<TsBuffer*>(env.foreign()); });
    c.Add("DstBufferWrongType", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Copy& a) {
      a.dst.buffer = EntryCases<A_Copy>::WrongType<TsBuffer>(env);
    });
    c.Add("SrcBufferForeign", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Copy& a) {
      BufferToHost(env, a = A_Copy{sizeof(A_Copy)});
      a.src.buffer = static_cast<TsBuffer*>(env.foreign());
    });
    c.Add("SrcBufferWrongType", TS_ERROR_INVALID_HANDLE, [](Env& env, A_Copy& a) {
      BufferToHost(env, a = A_Copy{sizeof(A_Copy)});
      a.src.buffer = EntryCases<A_Copy>::WrongType<TsBuffer>(env);
    });
    c.Add("DstBothBufferAndHost", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_Copy& a) { a.dst.host = HostBlock(env); });
    c.Add("DstNeitherBufferNorHost", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Copy& a) { a.dst.buffer = nullptr; });
    c.Add("SrcNeitherBufferNorHost", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Copy& a) { a.src.host = nullptr; });
    c.Add("DstPastTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Copy& a) { a.dst.offset = kBuf - 63; });
    c.Add("DstOffsetAtTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Copy& a) { a.dst.offset = kBuf; });
    c.Add("DstOffsetWraps", TS_ERROR_OUT_OF_RANGE,
          [](Env&, A_Copy& a) { a.dst.offset = UINT64_MAX - 31; });
    c.Add("SizePastTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env& env, A_Copy& a) {
      a.src.host = HostBlock(env, 2 * kBuf);
      a.size = kBuf + 1;
    });
    c.Add("SrcPastTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env& env, A_Copy& a) {
      BufferToHost(env, a = A_Copy{sizeof(A_Copy)});
      a.src.offset = kBuf - 1;
    });
    c.Add("SrcOffsetWraps", TS_ERROR_OUT_OF_RANGE, [](Env& env, A_Copy& a) {
      BufferToHost(env, a = A_Copy{sizeof(A_Copy)});
      a.src.offset = UINT64_MAX;
    });
    c.Add("BufferToBufferOverlapPastTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env& env, A_Copy& a) {
      a.src.host = nullptr;
      a.src.buffer = env.buffer();
      a.src.offset = 512;
      a.size = 600;
    });
    c.OptionalHandle("Stream", &A_Copy::stream);
    c.Add("StreamOfOtherClient", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_Copy& a) { a.stream = env.other_stream(); });
    c.Add("BuffersOfTwoClients", TS_ERROR_INVALID_ARGUMENT, [](Env& env, A_Copy& a) {
      a.src.host = nullptr;
      a.src.buffer = env.other_buffer();
    });
  }
  {
    EntryCases<A_Set> c(out, "Memset", &TsPluginApi::Memset, TS_MEMSET_ARGS_STRUCT_SIZE,
                        [](Env& env, A_Set& a) {
                          a.buffer = env.buffer();
                          a.size = 64;
                          a.value = 7;
                        });
    c.Header();
    c.Handle("Buffer", &A_Set::buffer);
    c.Add("SizeZero", TS_ERROR_INVALID_ARGUMENT, [](Env&, A_Set& a) { a.size = 0; });
    c.Add("PastTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Set& a) { a.offset = kBuf - 1; });
    c.Add("OffsetAtTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Set& a) { a.offset = kBuf; });
    c.Add("SizePastTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Set& a) { a.size = kBuf + 1; });
    c.Add("OffsetWraps", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Set& a) { a.offset = UINT64_MAX - 31; });
    c.Add("SizeWraps", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Set& a) {
      a.offset = 1;
      a.size = UINT64_MAX;
    });
    c.OptionalHandle("Stream", &A_Set::stream);
    c.Add("StreamOfOtherClient", TS_ERROR_INVALID_ARGUMENT,
          [](Env& env, A_Set& a) { a.stream = env.other_stream(); });
  }
  {
    EntryCases<A_Pre> c(out, "Buffer_Prefetch", &TsPluginApi::Buffer_Prefetch,
                        TS_BUFFER_PREFETCH_ARGS_STRUCT_SIZE, [](Env& env, A_Pre& a) {
                          a.buffer = env.buffer();
                          a.size = 64;
                          a.target = env.device();
                        });
    c.Header();
    c.Handle("Buffer", &A_Pre::buffer);
    c.Add("PastTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Pre& a) { a.offset = kBuf - 1; });
    c.Add("OffsetWraps", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Pre& a) { a.offset = UINT64_MAX; });
    c.OptionalHandle("Target", &A_Pre::target);
    c.OptionalHandle("Stream", &A_Pre::stream);
  }
  {
    EntryCases<A_Adv> c(out, "Buffer_Advise", &TsPluginApi::Buffer_Advise,
                        TS_BUFFER_ADVISE_ARGS_STRUCT_SIZE, [](Env& env, A_Adv& a) {
                          a.buffer = env.buffer();
                          a.size = 64;
                          a.advice = TS_ADVICE_READ_MOSTLY;
                        });
    c.Header();
    c.Handle("Buffer", &A_Adv::buffer);
    c.Add("AdviceUnknown", TS_ERROR_INVALID_ARGUMENT,
          [](Env&, A_Adv& a) { a.advice = static_cast<TsAdvice>(42); });
    c.Add("PastTheEnd", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Adv& a) { a.offset = kBuf - 1; });
    c.Add("OffsetWraps", TS_ERROR_OUT_OF_RANGE, [](Env&, A_Adv& a) { a.offset = UINT64_MAX; });
    c.OptionalHandle("Device", &A_Adv::device);
  }
}

}  // namespace tessera::cts::abi
