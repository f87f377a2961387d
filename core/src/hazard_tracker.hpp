// The stream hazard detector of the validation layer (docs/runtime.md,
// "Validation"): reports a buffer written on one stream and read or written
// on another with no happens-before edge between the two operations.
//
// Happens-before is tracked with vector clocks, as ThreadSanitizer does for
// threads: each stream has a clock (one counter per stream); an operation on
// stream s ticks s's own counter; an event record snapshots s's clock; a
// wait joins the event's snapshot into the waiting stream's clock; the host
// joins a stream's clock when it synchronizes with it (stream or event
// synchronize, a query that finds it idle, device synchronize), and every
// operation the host issues afterwards starts from the host's clock.  The
// default stream follows DESIGN.md: it waits for all earlier work of its
// device's blocking streams, and their later work waits for it.
//
// Each buffer keeps a short list of its recent accesses (stream, the
// stream's counter, byte range, read or write, what did it).  A new access
// conflicts with a recorded one from another stream when their ranges
// overlap, one of them writes, they are not both atomic (kernels whose only
// use of the buffer is atomic read-modify-writes race benignly), and the
// recorded one does not happen before the new one.  An access that the new one supersedes (same or wider range,
// ordered before it, and a write or a read replaced by a read) is dropped:
// any later conflict with it is also a conflict with the new one.  The list
// is capped (kMaxRecordsPerBuffer, oldest dropped): a hazard against a
// dropped access is missed, never invented.
//
// Not seen: host code touching host-visible memory directly, and work inside
// a kernel.  Thread safety: none; the validation layer holds its lock.
#ifndef TESSERA_CORE_HAZARD_TRACKER_HPP_
#define TESSERA_CORE_HAZARD_TRACKER_HPP_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::detail {

// What touched a buffer, e.g. "Kernel_Launch 'saxpy' argument 2".  Kept in
// parts and turned into text only for a report: the hot path (a launch)
// copies two pointers and a few integers, no string.
struct AccessWhat {
  const char* entry = "";                    // static: "Kernel_Launch", "Memcpy"
  std::shared_ptr<const std::string> name;   // a kernel's name, or null
  int64_t index = -1;                        // argument or rank, -1: none
  const char* role = "";                     // static: "destination", "recv", ...
  uint64_t bytes = 0;                        // copies: their size, 0: none
  bool captured = false;                     // replayed by GraphExec_Launch
  std::string Text() const;
};

class HazardTracker {
 public:
  using StreamId = uint32_t;
  using Clock = std::vector<uint64_t>;  // indexed by StreamId
  static constexpr size_t kMaxRecordsPerBuffer = 64;

  // One buffer access of an operation.  `what` says what touched it
  // ("Kernel_Launch 'saxpy' argument 2").
  struct Access {
    const void* key = nullptr;  // the buffer's handle
    uint64_t begin = 0, end = 0;
    bool write = false;
    // Only atomic read-modify-writes (TS_PARAM_ATOMIC): no hazard against
    // another atomic access, only against plain ones.
    bool atomic = false;
    AccessWhat what;
  };

  // Names a buffer in a report (only called when there is one to make: the
  // name may be costly, e.g. symbolizing where the buffer was created).
  std::function<std::string(const void* key)> describe_buffer;

  // `device` groups streams for the default stream's rule; a non-blocking
  // stream does not synchronize with its device's default stream.
  StreamId AddStream(uint32_t device, bool is_default, bool non_blocking,
                     std::string name);
  const std::string& StreamName(StreamId s) const { return streams_[s].name; }

  // Issues one operation on stream `s` touching `accesses`; returns one
  // message per hazard found (empty: none).
  std::vector<std::string> Operate(StreamId s, const std::vector<Access>& accesses);
  // Several streams take part in one operation that synchronizes them (a
  // collective: every rank's part waits for every rank to arrive).
  std::vector<std::string> OperateJointly(const std::vector<StreamId>& streams,
                                          const std::vector<std::vector<Access>>& accesses);

  Clock Record(StreamId s) const { return streams_[s].clock; }
  void Wait(StreamId s, const Clock& snapshot) { Join(&streams_[s].clock, snapshot); }
  void HostWaitsFor(StreamId s) { Join(&host_, streams_[s].clock); }
  void HostWaitsFor(const Clock& snapshot) { Join(&host_, snapshot); }
  void HostWaitsForDevice(uint32_t device);
  void ForgetBuffer(const void* key) { records_.erase(key); }

 private:
  struct Stream {
    uint32_t device = 0;
    bool is_default = false, non_blocking = false;
    std::string name;
    Clock clock;
  };
  struct AccessRecord {
    StreamId stream = 0;
    uint64_t tick = 0;
    uint64_t begin = 0, end = 0;
    bool write = false;
    bool atomic = false;
    AccessWhat what;
  };

  static void Join(Clock* into, const Clock& from);
  static uint64_t At(const Clock& c, StreamId s) { return s < c.size() ? c[s] : 0; }
  // Joins what must happen before an operation on `s` (host, default-stream
  // rule) and ticks s's counter.
  void BeginOperation(StreamId s);
  void Check(StreamId s, const Access& a, std::vector<std::string>* hazards);

  std::vector<Stream> streams_;
  Clock host_;
  // Per device: the clock of its default stream's last operation (blocking
  // streams' later work waits for it).
  std::unordered_map<uint32_t, Clock> default_done_;
  std::unordered_map<const void*, std::vector<AccessRecord>> records_;
};

}  // namespace tessera::detail

#endif  // TESSERA_CORE_HAZARD_TRACKER_HPP_
