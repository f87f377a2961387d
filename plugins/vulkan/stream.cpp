// Streams on one VkQueue: batching, timeline semaphores, the default-stream
// rules, and the Stream_* entry points.
//
// Each stream owns a timeline semaphore.  Operations are recorded into the
// stream's open batch (one primary command buffer) with a full memory
// barrier between consecutive operations.  The submit waits on the stream's
// previous value and on the values it depends on (events, the default
// stream), and signals its own next value.  A batch is submitted only after
// every batch it waits on: a single in-order queue never sees a wait before
// its signal.
//
// When a batch is submitted (the batching policy):
//  - a batch begun while the stream had work in flight is submitted as soon
//    as that work completes (the flusher waits on the stream's timeline), so
//    the device never idles while operations are queued;
//  - a batch begun on an idle stream is submitted once the host has issued
//    no operation on the stream for kQuietWindow, or kMaxDelay after its
//    first operation: a burst of launches becomes one submit (as raw Vulkan
//    code would record it), and a launch followed by host work starts
//    within kQuietWindow, overlapping that work (Nagle's rule, for submits);
//  - at kMaxOpsPerBatch operations;
//  - and whenever something needs it on the queue at once: a host wait or
//    query, a cross-stream dependency, a blocking copy, a destroyed stream.
// The host's side costs a clock read per operation; only the first
// operation of a batch reads the timeline.
//
// The flusher (flusher_main, one thread per device) polls while batching is
// active and sleeps otherwise.  Each pass submits the deferred batches that
// are due, then sleeps until the next one is due, but at most kFlusherPoll
// (1 ms): in vkWaitSemaphores (until a busy deferred stream drains) when a
// deferred stream is busy, else on flusher_cv.  It keeps waking at least
// every kFlusherPoll while any batch is deferred and for kFlusherLinger
// (100 ms) after the last deferral, so that a new deferral needs no
// notify (a wake-up call per launch cost a context switch each: see
// docs/vulkan.md).  After kFlusherLinger without a deferral it sleeps on
// flusher_cv with no timeout (kIdle), and the next deferral notifies it.
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "internal.hpp"

