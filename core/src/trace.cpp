// The Chrome trace of TESSERA_TRACE (trace.hpp, docs/runtime.md "Tracing").
#include "trace.hpp"

#include "tessera/trace.hpp"
#include "tessera/output_file.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "log.hpp"
#include "plugin_library.hpp"
#include "runtime_impl.hpp"

namespace tessera::detail {

namespace {

constexpr uint32_t kHostPid = 1;
constexpr size_t kDefaultMaxEvents = 1000000;
// Pending stream operations resolved without waiting once this many queue up.
constexpr size_t kResolveBatch = 512;
constexpr size_t kMaxPending = 65536;

size_t MaxEventsFromEnv() {
  const char* env = std::getenv("TESSERA_TRACE_MAX_EVENTS");
  if (!env || !*env) return kDefaultMaxEvents;
  char* tail = nullptr;
  errno = 0;
  // strtoull takes "-1" as 2^64 - 1 and clamps overflow to it: both are
  // refused, as is a limit past what a trace can hold in memory.
  unsigned long long v = std::strtoull(env, &tail, 10);
  if (*tail != 0 || v == 0 || errno == ERANGE || env[0] == '-' || v > (1ull << 32)) {
    TESSERA_LOG(kWarning, std::string("TESSERA_TRACE_MAX_EVENTS=") + env +
                              " is not a number of events from 1 to 2^32; using " +
                              std::to_string(kDefaultMaxEvents));
    return kDefaultMaxEvents;
  }
  return static_cast<size_t>(v);
}

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Tracer>> tracers;  // live until exit
  Tracer* last = nullptr;
  Tracer* env = nullptr;
  // What Active() returns (env, else last), once TESSERA_TRACE was read.
  std::atomic<bool> env_checked{false};
  std::atomic<Tracer*> active{nullptr};
};

Registry& GetRegistry() {
  // Leaked on purpose: written from atexit, after static destructors may
  // have run.
  static Registry* registry = new Registry;
  return *registry;
}

void WriteAllAtExit() {
  Registry& r = GetRegistry();
  std::vector<std::shared_ptr<Tracer>> all;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto& [path, t] : r.tracers) all.push_back(t);
  }
  for (auto& t : all) t->Write();
}

void AppendTs(std::string* out, uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03u", ns / 1000,
                static_cast<unsigned>(ns % 1000));
  *out += buf;
}

}  // namespace

uint64_t TraceNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::string TraceQuote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string TraceArg(const char* key, const std::string& value) {
  return TraceQuote(key) + ":" + TraceQuote(value);
}
std::string TraceArg(const char* key, uint64_t value) {
  return TraceQuote(key) + ":" + std::to_string(value);
}

// ------------------------------------------------------------------ Tracer

std::shared_ptr<Tracer> Tracer::Open(const std::string& path) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.tracers.find(path);
  std::shared_ptr<Tracer> tracer;
  if (it != r.tracers.end()) {
    tracer = it->second;
  } else {
    if (r.tracers.empty()) std::atexit(WriteAllAtExit);
    tracer = std::make_shared<Tracer>(path);
    r.tracers[path] = tracer;
    TESSERA_LOG(kDebug, "tracing to " + path);
  }
  r.last = tracer.get();
  r.active.store(r.env ? r.env : r.last, std::memory_order_release);
  return tracer;
}

Tracer* Tracer::Active() {
  Registry& r = GetRegistry();
  if (r.env_checked.load(std::memory_order_acquire))
    return r.active.load(std::memory_order_acquire);
  const char* env = std::getenv("TESSERA_TRACE");
  std::shared_ptr<Tracer> t;
  if (env && *env) t = Open(env);
  std::lock_guard<std::mutex> lock(r.mu);
  if (t) r.env = t.get();
  r.active.store(r.env ? r.env : r.last, std::memory_order_release);
  r.env_checked.store(true, std::memory_order_release);
  return r.active.load(std::memory_order_acquire);
}

