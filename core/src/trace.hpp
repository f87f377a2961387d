// TESSERA_TRACE=path.json: a Chrome trace event file (Perfetto,
// chrome://tracing) of what the runtime did.  Implemented in the core, so it
// is the same on every backend (docs/runtime.md, "Tracing").
//
//  - Tracer: one per output path, process-wide.  Events are kept in memory
//    (a mutex-guarded vector, capped at TESSERA_TRACE_MAX_EVENTS) and the
//    whole file is rewritten (to path.tmp, then renamed: never half a file)
//    when a Runtime that traces into it is destroyed, and at exit.
//  - RuntimeTrace: what one Runtime adds: the host API slices (pid 1, one
//    track per host thread), one track per stream (a process per device)
//    with its kernels, copies, event records and waits timed by the plugin's
//    events (one timing event after each operation, read with
//    Event_ElapsedTime against one anchor event per runtime), and the
//    flow arrows from an event's record to the waits on it.
//
// When tracing is off a Runtime's `trace` is null and every hook is one
// pointer test.
#ifndef TESSERA_CORE_TRACE_HPP_
#define TESSERA_CORE_TRACE_HPP_

#include <cstdint>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/plugin.h"

namespace tessera::detail {

class PluginLibrary;
struct DeviceImpl;
struct StreamImpl;

uint64_t TraceNowNs();  // steady clock, nanoseconds

// How a stream operation's slice was timed (its args.clock).
enum class TraceClock : uint8_t {
  kNone,            // not a stream operation: no args.clock
  kDevice,          // the plugin's timing events
  kDeviceTimestamps,  // the plugin's Stream_WriteTimestamp
  kHostForced,      // TESSERA_TRACE_CLOCK=host
  kHostCapture,     // a stream capture was in progress
  kHostNoEvents,    // the plugin has no timing events
  kHostEventsFailed,
};
const char* TraceClockText(TraceClock clock);

// One slice or instant, as kept until the file is written.  Plain data, no
// allocation: names that are not string literals are interned by the
// Tracer (Intern), and the rare free-form args go to a side table, so the
// hot path (a launch, a synchronize) copies 96 bytes under one lock and
// formats nothing.
struct TraceEvent {
  uint64_t ts_ns = 0;
  uint64_t dur_ns = 0;
  const char* cat = "api";            // static strings only
  const char* static_name = nullptr;  // the name, when it is a static string
  uint32_t name_id = 0;    // else this interned one (Tracer::Intern)
  uint32_t kernel_id = 0;  // args.kernel (interned); 0: none
  uint32_t args_id = 0;    // set by the Tracer from the args it is given
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t dims[7] = {};   // grid x y z, group x y z, number of arguments
  char ph = 'X';           // X (complete), i (instant)
  TraceClock clock = TraceClock::kNone;
  bool has_dims = false;
};

class Tracer {
 public:
  // The tracer writing `path` (created on first use; shared afterwards).
  static std::shared_ptr<Tracer> Open(const std::string& path);
  // The tracer named by TESSERA_TRACE (opened on first call), else the last
  // one opened; null when none.  For work done outside a Runtime (compiles).
  static Tracer* Active();

  explicit Tracer(std::string path);
  const std::string& path() const { return path_; }

  // `args`: the inside of a JSON object ("\"a\":1,\"b\":\"x\""), or empty.
  void Add(const TraceEvent& event, std::string args = {});  // dropped (and counted) past the cap
  // An id for `text` in TraceEvent::name_id / kernel_id (never 0).
  uint32_t Intern(const std::string& text);
  // The same for a kernel's name, remembered by its plugin handle so a
  // launch does not hash the name (checked against it: a handle can be
  // reused by another kernel once destroyed).
  uint32_t InternKernel(const void* key, const std::string& name);
  // Metadata: process and thread names (not counted against the cap).
  void NameProcess(uint32_t pid, const std::string& name, int sort_index);
  void NameThread(uint32_t pid, uint32_t tid, const std::string& name);
  // A flow arrow from the slice of operation `from` to that of `to`
  // (operation ids from NewOpId; an arrow whose ends were dropped is left
  // out).
  void AddFlow(uint64_t from, uint64_t to);
  // A stream operation's slice; `flow_end`: an arrow may start or end at it.
  void AddOpSlice(uint64_t op_id, const TraceEvent& event, bool flow_end,
                  std::string args = {});
  uint64_t NewOpId() { return next_op_.fetch_add(1, std::memory_order_relaxed); }
  uint32_t NewPid();
  // The host track of the calling thread (pid 1, its Linux thread id),
  // named on first use.
  uint32_t HostThreadTrack();