namespace tessera::vk {

namespace {
constexpr uint32_t kMaxOpsPerBatch = 1024;
constexpr auto kQuietWindow = std::chrono::microseconds(50);
constexpr auto kMaxDelay = std::chrono::microseconds(2000);
constexpr auto kFlusherPoll = std::chrono::microseconds(1000);
constexpr auto kFlusherLinger = std::chrono::milliseconds(100);
constexpr uint32_t kSetsPerPool = 256;
// Every operation is a compute dispatch, a transfer or a timestamp.
constexpr VkPipelineStageFlags kStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
}  // namespace

StreamState::~StreamState() {
  if (!dev) return;
  const DeviceFns& f = dev->fn;
  // Work has completed (the device keeps a stream until then, and client
  // destruction waits for idle).  Free without the device mutex: nothing else
  // can reach this state any more.
  auto drop = [&](CommandList& cl) {
    for (VkDescriptorPool p : cl.pools) f.vkDestroyDescriptorPool(dev->device, p, nullptr);
    cl.pools.clear();
    for (Allocation& a : cl.staging) release(dev, a);
    cl.staging.clear();
  };
  for (Batch& b : inflight) drop(b.cl);
  drop(open.cl);
  if (pool) f.vkDestroyCommandPool(dev->device, pool, nullptr);
  if (sem) {  // reused by a later stream, destroyed with the device (TsDevice)
    std::lock_guard<std::mutex> lk(dev->sem_mu);
    dev->free_semaphores.push_back(sem);
  }
}

StreamState* default_state(TsDevice* dev) { return dev->default_stream->state.get(); }

TsError* create_stream_state(TsDevice* dev, bool is_default, bool non_blocking,
                             std::shared_ptr<StreamState>* out) {
  auto s = std::make_shared<StreamState>();
  {
    std::lock_guard<std::mutex> lk(dev->sem_mu);
    if (!dev->free_semaphores.empty()) {
      s->sem = dev->free_semaphores.back();
      dev->free_semaphores.pop_back();
    }
  }
  uint64_t start = 0;
  if (s->sem) {
    // A dead stream's timeline: every value it was given has been reached;
    // this stream's values continue after them.
    if (dev->fn.vkGetSemaphoreCounterValue(dev->device, s->sem, &start) != VK_SUCCESS) {
      dev->fn.vkDestroySemaphore(dev->device, s->sem, nullptr);  // unusable
      s->sem = VK_NULL_HANDLE;
      start = 0;
    }
  }
  if (!s->sem) {
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = 0;
    VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    TS_VK_CALL(dev->fn.vkCreateSemaphore(dev->device, &sci, nullptr, &s->sem),
               "vkCreateSemaphore(timeline)");
    dev->stat_semaphores.fetch_add(1, std::memory_order_relaxed);
  }
  s->dev = dev;  // from here the destructor cleans up
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = dev->family;
  TS_VK_CALL(dev->fn.vkCreateCommandPool(dev->device, &pci, nullptr, &s->pool),
             "vkCreateCommandPool");
  s->is_default = is_default;
  s->non_blocking = non_blocking;
  s->submitted = start;
  s->open.value = start + 1;
  s->label = is_default ? std::string("the default stream")
                        : strprintf("stream %u", dev->next_stream_id++);
  *out = std::move(s);
  return nullptr;
}

void record_barrier(TsDevice* dev, VkCommandBuffer cb) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  dev->fn.vkCmdPipelineBarrier(cb, kStages, kStages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void recycle_list_locked(TsDevice* dev, CommandList& cl, bool reset_cb) {
  for (VkDescriptorPool p : cl.pools) {
    dev->fn.vkResetDescriptorPool(dev->device, p, 0);
    dev->free_pools.push_back(p);
  }
  cl.pools.clear();
  for (Allocation& a : cl.staging) release(dev, a);
  cl.staging.clear();
  cl.graphs.clear();
  if (reset_cb && cl.cb) dev->fn.vkResetCommandBuffer(cl.cb, 0);
  cl.begun = false;
  cl.commands = 0;
}

TsError* allocate_descriptor_set(TsDevice* dev, CommandList& cl,
                                 VkDescriptorSetLayout layout, VkDescriptorSet* out) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!cl.pools.empty()) {
      VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      ai.descriptorPool = cl.pools.back();
      ai.descriptorSetCount = 1;
      ai.pSetLayouts = &layout;
      VkResult r = dev->fn.vkAllocateDescriptorSets(dev->device, &ai, out);
      if (r == VK_SUCCESS) return nullptr;
      if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
        return vk_error(r, "vkAllocateDescriptorSets");
    }
    // The current pool is full (or there is none): take a fresh one.
    VkDescriptorPool pool = VK_NULL_HANDLE;
    if (!dev->free_pools.empty()) {
      pool = dev->free_pools.back();
      dev->free_pools.pop_back();
    } else {
      VkDescriptorPoolSize sizes[2] = {
          {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * 8},
          {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kSetsPerPool}};
      VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      pci.maxSets = kSetsPerPool;
      pci.poolSizeCount = 2;
      pci.pPoolSizes = sizes;
      TS_VK_CALL(dev->fn.vkCreateDescriptorPool(dev->device, &pci, nullptr, &pool),
                 "vkCreateDescriptorPool");
    }
    cl.pools.push_back(pool);
  }
  return errorf(TS_ERROR_RESOURCE_EXHAUSTED,
                "vulkan: vkAllocateDescriptorSets failed on a fresh pool of %u sets: "
                "the kernel uses more than %u storage buffers",
                kSetsPerPool, 8u);
}

uint64_t counter_value(StreamState& s) {
  uint64_t v = 0;
  if (s.dev->fn.vkGetSemaphoreCounterValue(s.dev->device, s.sem, &v) != VK_SUCCESS) return 0;
  return v;
}

void reap_locked(StreamState& s) {
  if (s.inflight.empty()) return;
  uint64_t done = counter_value(s);
  while (!s.inflight.empty() && s.inflight.front().value <= done) {
    Batch& b = s.inflight.front();
    write_stamps_locked(s.dev, b);
    recycle_list_locked(s.dev, b.cl, true);
    if (b.cl.cb) s.free_cbs.push_back(b.cl.cb);
    s.inflight.pop_front();
  }
}