Tracer::Tracer(std::string path)
    : path_(std::move(path)), max_events_(MaxEventsFromEnv()) {
  NameProcess(kHostPid, "tessera host (pid " + std::to_string(::getpid()) + ")",
              0);
}

const char* TraceClockText(TraceClock clock) {
  switch (clock) {
    case TraceClock::kNone: return nullptr;
    case TraceClock::kDevice: return "device (plugin events)";
    case TraceClock::kDeviceTimestamps: return "device (plugin timestamps)";
    case TraceClock::kHostForced: return "host enqueue (TESSERA_TRACE_CLOCK=host)";
    case TraceClock::kHostCapture: return "host enqueue (stream capture)";
    case TraceClock::kHostNoEvents: return "host enqueue (the plugin has no timing events)";
    case TraceClock::kHostEventsFailed:
      return "host enqueue (the plugin's timing failed)";
  }
  return nullptr;
}

void Tracer::PushLocked(const TraceEvent& event, std::string& args) {
  if (num_events_ % kChunk == 0 && num_events_ / kChunk == chunks_.size())
    chunks_.emplace_back(new TraceEvent[kChunk]);
  TraceEvent& slot = chunks_[num_events_ / kChunk][num_events_ % kChunk];
  slot = event;
  if (!args.empty()) {
    args_.push_back(std::move(args));
    slot.args_id = static_cast<uint32_t>(args_.size());
  }
  ++num_events_;
}

void Tracer::Add(const TraceEvent& event, std::string args) {
  std::lock_guard<std::mutex> lock(mu_);
  if (num_events_ >= max_events_) {
    ++dropped_;
    return;
  }
  PushLocked(event, args);
}

void Tracer::AddOpSlice(uint64_t op_id, const TraceEvent& event, bool flow_end,
                        std::string args) {
  std::lock_guard<std::mutex> lock(mu_);
  if (num_events_ >= max_events_) {
    ++dropped_;
    return;
  }
  if (flow_end) op_slices_[op_id] = num_events_;
  PushLocked(event, args);
}

uint32_t Tracer::InternLocked(const std::string& text) {
  auto [it, added] =
      name_ids_.emplace(text, static_cast<uint32_t>(names_.size() + 1));
  if (added) names_.push_back(&it->first);
  return it->second;
}

uint32_t Tracer::Intern(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  return InternLocked(text);
}

uint32_t Tracer::InternKernel(const void* key, const std::string& name) {
  // The last kernel this thread launched, without the lock: a loop of
  // launches of one kernel neither hashes nor locks.  The name is compared,
  // so a handle reused by another kernel is not mistaken for it (interned
  // strings never move).
  thread_local struct {
    const Tracer* tracer = nullptr;
    const void* key = nullptr;
    const std::string* name = nullptr;
    uint32_t id = 0;
  } last;
  if (last.tracer == this && last.key == key && *last.name == name) return last.id;
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t& id = kernel_ids_[key];
  if (id == 0 || *names_[id - 1] != name) id = InternLocked(name);
  last = {this, key, names_[id - 1], id};
  return id;
}

const std::string& Tracer::NameOf(const TraceEvent& e) const {
  static const std::string kNone;
  return e.name_id ? *names_[e.name_id - 1] : kNone;
}

void Tracer::AddFlow(uint64_t from, uint64_t to) {
  std::lock_guard<std::mutex> lock(mu_);
  if (flows_.size() >= max_events_) {
    ++dropped_;
    return;
  }
  flows_.emplace_back(from, to);
}

uint32_t Tracer::NewPid() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_pid_++;
}

void Tracer::NameProcess(uint32_t pid, const std::string& name,
                         int sort_index) {
  std::lock_guard<std::mutex> lock(mu_);
  metadata_.push_back("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" +
                      std::to_string(pid) + ",\"tid\":0,\"args\":{" +
                      TraceArg("name", name) + "}}");
  metadata_.push_back(
      "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" +
      std::to_string(pid) + ",\"tid\":0,\"args\":{\"sort_index\":" +
      std::to_string(sort_index) + "}}");
}