  // Rewrites the whole file.  Safe to call any number of times.
  void Write();

 private:
  void PushLocked(const TraceEvent& event, std::string& args);  // mu_ held, below the cap
  const TraceEvent& EventAt(size_t i) const {
    return chunks_[i / kChunk][i % kChunk];
  }
  uint32_t InternLocked(const std::string& text);
  const std::string& NameOf(const TraceEvent& e) const;

  static constexpr size_t kChunk = 4096;  // events per chunk (384 KiB)
  std::string path_;
  std::mutex mu_;
  // The events, in chunks that never move: appending is a copy, with one
  // allocation per kChunk events.
  std::vector<std::unique_ptr<TraceEvent[]>> chunks_;
  size_t num_events_ = 0;
  std::vector<std::string> args_;                      // args_id - 1
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::vector<const std::string*> names_;              // name_id - 1 (keys of name_ids_)
  std::unordered_map<const void*, uint32_t> kernel_ids_;
  std::vector<std::string> metadata_;  // complete JSON objects
  std::vector<std::pair<uint64_t, uint64_t>> flows_;
  std::unordered_map<uint64_t, size_t> op_slices_;  // op id -> events_ index
  std::vector<uint32_t> named_threads_;
  size_t max_events_;
  uint64_t dropped_ = 0;
  bool written_ = false;
  uint64_t written_version_ = 0;  // what Write last wrote (a count of items)
  std::atomic<uint64_t> next_op_{1};
  uint32_t next_pid_ = 2;
};

// Per Runtime.  Thread-safe.  Must be destroyed before Client_Destroy (it
// destroys the plugin events it used).
class RuntimeTrace {
 public:
  RuntimeTrace(std::shared_ptr<Tracer> tracer, const PluginLibrary* lib);
  ~RuntimeTrace();  // waits for the pending operations, writes the file
  Tracer& tracer() { return *tracer_; }

  // A stream operation: Begin before the plugin call that enqueues it, End
  // after (ok: the plugin accepted it).  Returns the operation id.
  struct Op {
    uint64_t id = 0;
    uint64_t submit_ns = 0;
    // With `slot` asked for and the plugin's timestamps in use: where the
    // operation's own call (TsKernel_Launch_Args.completion_ns) has the
    // plugin write its completion time; EndOp takes it over.
    uint64_t* slot = nullptr;
  };
  // `static_name` (a string literal) or `name_id` (Tracer::Intern) names
  // the slice; `args` as in Tracer::Add.
  Op BeginOp(const StreamImpl& stream, bool slot = false);
  uint64_t EndOp(Op op, const StreamImpl& stream, const char* static_name,
                 uint32_t name_id, const char* cat, std::string args, bool ok,
                 const uint32_t* dims = nullptr);

  // Event edges: the record operation of a user event, and a wait on it.
  void NoteRecord(TsEvent* event, uint64_t op_id);
  void NoteWait(TsEvent* event, uint64_t op_id);
  void EventDestroyed(TsEvent* event);

  // The stream is going: its pending operations are resolved first.
  void StreamDestroyed(TsStream* stream);
  void CaptureBegan();
  void CaptureEnded();

  // Turns completed operations into slices (wait: all of them, blocking).
  // `synchronized`: a stream just synchronized, whose operations are known
  // to be complete (no Event_Query for them).
  void Resolve(bool wait, TsStream* synchronized = nullptr);