namespace {

// Adds the default-stream edges of an operation issued now on `s`.
// Returns true when `s` needs to wait on something new.
void implicit_waits_locked(StreamState& s, std::vector<Wait>* waits) {
  TsDevice* dev = s.dev;
  if (s.non_blocking) return;
  if (s.is_default) {
    auto scan = [&](const std::shared_ptr<StreamState>& o) {
      if (o.get() == &s || o->non_blocking) return;
      if (o->last_op > o->seen_by_default) {
        waits->push_back({o, o->last_op});
        o->seen_by_default = o->last_op;
      }
    };
    for (auto& o : dev->streams) scan(o);
    for (auto& o : dev->retired) scan(o);
  } else {
    const std::shared_ptr<StreamState>& d = dev->default_stream->state;
    if (d->last_op > s.default_seen) {
      waits->push_back({d, d->last_op});
      s.default_seen = d->last_op;
    }
  }
}

TsError* ensure_begun_locked(StreamState& s) {
  Batch& b = s.open;
  if (b.cl.begun) return nullptr;
  TsDevice* dev = s.dev;
  if (!b.cl.cb) {
    if (!s.free_cbs.empty()) {
      b.cl.cb = s.free_cbs.back();
      s.free_cbs.pop_back();
    } else {
      VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      ai.commandPool = s.pool;
      ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      ai.commandBufferCount = 1;
      TS_VK_CALL(dev->fn.vkAllocateCommandBuffers(dev->device, &ai, &b.cl.cb),
                 "vkAllocateCommandBuffers");
    }
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  TS_VK_CALL(dev->fn.vkBeginCommandBuffer(b.cl.cb, &bi), "vkBeginCommandBuffer");
  b.cl.begun = true;
  return nullptr;
}

}  // namespace

TsError* begin_op_locked(StreamState& s, CommandList** out) {
  if (s.capture) return capture_begin_op_locked(s, out);
  std::vector<Wait> waits;
  implicit_waits_locked(s, &waits);
  // A batch an event points at holds only the work queued before the
  // record (plugin.h: an event captures the work queued so far): later
  // work goes into the next batch, or Event_Synchronize waited for it too
  // (for ever, behind a kernel that waits for the host).  Waits sit at the
  // start of a submit: the batch holding earlier work, which others may
  // already depend on, is closed first as well (no cycles between batches).
  if (s.open.referenced || (!waits.empty() && s.open.cl.begun)) TS_VK_RETURN_IF_ERROR(flush_locked(s));
  for (Wait& w : waits) s.open.waits.push_back(std::move(w));
  TS_VK_RETURN_IF_ERROR(ensure_begun_locked(s));
  if (s.open.cl.commands > 0) record_barrier(s.dev, s.open.cl.cb);
  *out = &s.open.cl;
  return nullptr;
}

TsError* end_op_locked(StreamState& s) {
  if (s.capture) return nullptr;  // graph.cpp counted the node
  s.open.cl.commands++;
  s.last_op = s.open.value;
  if (s.open.cl.commands >= kMaxOpsPerBatch) return flush_locked(s);
  // The flusher submits the batch (see the policy above).
  s.last_op_time = std::chrono::steady_clock::now();
  if (!s.deferred) {
    s.deferred = true;
    s.deferred_since = s.last_op_time;
    s.deferred_on_busy = counter_value(s) < s.submitted;
    s.dev->last_deferral = s.last_op_time;
    wake_flusher_locked(s.dev);
  }
  return nullptr;
}

// ------------------------------------------------------------- flusher

void wake_flusher_locked(TsDevice* dev) {
  // Only an idle flusher needs a call; a polling one (on flusher_cv or in
  // vkWaitSemaphores) looks again within kFlusherPoll.
  if (dev->flusher_state == TsDevice::FlusherState::kIdle) dev->flusher_cv.notify_one();
}

namespace {

void flusher_main(TsDevice* dev) {
  using FS = TsDevice::FlusherState;
  using Clock = std::chrono::steady_clock;
  pthread_setname_np(pthread_self(), "tessera:vkflush");
  std::vector<std::shared_ptr<StreamState>> busy;
  std::vector<VkSemaphore> sems;
  std::vector<uint64_t> values;
  std::unique_lock<std::mutex> lk(dev->mu);
  while (!dev->flusher_stop) {
    // Submit the deferred batches that are due; find when the next is.
    busy.clear();  // may destroy dead streams' states (they do not take mu)
    sems.clear();
    values.clear();
    const Clock::time_point now = Clock::now();
    Clock::time_point due = now + kFlusherPoll;
    bool deferred = false;
    for (auto* list : {&dev->streams, &dev->retired})
      for (const std::shared_ptr<StreamState>& s : *list) {
        if (!s->deferred) continue;
        deferred = true;
        if (counter_value(*s) < s->submitted) {  // busy: due when it drains
          busy.push_back(s);
          sems.push_back(s->sem);
          values.push_back(s->submitted);
          continue;
        }
        const Clock::time_point at =
            s->deferred_on_busy ? now
                                : std::min(s->last_op_time + kQuietWindow,
                                           s->deferred_since + kMaxDelay);
        if (at > now) {
          due = std::min(due, at);
          continue;
        }
        if (TsError* e = flush_locked(*s)) {
          s->async_error_code = e->code;
          s->async_error = e->message;
          TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
          plugin_support::Error_Destroy(&da);
        }
      }
    if (!busy.empty()) {
      // Until a busy stream drains (any of them), or the next batch is due.
      const uint64_t timeout_ns = static_cast<uint64_t>(std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::nanoseconds>(due - now).count()));
      dev->flusher_state = FS::kPolling;
      lk.unlock();
      VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
      wi.flags = VK_SEMAPHORE_WAIT_ANY_BIT;
      wi.semaphoreCount = static_cast<uint32_t>(sems.size());
      wi.pSemaphores = sems.data();
      wi.pValues = values.data();
      VkResult r = dev->fn.vkWaitSemaphores(dev->device, &wi, timeout_ns);
      lk.lock();
      if (r != VK_SUCCESS && r != VK_TIMEOUT)  // e.g. VK_ERROR_DEVICE_LOST: do not spin
        dev->flusher_cv.wait_for(lk, std::chrono::milliseconds(10));
    } else if (deferred || now - dev->last_deferral < kFlusherLinger) {
      dev->flusher_state = FS::kPolling;
      dev->flusher_cv.wait_until(lk, due);
    } else {
      dev->flusher_state = FS::kIdle;
      dev->flusher_cv.wait(lk);
    }
    dev->flusher_state = FS::kBusy;
  }
}

}  // namespace