void Tracer::NameThread(uint32_t pid, uint32_t tid, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  metadata_.push_back("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" +
                      std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
                      ",\"args\":{" + TraceArg("name", name) + "}}");
}

uint32_t Tracer::HostThreadTrack() {
  // One thread_local (one TLS lookup in a shared library).
  thread_local struct {
    uint32_t tid = 0;
    const Tracer* named_for = nullptr;
  } self;
  if (self.named_for == this) return self.tid;
  if (self.tid == 0) self.tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  const uint32_t tid = self.tid;
  {
    self.named_for = this;
    bool known;
    {
      std::lock_guard<std::mutex> lock(mu_);
      known = std::find(named_threads_.begin(), named_threads_.end(), tid) !=
              named_threads_.end();
      if (!known) named_threads_.push_back(tid);
    }
    if (!known)
      NameThread(kHostPid, tid,
                 tid == static_cast<uint32_t>(::getpid())
                     ? "main thread (" + std::to_string(tid) + ")"
                     : "thread " + std::to_string(tid));
  }
  return tid;
}

void Tracer::Write() {
  std::string out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Nothing new since the last write (the runtime wrote it, now exit()):
    // leave the file alone.
    const uint64_t version =
        num_events_ + metadata_.size() + flows_.size() + dropped_;
    if (written_ && version == written_version_) return;
    written_ = true;
    written_version_ = version;
    out.reserve(128 * (num_events_ + metadata_.size()) + 256);
    out += "{\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&] {
      if (!first) out += ",\n";
      first = false;
    };
    for (const std::string& m : metadata_) {
      sep();
      out += m;
    }
    for (size_t i = 0; i < num_events_; ++i) {
      const TraceEvent& e = EventAt(i);
      sep();
      out += "{\"ph\":\"";
      out += e.ph;
      out += "\",\"cat\":\"";
      out += e.cat;
      out += "\",\"name\":";
      out += TraceQuote(e.static_name ? std::string(e.static_name) : NameOf(e));
      out += ",\"pid\":" + std::to_string(e.pid) +
             ",\"tid\":" + std::to_string(e.tid) + ",\"ts\":";
      AppendTs(&out, e.ts_ns);
      if (e.ph == 'X') {
        out += ",\"dur\":";
        AppendTs(&out, e.dur_ns);
      } else if (e.ph == 'i') {
        out += ",\"s\":\"t\"";
      }
      std::string args = e.args_id ? args_[e.args_id - 1] : std::string();
      auto add = [&args](const std::string& item) {
        if (!args.empty()) args += ",";
        args += item;
      };
      if (e.kernel_id) add(TraceArg("kernel", *names_[e.kernel_id - 1]));
      if (e.has_dims) {
        char dims[160];
        std::snprintf(dims, sizeof dims,
                      "\"grid\":[%u,%u,%u],\"group_size\":[%u,%u,%u],\"args\":%u",
                      e.dims[0], e.dims[1], e.dims[2], e.dims[3], e.dims[4],
                      e.dims[5], e.dims[6]);
        add(dims);
      }
      if (const char* clock = TraceClockText(e.clock))
        add(std::string("\"clock\":\"") + clock + "\"");
      if (!args.empty()) out += ",\"args\":{" + args + "}";
      out += "}";
    }
    // Flow arrows: "s" inside the slice of the record, "f" bound to the
    // slice of the wait ("bp":"e": the enclosing slice).
    uint64_t flow_id = 1;
    for (auto [from, to] : flows_) {
      auto a = op_slices_.find(from), b = op_slices_.find(to);
      if (a == op_slices_.end() || b == op_slices_.end()) continue;
      const TraceEvent& s = EventAt(a->second);
      const TraceEvent& f = EventAt(b->second);
      std::string id = std::to_string(flow_id++);
      sep();
      out += "{\"ph\":\"s\",\"cat\":\"event\",\"name\":\"event\",\"id\":" + id +
             ",\"pid\":" + std::to_string(s.pid) +
             ",\"tid\":" + std::to_string(s.tid) + ",\"ts\":";
      AppendTs(&out, s.ts_ns);
      out += "}";
      sep();
      out += "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"event\",\"name\":\"event\",\"id\":" +
             id + ",\"pid\":" + std::to_string(f.pid) +
             ",\"tid\":" + std::to_string(f.tid) + ",\"ts\":";
      AppendTs(&out, f.ts_ns + f.dur_ns);
      out += "}";
    }
    out += "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{" +
           TraceArg("producer", "tessera") + "," +
           TraceArg("max_events", max_events_) + "," +
           TraceArg("dropped_events", dropped_) + "}}\n";
  }
  // Atomic for a regular file; a device or FIFO is written in place.
  if (Status st = WriteOutputFile(path_, out); !st.ok())
    TESSERA_LOG(kWarning, "TESSERA_TRACE: cannot write the trace: " + st.message());
}