 private:
  struct Track {
    uint32_t pid = 0, tid = 0;
    uint64_t last_end_ns = 0;
  };
  struct Pending {
    uint64_t id;
    TsStream* stream;
    const char* static_name;
    uint32_t name_id;
    const char* cat;
    std::string args;  // empty (no allocation) for launches
    uint64_t submit_ns, return_ns;
    TsEvent* after;  // a timing event recorded after the operation, or
    uint64_t* slot;  // the Stream_WriteTimestamp written after it
    TsDevice* device;
    bool has_dims;
    uint32_t dims[7];
  };
  Track& TrackOf(const StreamImpl& stream);  // mu_ held
  uint64_t TrackBits(const StreamImpl& stream);  // mu_ not held: (pid << 32) | tid
  TsEvent* TakeEvent(TsDevice* device);               // mu_ held
  void GiveEvent(TsDevice* device, TsEvent* event);   // mu_ held
  bool Record(TsEvent* event, TsStream* stream);
  uint64_t* TakeSlot();  // mu_ held; set to 0
  bool WriteTimestamp(uint64_t* slot, TsStream* stream);
  bool SlotWritten(const Pending& p, bool wait);  // mu_ held
  bool Complete(TsEvent* event, bool wait);
  bool ElapsedNs(TsEvent* start, TsEvent* end, uint64_t* ns);
  void EmitHost(Pending& p, Track& track, TraceClock clock);  // mu_ held
  // One stream operation's slice [start, end) on track (pid, tid); `dims`
  // may be null.  Every slice of an operation is made here.
  void EmitSlice(uint64_t id, const char* cat, const char* static_name, uint32_t name_id,
                 const uint32_t* dims, uint32_t pid, uint32_t tid, uint64_t start,
                 uint64_t end, TraceClock clock, std::string&& args);
  void ResolveLocked(bool wait, TsStream* only, TsStream* synchronized = nullptr);
  void DestroyEvent(TsEvent* event);

  std::shared_ptr<Tracer> tracer_;
  const PluginLibrary* lib_;
  // The plugin has the event entry points we need (cleared if the anchor
  // cannot be recorded).
  std::atomic<bool> timing_{false};
  // The plugin has Stream_WriteTimestamp (ABI 1.3): operations are timed
  // with it instead of events (cleared if it fails).
  std::atomic<bool> stamps_{false};
  // Timestamp slots: a deque, so they never move while the plugin may
  // write them; reused through free_slots_.
  std::deque<uint64_t> slots_;
  std::vector<uint64_t*> free_slots_;
  bool host_clock_ = false;  // TESSERA_TRACE_CLOCK=host
  size_t resolve_at_ = 512;  // pending_ size that triggers ResolveLocked
  std::mutex mu_;
  std::unordered_map<TsStream*, Track> tracks_;
  std::unordered_map<const DeviceImpl*, uint32_t> device_pids_;
  std::unordered_map<TsEvent*, uint64_t> last_record_;
  std::vector<Pending> pending_;
  std::unordered_map<TsDevice*, std::vector<TsEvent*>> free_events_;  // per device
  std::atomic<int> capturing_{0};
  TsEvent* anchor_ = nullptr;  // the runtime's clock anchor (BeginOp)
  uint64_t anchor_ns_ = 0;
  std::atomic<bool> anchor_tried_{false};
};

// The host slice of one API call: from construction to destruction, on the
// calling thread's track.  Does nothing when `trace` is null.
class ApiScope {
 public:
  ApiScope(RuntimeTrace* trace, const char* name)
      : trace_(trace), name_(name), start_(trace ? TraceNowNs() : 0) {}
  ApiScope(Tracer* tracer, const char* name, const char* cat = "api")
      : tracer_(tracer), name_(name), cat_(cat), start_(tracer ? TraceNowNs() : 0) {}
  ~ApiScope();
  bool on() const { return trace_ != nullptr || tracer_ != nullptr; }
  std::string args;  // set only when on()
  uint32_t kernel_id = 0;  // args.kernel (Tracer::InternKernel); 0: none

  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;

 private:
  RuntimeTrace* trace_ = nullptr;
  Tracer* tracer_ = nullptr;
  const char* name_;
  const char* cat_ = "api";
  uint64_t start_;
};

// JSON helpers for `args`.
std::string TraceQuote(const std::string& text);
std::string TraceArg(const char* key, const std::string& value);  // "key":"value"
std::string TraceArg(const char* key, uint64_t value);            // "key":N

}  // namespace tessera::detail

#endif  // TESSERA_CORE_TRACE_HPP_
