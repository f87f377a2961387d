// CallSite: capture with backtrace(), symbolize with dladdr() on demand.
#include "call_site.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace tessera::detail {

namespace {

std::atomic<uint64_t> g_sequence{0};
std::atomic<uint64_t> g_threads{0};

// Frames whose symbol starts with one of these belong to the validation
// layer (and its dispatch thunks), not to the caller.
bool IsLayerFrame(const char* mangled) {
  if (!mangled) return false;
  return std::strstr(mangled, "ValidationLayer") != nullptr ||
         std::strstr(mangled, "ValidationDispatch") != nullptr ||
         std::strstr(mangled, "CallSite") != nullptr;
}

std::string Demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

std::string BaseName(const char* path) {
  if (!path) return "?";
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

}  // namespace

uint64_t CallingThreadNumber() {
  thread_local uint64_t number = ++g_threads;
  return number;
}

CallSite CallSite::Capture(const char* entry, int skip) {
  CallSite site;
  site.entry = entry ? entry : "";
  site.sequence = ++g_sequence;
  site.thread = CallingThreadNumber();
  void* raw[kMaxFrames + 8];
  int n = backtrace(raw, kMaxFrames + 8);
  int first = 1 + skip;  // this function
  for (int i = first; i < n && site.num_frames < kMaxFrames; ++i)
    site.frames[site.num_frames++] = raw[i];
  return site;
}

std::string CallSite::Describe(int max_frames) const {
  std::string out = std::string(*entry ? entry : "call") + " (call #" +
                    std::to_string(sequence) + ", thread " +
                    std::to_string(thread) + ")";
  int shown = 0;
  for (int i = 0; i < num_frames && shown < max_frames; ++i) {
    // A return address points after the call: look up the byte before it.
    void* pc = static_cast<char*>(frames[i]) - 1;
    Dl_info info{};
    if (dladdr(pc, &info) == 0) continue;
    if (IsLayerFrame(info.dli_sname)) continue;
    std::string frame;
    if (info.dli_sname) {
      frame = Demangle(info.dli_sname);
      // Parameter lists make reports long; the name says enough.
      if (size_t paren = frame.find('('); paren != std::string::npos)
        frame = frame.substr(0, paren) + "()";
    } else {
      char offset[32];
      std::snprintf(offset, sizeof offset, "+0x%zx",
                    static_cast<size_t>(static_cast<char*>(pc) -
                                        static_cast<char*>(info.dli_fbase)));
      frame = BaseName(info.dli_fname) + offset;
    }
    out += (shown == 0 ? " at " : " <- ") + frame;
    ++shown;
  }
  return out;
}

}  // namespace tessera::detail