// ---------------------------------------------------------------- ApiScope

ApiScope::~ApiScope() {
  Tracer* t = trace_ ? &trace_->tracer() : tracer_;
  if (!t) return;
  TraceEvent e;
  e.cat = cat_;
  e.static_name = name_;
  e.ts_ns = start_;
  e.dur_ns = TraceNowNs() - start_;
  e.pid = kHostPid;
  e.tid = t->HostThreadTrack();
  e.kernel_id = kernel_id;
  t->Add(e, std::move(args));
}

// ------------------------------------------------------------ RuntimeTrace

RuntimeTrace::RuntimeTrace(std::shared_ptr<Tracer> tracer,
                           const PluginLibrary* lib)
    : tracer_(std::move(tracer)), lib_(lib) {
  const TsPluginApi& t = lib_->table();
  const char* clock = std::getenv("TESSERA_TRACE_CLOCK");
  if (clock && std::string(clock) == "host") {
    host_clock_ = true;
    anchor_tried_ = true;  // nothing to anchor
    return;
  }
  const bool events_only = clock && std::string(clock) == "events";
  if (clock && *clock && std::string(clock) != "device" && !events_only)
    TESSERA_LOG(kWarning, std::string("TESSERA_TRACE_CLOCK=") + clock +
                              " is not 'device', 'events' or 'host'; using device");
  timing_ = t.Event_Create && t.Event_Destroy && t.Event_Record &&
            t.Event_Query && t.Event_Synchronize && t.Event_ElapsedTime;
  // Timestamps are in the host's clock already: no anchor.
  stamps_ = !events_only && t.Stream_WriteTimestamp != nullptr &&
            t.Stream_Synchronize != nullptr;
  if (!timing_ || stamps_) anchor_tried_ = true;
}

RuntimeTrace::~RuntimeTrace() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ResolveLocked(true, nullptr);
    if (!pending_.empty()) {
      // A stream that could not be synchronized (capturing?) may still
      // write into these slots: leave them allocated.
      TESSERA_LOG(kWarning, "TESSERA_TRACE: " + std::to_string(pending_.size()) +
                                " operations were never seen complete; left out");
      new std::deque<uint64_t>(std::move(slots_));  // leaked on purpose
      pending_.clear();
    }
    tracks_.clear();
    DestroyEvent(anchor_);
    anchor_ = nullptr;
    for (auto& [device, events] : free_events_)
      for (TsEvent* e : events) DestroyEvent(e);
    free_events_.clear();
  }
  tracer_->Write();
}

void RuntimeTrace::DestroyEvent(TsEvent* event) {
  if (!event) return;
  auto args = MakeArgs<TsEvent_Destroy_Args>();
  args.event = event;
  (void)TESSERA_PLUGIN_CALL(*lib_, Event_Destroy, args);
}