TsError* start_flusher(TsDevice* dev) {
  try {
    dev->flusher = std::thread(flusher_main, dev);
  } catch (const std::system_error& e) {
    return errorf(TS_ERROR_RESOURCE_EXHAUSTED, "vulkan: cannot start the flusher thread: %s",
                  e.what());
  }
  return nullptr;
}

void stop_flusher(TsDevice* dev) {
  if (!dev->flusher.joinable()) return;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    dev->flusher_stop = true;
    dev->flusher_cv.notify_one();  // a semaphore wait ends within kFlusherPoll
  }
  dev->flusher.join();
}

TsError* flush_locked(StreamState& s) {
  Batch& b = s.open;
  if (b.cl.commands == 0 && b.waits.empty() && !b.referenced && !b.cl.begun) return nullptr;
  TsDevice* dev = s.dev;
  // Everything this batch waits on must be on the queue before it.
  // A failure there is the other stream's to report (its next synchronize,
  // as a failure of its flusher is); its value is signalled either way, so
  // this batch goes on.
  for (size_t i = 0; i < b.waits.size(); ++i) {
    StreamState& o = *b.waits[i].stream;
    if (o.submitted < b.waits[i].value)
      if (TsError* e = flush_locked(o)) {
        o.async_error_code = e->code;
        o.async_error = e->message;
        TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
        plugin_support::Error_Destroy(&da);
      }
  }
  // A command buffer the driver could not finish (out of host memory while
  // recording) is dropped with its operations: the batch is submitted
  // without it, so its value is still signalled in the stream's order, its
  // buffer is reset when the value is reached, and the stream goes on with
  // a fresh one.  (It stayed open: every later operation was recorded into
  // the broken buffer, lavapipe corrupted its heap, and the flusher retried
  // the flush for ever.)
  TsError* end_error = nullptr;
  if (b.cl.begun) {
    // Make the batch's writes visible to the host once the semaphore says so.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
    dev->fn.vkCmdPipelineBarrier(b.cl.cb, kStages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                                 nullptr);
    VkResult er = dev->fn.vkEndCommandBuffer(b.cl.cb);
    if (er == VK_SUCCESS && dev->test_fail_end_command_buffer.exchange(false)) er = VK_ERROR_OUT_OF_HOST_MEMORY;
    if (er != VK_SUCCESS)
      end_error = vk_error(er, strprintf("vkEndCommandBuffer on %s: its %u operation(s) queued since the last "
                                         "submit were dropped (free memory, then queue them again)",
                                         s.label.c_str(), b.cl.commands));
  }
  // Wait list: our own previous value, then one entry per other stream.
  std::vector<VkSemaphore> wsem;
  std::vector<uint64_t> wval;
  // Our own previous batch: a wait only while it may still be running (a
  // stream that was synchronized submits with no wait at all, which spares
  // the driver a semaphore wait per round trip).
  if (s.submitted > 0 && counter_value(s) < s.submitted) {
    wsem.push_back(s.sem);
    wval.push_back(s.submitted);
  }
  for (const Wait& w : b.waits) {
    auto it = std::find(wsem.begin(), wsem.end(), w.stream->sem);
    if (it == wsem.end()) {
      wsem.push_back(w.stream->sem);
      wval.push_back(w.value);
    } else {
      uint64_t& v = wval[static_cast<size_t>(it - wsem.begin())];
      v = std::max(v, w.value);
    }
  }
  std::vector<VkPipelineStageFlags> stages(wsem.size(), kStages);
  VkTimelineSemaphoreSubmitInfo ti{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ti.waitSemaphoreValueCount = static_cast<uint32_t>(wval.size());
  ti.pWaitSemaphoreValues = wval.data();
  ti.signalSemaphoreValueCount = 1;
  ti.pSignalSemaphoreValues = &b.value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, &ti};
  si.waitSemaphoreCount = static_cast<uint32_t>(wsem.size());
  si.pWaitSemaphores = wsem.data();
  si.pWaitDstStageMask = stages.data();
  si.commandBufferCount = b.cl.begun && !end_error ? 1 : 0;
  si.pCommandBuffers = &b.cl.cb;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &s.sem;
  VkResult r = dev->fn.vkQueueSubmit(dev->queue, 1, &si, VK_NULL_HANDLE);
  dev->stat_submits.fetch_add(1, std::memory_order_relaxed);
  dev->stat_commands.fetch_add(b.cl.commands, std::memory_order_relaxed);
  uint64_t value = b.value;
  if (r != VK_SUCCESS) {
    // Nothing will signal `value`: signal it from the host so no waiter
    // hangs, drop the batch, and report the failure.
    VkSemaphoreSignalInfo sig{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    sig.semaphore = s.sem;
    sig.value = value;
    dev->fn.vkSignalSemaphore(dev->device, &sig);
  }
  if (!b.cl.begun && b.cl.cb) {  // an unused command buffer goes back
    s.free_cbs.push_back(b.cl.cb);
    b.cl.cb = VK_NULL_HANDLE;
  }
  s.submitted = value;
  s.inflight.push_back(std::move(b));
  s.open = Batch{};
  s.open.value = value + 1;
  s.deferred = false;
  if (end_error) {
    if (r != VK_SUCCESS) {
      TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, vk_error(r, "vkQueueSubmit")};
      plugin_support::Error_Destroy(&da);
    }
    return end_error;
  }
  if (r != VK_SUCCESS) return vk_error(r, "vkQueueSubmit");
  // Recycle what has finished while we are here (cheap: one counter read).
  if (s.inflight.size() > 4) reap_locked(s);
  return nullptr;
}

