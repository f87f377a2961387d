// HazardTracker: vector clocks over streams (see the header).
#include "hazard_tracker.hpp"

#include <algorithm>

namespace tessera::detail {

std::string AccessWhat::Text() const {
  std::string out = entry;
  if (name) out += " '" + *name + "'";
  if (index >= 0) out += std::string(*entry == 'C' && name == nullptr ? " rank " : " argument ") +
                         std::to_string(index);
  if (*role || bytes) {
    out += " (";
    if (bytes) out += std::to_string(bytes) + " bytes";
    if (*role) out += std::string(bytes ? ", " : "") + role;
    out += ")";
  }
  return captured ? "GraphExec_Launch (captured " + out + ")" : out;
}

HazardTracker::StreamId HazardTracker::AddStream(uint32_t device, bool is_default,
                                                 bool non_blocking, std::string name) {
  Stream s;
  s.device = device;
  s.is_default = is_default;
  s.non_blocking = non_blocking;
  s.name = std::move(name);
  // A new stream starts after everything the host has seen complete.
  s.clock = host_;
  streams_.push_back(std::move(s));
  return static_cast<StreamId>(streams_.size() - 1);
}

void HazardTracker::Join(Clock* into, const Clock& from) {
  if (into->size() < from.size()) into->resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) (*into)[i] = std::max((*into)[i], from[i]);
}

void HazardTracker::HostWaitsForDevice(uint32_t device) {
  for (const Stream& s : streams_)
    if (s.device == device) Join(&host_, s.clock);
}

void HazardTracker::BeginOperation(StreamId id) {
  Stream& s = streams_[id];
  Join(&s.clock, host_);
  if (s.is_default) {
    // The default stream waits for all earlier work of its device's
    // blocking streams.
    for (StreamId other = 0; other < streams_.size(); ++other) {
      const Stream& o = streams_[other];
      if (other != id && o.device == s.device && !o.non_blocking)
        Join(&streams_[id].clock, o.clock);
    }
  } else if (!s.non_blocking) {
    auto done = default_done_.find(s.device);
    if (done != default_done_.end()) Join(&s.clock, done->second);
  }
  Stream& t = streams_[id];
  if (t.clock.size() <= id) t.clock.resize(id + 1, 0);
  ++t.clock[id];
}

void HazardTracker::Check(StreamId id, const Access& a, std::vector<std::string>* hazards) {
  if (a.key == nullptr || a.begin >= a.end) return;
  const Clock& now = streams_[id].clock;
  std::vector<AccessRecord>& list = records_[a.key];
  bool reported = false;
  for (const AccessRecord& r : list) {
    if (reported) break;
    if (r.stream == id || (!r.write && !a.write) || (r.atomic && a.atomic)) continue;
    if (r.end <= a.begin || a.end <= r.begin) continue;
    if (r.tick <= At(now, r.stream)) continue;  // happens before
    uint64_t lo = std::max(r.begin, a.begin), hi = std::min(r.end, a.end);
    hazards->push_back(
        "stream hazard on " + (describe_buffer ? describe_buffer(a.key) : std::string("a buffer")) +
        ", bytes [" + std::to_string(lo) + ", " +
        std::to_string(hi) + "): " + a.what.Text() + " on " + streams_[id].name +
        (a.write ? " writes" : " reads") + " them, but " + r.what.Text() + " on " +
        streams_[r.stream].name + (r.write ? " writes" : " reads") +
        " them with no event edge between the two operations; record an event on " +
        streams_[r.stream].name + " after the first and make " + streams_[id].name +
        " wait on it (Stream_WaitEvent), or synchronize");
    reported = true;  // one report per access is enough to find the bug
  }
  // Drop what the new access supersedes: ordered before it (same stream, or
  // happens-before), covered by its range, and a write or a read being
  // replaced by... anything, when the new access writes; a read by a read.
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const AccessRecord& r) {
                              bool before = r.stream == id || r.tick <= At(now, r.stream);
                              bool covered = a.begin <= r.begin && r.end <= a.end;
                              return before && covered && (a.write || !r.write) &&
                                     (!a.atomic || r.atomic);
                            }),
             list.end());
  if (list.size() >= kMaxRecordsPerBuffer) list.erase(list.begin());
  AccessRecord rec;
  rec.stream = id;
  rec.tick = At(now, id);
  rec.begin = a.begin;
  rec.end = a.end;
  rec.write = a.write;
  rec.atomic = a.atomic;
  rec.what = a.what;
  list.push_back(std::move(rec));
}

std::vector<std::string> HazardTracker::Operate(StreamId s, const std::vector<Access>& accesses) {
  std::vector<std::string> hazards;
  BeginOperation(s);
  for (const Access& a : accesses) Check(s, a, &hazards);
  if (streams_[s].is_default) default_done_[streams_[s].device] = streams_[s].clock;
  return hazards;
}

std::vector<std::string> HazardTracker::OperateJointly(
    const std::vector<StreamId>& ids, const std::vector<std::vector<Access>>& accesses) {
  std::vector<std::string> hazards;
  for (StreamId s : ids) BeginOperation(s);
  // Every part waits for every rank's arrival: the streams' clocks meet.
  Clock met;
  for (StreamId s : ids) Join(&met, streams_[s].clock);
  for (StreamId s : ids) streams_[s].clock = met;
  for (size_t i = 0; i < ids.size() && i < accesses.size(); ++i)
    for (const Access& a : accesses[i]) Check(ids[i], a, &hazards);
  for (StreamId s : ids)
    if (streams_[s].is_default) default_done_[streams_[s].device] = streams_[s].clock;
  return hazards;
}

}  // namespace tessera::detail