TsEvent* RuntimeTrace::TakeEvent(TsDevice* device) {
  std::vector<TsEvent*>& events = free_events_[device];
  if (!events.empty()) {
    TsEvent* e = events.back();
    events.pop_back();
    return e;
  }
  auto create = MakeArgs<TsEvent_Create_Args>();
  create.device = device;
  if (TESSERA_PLUGIN_CALL(*lib_, Event_Create, create).ok()) return create.event;
  return nullptr;
}

void RuntimeTrace::GiveEvent(TsDevice* device, TsEvent* event) {
  if (event) free_events_[device].push_back(event);
}

bool RuntimeTrace::Record(TsEvent* event, TsStream* stream) {
  auto args = MakeArgs<TsEvent_Record_Args>();
  args.event = event;
  args.stream = stream;
  return TESSERA_PLUGIN_CALL(*lib_, Event_Record, args).ok();
}

uint64_t* RuntimeTrace::TakeSlot() {
  uint64_t* slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slots_.emplace_back();
    slot = &slots_.back();
  }
  *slot = 0;
  return slot;
}

bool RuntimeTrace::WriteTimestamp(uint64_t* slot, TsStream* stream) {
  auto args = MakeArgs<TsStream_WriteTimestamp_Args>();
  args.stream = stream;
  args.timestamp_ns = slot;
  return TESSERA_PLUGIN_CALL(*lib_, Stream_WriteTimestamp, args).ok();
}

bool RuntimeTrace::SlotWritten(const Pending& p, bool wait) {
  if (__atomic_load_n(p.slot, __ATOMIC_ACQUIRE) != 0) return true;
  if (!wait) return false;
  // Written at the latest when a synchronize of its stream returns.
  auto args = MakeArgs<TsStream_Synchronize_Args>();
  args.stream = p.stream;
  (void)TESSERA_PLUGIN_CALL(*lib_, Stream_Synchronize, args);
  return __atomic_load_n(p.slot, __ATOMIC_ACQUIRE) != 0;
}

bool RuntimeTrace::Complete(TsEvent* event, bool wait) {
  if (wait) {
    auto args = MakeArgs<TsEvent_Synchronize_Args>();
    args.event = event;
    return TESSERA_PLUGIN_CALL(*lib_, Event_Synchronize, args).ok();
  }
  auto args = MakeArgs<TsEvent_Query_Args>();
  args.event = event;
  return TESSERA_PLUGIN_CALL(*lib_, Event_Query, args).ok() && args.complete;
}

bool RuntimeTrace::ElapsedNs(TsEvent* start, TsEvent* end, uint64_t* ns) {
  auto args = MakeArgs<TsEvent_ElapsedTime_Args>();
  args.start = start;
  args.end = end;
  if (!TESSERA_PLUGIN_CALL(*lib_, Event_ElapsedTime, args).ok()) return false;
  if (!(args.milliseconds >= 0 && args.milliseconds < 1e9)) return false;
  *ns = static_cast<uint64_t>(args.milliseconds * 1e6);
  return true;
}

RuntimeTrace::Track& RuntimeTrace::TrackOf(const StreamImpl& stream) {
  auto it = tracks_.find(stream.raw);
  if (it != tracks_.end()) return it->second;
  Track& track = tracks_[stream.raw];
  struct Publish {  // the track's ids into the stream, once they are set
    const StreamImpl& stream;
    Track& track;
    ~Publish() {
      stream.trace_track.store(uint64_t{track.pid} << 32 | track.tid,
                               std::memory_order_release);
    }
  } publish{stream, track};
  const DeviceImpl* device = stream.device.impl().get();
  auto pid = device_pids_.find(device);
  if (pid == device_pids_.end()) {
    uint32_t p = tracer_->NewPid();
    pid = device_pids_.emplace(device, p).first;
    tracer_->NameProcess(p, device->Describe(), static_cast<int>(p));
  }
  track.pid = pid->second;
  // One tid per stream for the life of the process (never reused).
  static std::atomic<uint32_t> next_tid{1};
  track.tid = next_tid++;
  tracer_->NameThread(track.pid, track.tid,
                      stream.is_default
                          ? std::string("default stream")
                          : "stream " + std::to_string(track.tid));
  return track;
}