TsError* wait_value(StreamState& s, uint64_t value) {
  TsDevice* dev = s.dev;
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &s.sem;
  wi.pValues = &value;
  VkResult r = dev->fn.vkWaitSemaphores(dev->device, &wi, UINT64_MAX);
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    reap_locked(s);
  }
  if (r != VK_SUCCESS) return vk_error(r, "vkWaitSemaphores");
  return nullptr;
}

TsError* synchronize_stream(const std::shared_ptr<StreamState>& s) {
  uint64_t value;
  {
    std::lock_guard<std::mutex> lk(s->dev->mu);
    if (s->capture)
      return errorf(TS_ERROR_FAILED_PRECONDITION,
                    "vulkan: Stream_Synchronize on %s while it is capturing a graph",
                    s->label.c_str());
    TS_VK_RETURN_IF_ERROR(flush_locked(*s));
    value = s->submitted;
    if (!s->async_error.empty()) {  // a submit of the flusher failed
      TsError* e = make_error(s->async_error_code, s->async_error);
      s->async_error.clear();
      return e;
    }
  }
  if (value == 0) return nullptr;
  return wait_value(*s, value);
}

TsError* synchronize_device(TsDevice* dev) {
  std::vector<std::shared_ptr<StreamState>> all;
  std::vector<VkSemaphore> sems;
  std::vector<uint64_t> values;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    for (auto* list : {&dev->streams, &dev->retired})
      for (auto& s : *list) {
        if (!s->capture) TS_VK_RETURN_IF_ERROR(flush_locked(*s));
        if (s->submitted == 0) continue;
        all.push_back(s);
        sems.push_back(s->sem);
        values.push_back(s->submitted);
      }
  }
  VkResult r = VK_SUCCESS;
  if (!sems.empty()) {
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = static_cast<uint32_t>(sems.size());
    wi.pSemaphores = sems.data();
    wi.pValues = values.data();
    r = dev->fn.vkWaitSemaphores(dev->device, &wi, UINT64_MAX);
  }
  std::vector<std::shared_ptr<StreamState>> dead;  // freed after unlocking
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    for (auto& s : all) reap_locked(*s);
    auto& ret = dev->retired;
    for (auto it = ret.begin(); it != ret.end();) {
      if ((*it)->inflight.empty() && (*it)->open.cl.commands == 0) {
        dead.push_back(std::move(*it));
        it = ret.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (r != VK_SUCCESS) return vk_error(r, "vkWaitSemaphores");
  return nullptr;
}

// ------------------------------------------------------------ entry points

TS_VK_ENTRY(Stream_Create, TS_STREAM_CREATE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->device, "Stream_Create", "device");
  if (args->flags & ~static_cast<uint32_t>(TS_STREAM_NON_BLOCKING))
    return errorf(TS_ERROR_INVALID_ARGUMENT, "vulkan: Stream_Create: unknown flags 0x%x",
                  args->flags & ~static_cast<uint32_t>(TS_STREAM_NON_BLOCKING));
  TsDevice* dev = args->device;
  std::shared_ptr<StreamState> st;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    TS_VK_RETURN_IF_ERROR(create_stream_state(
        dev, false, (args->flags & TS_STREAM_NON_BLOCKING) != 0, &st));
    // A new blocking stream starts after the default stream's earlier work
    // only through the normal rule (its first op waits for it).
    dev->streams.push_back(st);
    auto* s = new TsStream;
    s->device = dev;
    s->state = std::move(st);
    dev->live.streams.insert(s);
    args->stream = s;
  }
  return nullptr;
}

