// Where an API call came from, for the validation layer's reports ("created
// at", "destroyed at"): the return addresses of the calling thread's stack,
// captured cheaply (glibc backtrace(), no symbol lookup) and turned into text
// only when a report needs it.
//
// The text names each frame by the symbol the dynamic linker knows (exported
// functions: the C++ API, plugins' entry points, executables linked with
// -rdynamic) and otherwise by module + offset, which `addr2line -e <module>
// <offset>` resolves.  Frames inside libtessera's own validation code are
// skipped.
//
// Thread safety: Capture and Describe are reentrant.
#ifndef TESSERA_CORE_CALL_SITE_HPP_
#define TESSERA_CORE_CALL_SITE_HPP_

#include <cstdint>
#include <string>

namespace tessera::detail {

struct CallSite {
  static constexpr int kMaxFrames = 12;
  void* frames[kMaxFrames] = {};
  int num_frames = 0;
  uint64_t sequence = 0;  // process-wide call number, for ordering
  uint64_t thread = 0;    // a small number per host thread (1, 2, ...)
  const char* entry = ""; // the ABI entry point (static string)

  // The calling thread's stack, minus `skip` innermost frames of the caller.
  static CallSite Capture(const char* entry, int skip = 0);
  // "Buffer_Free (call #12, thread 1) at tessera::Buffer::destroy() <-
  //  my_app+0x1234 <- ..." (at most `max_frames` frames).
  std::string Describe(int max_frames = 4) const;
};

// A small, stable number for the calling thread (1 for the first thread that
// asks, 2 for the next, ...).
uint64_t CallingThreadNumber();

}  // namespace tessera::detail

#endif  // TESSERA_CORE_CALL_SITE_HPP_