uint64_t RuntimeTrace::TrackBits(const StreamImpl& stream) {
  uint64_t bits = stream.trace_track.load(std::memory_order_acquire);
  if (bits) return bits;
  std::lock_guard<std::mutex> lock(mu_);
  TrackOf(stream);
  return stream.trace_track.load(std::memory_order_acquire);
}

RuntimeTrace::Op RuntimeTrace::BeginOp(const StreamImpl& stream, bool slot) {
  Op op;
  op.id = tracer_->NewOpId();
  if (slot && stamps_.load(std::memory_order_acquire) &&
      capturing_.load(std::memory_order_acquire) == 0) {
    std::lock_guard<std::mutex> lock(mu_);
    op.slot = TakeSlot();
  }
  op.submit_ns = TraceNowNs();
  // The track is made by EndOp; only the first operations (until the anchor
  // is recorded) take the lock here.
  if (anchor_tried_.load(std::memory_order_acquire)) return op;
  std::lock_guard<std::mutex> lock(mu_);
  if (capturing_ == 0 && timing_ && !anchor_tried_.load(std::memory_order_relaxed)) {
    // The anchor: one timing event of the runtime, recorded on the first
    // traced stream (nothing traced is ahead of it) and waited for.  Every
    // operation is timed against it (Event_ElapsedTime works across streams
    // and devices of one client), so the streams share one clock: device
    // time t is host time anchor_ns_ + (t - anchor).  The anchor's own
    // device time lies between the Record call and the end of the wait; the
    // end is taken, so that no operation appears to end before the host
    // call that caused it (slices may lag by the wait's wake-up instead).
    auto create = MakeArgs<TsEvent_Create_Args>();
    create.device = stream.device.impl()->raw;
    if (TESSERA_PLUGIN_CALL(*lib_, Event_Create, create).ok() && create.event) {
      anchor_ = create.event;
      if (Record(anchor_, stream.raw) && Complete(anchor_, true))
        anchor_ns_ = TraceNowNs();
      else
        timing_ = false;
    } else {
      timing_ = false;
    }
    anchor_tried_.store(true, std::memory_order_release);
    op.submit_ns = TraceNowNs();
  }
  return op;
}