TsError* destroy_stream(TsStream* s, bool abandon_capture) {
  TsDevice* dev = s->device;
  TsError* e = nullptr;
  {
    std::lock_guard<std::mutex> lk(dev->mu);
    StreamState& st = *s->state;
    if (st.capture) {
      if (!abandon_capture)
        return errorf(TS_ERROR_FAILED_PRECONDITION,
                      "vulkan: Stream_Destroy: %s is capturing a graph; end the capture "
                      "first",
                      st.label.c_str());
      abandon_capture_locked(st);
    }
    // Queued work still runs: submit it, and keep the state until it is done.
    e = flush_locked(st);
    if (e && !abandon_capture) return e;  // the stream stays
    dev->live.streams.erase(s);
    st.destroyed = true;
    auto& v = dev->streams;
    auto it = std::find(v.begin(), v.end(), s->state);
    if (it != v.end()) v.erase(it);
    reap_locked(st);
    if (!st.inflight.empty()) dev->retired.push_back(s->state);
    // Forget retired streams that have finished meanwhile.
    auto& ret = dev->retired;
    for (auto r = ret.begin(); r != ret.end();) {
      reap_locked(**r);
      if ((*r)->inflight.empty() && (*r)->open.cl.commands == 0)
        r = ret.erase(r);
      else
        ++r;
    }
  }
  s->magic = kMagicDead;
  s->state.reset();
  delete s;
  return e;
}