uint64_t RuntimeTrace::EndOp(Op op, const StreamImpl& stream,
                             const char* static_name, uint32_t name_id,
                             const char* cat, std::string args, bool ok,
                             const uint32_t* dims) {
  if (!ok) {
    if (op.slot) {  // the plugin refused the operation: nothing writes it
      std::lock_guard<std::mutex> lock(mu_);
      free_slots_.push_back(op.slot);
    }
    return 0;
  }
  uint64_t now = TraceNowNs();
  const int capturing = capturing_.load(std::memory_order_acquire);
  if (!op.slot && (host_clock_ || capturing > 0 ||
                   !(stamps_.load(std::memory_order_acquire) ||
                     timing_.load(std::memory_order_acquire)))) {
    // Timed by the host: one slice now, without this trace's lock.
    const uint64_t bits = TrackBits(stream);
    EmitSlice(op.id, cat, static_name, name_id, dims, static_cast<uint32_t>(bits >> 32),
              static_cast<uint32_t>(bits), op.submit_ns, now,
              capturing > 0 ? TraceClock::kHostCapture
              : host_clock_ ? TraceClock::kHostForced
                            : TraceClock::kHostNoEvents,
              std::move(args));
    return op.id;
  }
  TsDevice* device = stream.device.impl()->raw;
  Pending p{op.id, stream.raw, static_name, name_id, cat, std::move(args),
            op.submit_ns, now, nullptr, nullptr, device, dims != nullptr, {}};
  if (dims) std::memcpy(p.dims, dims, sizeof p.dims);
  std::lock_guard<std::mutex> lock(mu_);
  Track& track = TrackOf(stream);
  // One timestamp (or timing event) after the operation: it ends when that
  // time comes, and starts when the operation before it on the stream
  // ended, or when it was submitted if the stream was idle then.
  if (op.slot) {
    p.slot = op.slot;  // written by the operation's own call
  } else if (stamps_ && capturing_.load() == 0) {
    p.slot = TakeSlot();
    if (!WriteTimestamp(p.slot, stream.raw)) {
      free_slots_.push_back(p.slot);
      p.slot = nullptr;
      // Not again: events (when the plugin has them) from now on.
      stamps_ = false;
      TESSERA_LOG(kWarning, "TESSERA_TRACE: Stream_WriteTimestamp failed; timing "
                            "with events from now on");
    }
  } else if (timing_ && anchor_ && capturing_.load() == 0) {
    p.after = TakeEvent(device);
    if (p.after && !Record(p.after, stream.raw)) {
      GiveEvent(device, p.after);
      p.after = nullptr;
    }
  }
  if (!p.after && !p.slot) {
    EmitHost(p, track,
             capturing_.load() ? TraceClock::kHostCapture
             : timing_ ? TraceClock::kHostEventsFailed
                       : TraceClock::kHostNoEvents);
    return op.id;
  }
  pending_.push_back(std::move(p));
  if (pending_.size() >= resolve_at_) {
    // Without waiting; if most are still running (a long queue), wait next
    // time only at twice the size, and never let more than kMaxPending
    // timing events be outstanding.
    ResolveLocked(pending_.size() >= kMaxPending, nullptr);
    resolve_at_ = std::max(kResolveBatch, 2 * pending_.size());
  }
  return op.id;
}

void RuntimeTrace::EmitSlice(uint64_t id, const char* cat, const char* static_name,
                             uint32_t name_id, const uint32_t* dims, uint32_t pid,
                             uint32_t tid, uint64_t start, uint64_t end, TraceClock clock,
                             std::string&& args) {
  TraceEvent e;
  e.cat = cat;
  e.static_name = static_name;
  e.name_id = name_id;
  e.ts_ns = start;
  e.dur_ns = end - start;
  e.pid = pid;
  e.tid = tid;
  e.clock = clock;
  if (dims) {
    e.has_dims = true;
    std::memcpy(e.dims, dims, sizeof e.dims);
  }
  // An event's record and waits are where flow arrows start and end.
  tracer_->AddOpSlice(id, e, std::strcmp(cat, "event") == 0, std::move(args));
}

void RuntimeTrace::EmitHost(Pending& p, Track& track, TraceClock clock) {
  EmitSlice(p.id, p.cat, p.static_name, p.name_id, p.has_dims ? p.dims : nullptr, track.pid,
            track.tid, p.submit_ns, p.return_ns, clock, std::move(p.args));
}

void RuntimeTrace::ResolveLocked(bool wait, TsStream* only,
                                 TsStream* synchronized) {
  // In submission order; once an operation of a stream stays pending, so do
  // the later ones of that stream (their start is its end).
  std::vector<TsStream*> blocked;
  auto is_blocked = [&](TsStream* s) {
    return std::find(blocked.begin(), blocked.end(), s) != blocked.end();
  };
  size_t kept = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    bool done = !(only && p.stream != only) && !is_blocked(p.stream) &&
                (p.slot ? SlotWritten(p, wait)
                        : p.stream == synchronized || Complete(p.after, wait));
    if (!done && (only || !wait || is_blocked(p.stream))) {
      if (!is_blocked(p.stream)) blocked.push_back(p.stream);
      pending_[kept++] = std::move(p);
      continue;
    }
    Track& track = tracks_[p.stream];
    uint64_t end = 0;
    bool timed = false;
    if (done && p.slot) {
      end = __atomic_load_n(p.slot, __ATOMIC_ACQUIRE);
      timed = end != 0;
    } else if (done && ElapsedNs(anchor_, p.after, &end)) {
      end += anchor_ns_;
      timed = true;
    }
    if (timed) {
      uint64_t start = std::max(p.submit_ns, track.last_end_ns);
      if (start > end) start = end;  // the two clocks disagree slightly
      track.last_end_ns = end;
      EmitSlice(p.id, p.cat, p.static_name, p.name_id, p.has_dims ? p.dims : nullptr,
                track.pid, track.tid, start, end,
                p.slot ? TraceClock::kDeviceTimestamps : TraceClock::kDevice, std::move(p.args));
    } else {
      EmitHost(p, track, TraceClock::kHostEventsFailed);
    }
    if (p.after) GiveEvent(p.device, p.after);
    if (p.slot) free_slots_.push_back(p.slot);
  }
  pending_.resize(kept);
}

void RuntimeTrace::Resolve(bool wait, TsStream* synchronized) {
  std::lock_guard<std::mutex> lock(mu_);
  ResolveLocked(wait, nullptr, synchronized);
  resolve_at_ = std::max(kResolveBatch, 2 * pending_.size());
}

void RuntimeTrace::NoteRecord(TsEvent* event, uint64_t op_id) {
  if (!op_id) return;
  std::lock_guard<std::mutex> lock(mu_);
  last_record_[event] = op_id;
}

void RuntimeTrace::NoteWait(TsEvent* event, uint64_t op_id) {
  if (!op_id) return;
  uint64_t from = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = last_record_.find(event);
    if (it == last_record_.end()) return;
    from = it->second;
  }
  tracer_->AddFlow(from, op_id);
}

void RuntimeTrace::EventDestroyed(TsEvent* event) {
  std::lock_guard<std::mutex> lock(mu_);
  last_record_.erase(event);
}

void RuntimeTrace::StreamDestroyed(TsStream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  // Wait for this stream's operations (the stream's events must be read
  // while the stream still exists).
  for (Pending& p : pending_)
    if (p.stream == stream) {
      if (p.after) (void)Complete(p.after, true);
      if (p.slot) (void)SlotWritten(p, true);
    }
  ResolveLocked(false, stream);
  tracks_.erase(stream);
}

void RuntimeTrace::CaptureBegan() {
  std::lock_guard<std::mutex> lock(mu_);
  ++capturing_;
}

void RuntimeTrace::CaptureEnded() {
  std::lock_guard<std::mutex> lock(mu_);
  if (capturing_ > 0) --capturing_;
}

}  // namespace tessera::detail

namespace tessera {

bool TraceActive() { return detail::Tracer::Active() != nullptr; }

TraceScope::TraceScope(const char* category, std::string name)
    : tracer_(detail::Tracer::Active()), category_(category) {
  if (!tracer_) return;
  name_ = std::move(name);
  start_ = detail::TraceNowNs();
}

void TraceScope::AddArg(const char* key, const std::string& value) {
  if (!tracer_) return;
  if (!args_.empty()) args_ += ",";
  args_ += detail::TraceArg(key, value);
}

TraceScope::~TraceScope() {
  if (!tracer_) return;
  auto* tracer = static_cast<detail::Tracer*>(tracer_);
  detail::TraceEvent e;
  e.cat = category_;
  e.ts_ns = start_;
  e.dur_ns = detail::TraceNowNs() - start_;
  e.name_id = tracer->Intern(name_);
  e.pid = 1;
  e.tid = tracer->HostThreadTrack();
  tracer->Add(e, std::move(args_));
}

}  // namespace tessera