TS_VK_ENTRY(Stream_Destroy, TS_STREAM_DESTROY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->stream, "Stream_Destroy", "stream");
  if (args->stream == args->stream->device->default_stream)
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_Destroy: the default stream belongs to its device");
  return destroy_stream(args->stream, false);
}

TS_VK_ENTRY(Stream_Synchronize, TS_STREAM_SYNCHRONIZE_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->stream, "Stream_Synchronize", "stream");
  return synchronize_stream(args->stream->state);
}

TS_VK_ENTRY(Stream_Query, TS_STREAM_QUERY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->stream, "Stream_Query", "stream");
  StreamState& s = *args->stream->state;
  std::lock_guard<std::mutex> lk(s.dev->mu);
  if (s.capture) {
    args->idle = 0;
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_Query on %s while it is capturing a graph",
                  s.label.c_str());
  }
  // Queued work must start for a query to ever turn true.
  TS_VK_RETURN_IF_ERROR(flush_locked(s));
  reap_locked(s);
  args->idle = counter_value(s) >= s.submitted ? 1 : 0;
  // Idle: every batch is reaped now, so its points are written.
  if (args->idle) reap_locked(s);
  return nullptr;
}

TS_VK_ENTRY(Stream_WaitEvent, TS_STREAM_WAITEVENT_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->stream, "Stream_WaitEvent", "stream");
  TS_VK_CHECK_HANDLE(args->event, "Stream_WaitEvent", "event");
  TsEvent* ev = args->event;
  StreamState& s = *args->stream->state;
  // Each device has its own VkDevice: a timeline semaphore of one cannot be
  // waited on by the queue of another, so the plugin cannot order work across
  // its devices (plugin.h: TS_ERROR_UNSUPPORTED).
  if (ev->device != args->stream->device)
    return errorf(TS_ERROR_UNSUPPORTED,
                  "vulkan: Stream_WaitEvent: the event belongs to %s, the stream to %s; "
                  "Vulkan devices cannot wait on each other's semaphores: synchronize "
                  "the event from the host (Event_Synchronize) instead",
                  ev->device->props.deviceName, args->stream->device->props.deviceName);
  std::lock_guard<std::mutex> lk(s.dev->mu);
  if (ev->last_is_capture && ev->capture) return capture_wait_event_locked(s, ev);
  if (!ev->stream) return nullptr;               // never recorded: no-op
  if (s.capture)
    // A graph cannot depend on work outside it: replaying it later would
    // silently drop the edge (plugin.h, Stream_EndCapture; as the cpu plugin).
    return errorf(TS_ERROR_FAILED_PRECONDITION,
                  "vulkan: Stream_WaitEvent: %s is capturing a graph, but the event was "
                  "recorded outside the capture (on %s); a graph cannot depend on work "
                  "outside it: record the event inside the capture, or wait on it before "
                  "Stream_BeginCapture",
                  s.label.c_str(), ev->stream->label.c_str());
  if (ev->stream.get() == &s) return nullptr;   // in-order already
  if (counter_value(*ev->stream) >= ev->value) return nullptr;  // done
  if (s.open.cl.begun || s.open.referenced) TS_VK_RETURN_IF_ERROR(flush_locked(s));
  s.open.waits.push_back({ev->stream, ev->value});
  return nullptr;
}

}  // namespace tessera::vk
