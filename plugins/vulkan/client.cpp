// Client_Create / Client_Destroy / Client_GetDevices: dlopen libvulkan,
// create the instance (with the validation layer's messages routed to
// stderr when asked), and one TsDevice per physical device with compute.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "enumerate.hpp"
#include "internal.hpp"
#include "options.hpp"

namespace tessera::vk {

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  // The loader's own notes (e.g. "env var VK_INSTANCE_LAYERS defined") are
  // general-type warnings, not findings about the plugin: keep them quiet.
  if (!(severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) &&
      !(type & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)))
    return VK_FALSE;
  const char* level = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
                          ? "error"
                          : "warning";
  std::fprintf(stderr, "tessera vulkan: validation %s: %s\n", level,
               data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

// VK_INSTANCE_LAYERS is the Vulkan loader's own variable: the loader reads
// it whatever Tessera does; the plugin looks at it only to know whether the
// layer is on (Tessera's own switch is the validation option).
bool env_contains(const char* name, const char* what) {
  const char* v = std::getenv(name);
  return v && std::strstr(v, what);
}

TsError* unavailable(const std::string& reason) {
  return make_error(TS_ERROR_UNAVAILABLE, "not available: " + reason);
}

}  // namespace

const TsOptionInfo kClientOptions[] = {
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "validation", TS_VALUE_BOOL, "false",
     "enable VK_LAYER_KHRONOS_validation by name, its messages to stderr (TESSERA_VALIDATE)"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "library", TS_VALUE_STRING, "libvulkan.so.1",
     "the Vulkan loader to dlopen"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "cache_dir", TS_VALUE_STRING, "",
     "folder of the persisted pipeline cache (\"\": none; the core passes "
     "$TESSERA_CACHE_DIR/vulkan)"},
    {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "test_mask_features", TS_VALUE_STRING, "",
     "tests only: comma-separated device features to treat as absent"},
};
const size_t kNumClientOptions = sizeof(kClientOptions) / sizeof(kClientOptions[0]);

TS_VK_ENTRY(Client_Create, TS_CLIENT_CREATE_ARGS_MIN_STRUCT_SIZE) {
  plugin_support::OptionValues options;
  if (TS_FIELD_PRESENT(args, TsClient_Create_Args, num_options))
    if (TsError* e = plugin_support::ParseOptions("vulkan", "Client_Create", kClientOptions,
                                                  kNumClientOptions, args->options,
                                                  args->num_options, &options))
      return e;
  auto c = std::make_unique<TsClient>();
  c->cache_dir = options.String("cache_dir", "");
  c->test_mask_features = options.String("test_mask_features", "");
  const std::string library = options.String("library", "libvulkan.so.1");
  std::string reason;
  if (!c->fn.OpenLibrary(library.c_str(), &reason)) return unavailable(reason);

  uint32_t loader_version = VK_API_VERSION_1_0;
  c->fn.vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_2)
    return unavailable(strprintf("the Vulkan loader is version %u.%u; Tessera needs 1.2 "
                                 "(timeline semaphores)",
                                 VK_API_VERSION_MAJOR(loader_version),
                                 VK_API_VERSION_MINOR(loader_version)));

  // Validation: TESSERA_VALIDATE=1 enables the Khronos layer by name, so
  // vkCreateInstance fails rather than run without it once it was found;
  // VK_INSTANCE_LAYERS may name it too.  When it is on, its messages go to
  // stderr through VK_EXT_debug_utils, and the client says so once (the
  // validation ctests check for that line: a layer that silently failed to
  // load must not pass as "no messages").
  bool want_layer = options.Bool("validation", false);
  bool layer_on = env_contains("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation");
  std::vector<const char*> layers, exts;
  if (want_layer) {
    std::vector<VkLayerProperties> lp;  // none when the loader's answer is unusable
    enumerate_bounded([&](uint32_t* n, VkLayerProperties* l) { return c->fn.vkEnumerateInstanceLayerProperties(n, l); },
                      kMaxEnumerated, &lp);
    bool found = false;
    for (auto& l : lp) found |= std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    if (found) {
      layers.push_back("VK_LAYER_KHRONOS_validation");
      layer_on = true;
    } else {
      layer_on = false;  // named in VK_INSTANCE_LAYERS, but not there
      std::fprintf(stderr,
                   "tessera vulkan: validation requested (TESSERA_VALIDATE=1) but "
                   "VK_LAYER_KHRONOS_validation is "
                   "not installed (apt-get install vulkan-validationlayers); running "
                   "without validation\n");
    }
  }
  bool debug_utils = false;
  if (layer_on) {
    std::vector<VkExtensionProperties> ep;
    enumerate_bounded(
        [&](uint32_t* n, VkExtensionProperties* e) { return c->fn.vkEnumerateInstanceExtensionProperties(nullptr, n, e); },
        kMaxEnumerated, &ep);
    for (auto& e : ep)
      if (std::strcmp(e.extensionName, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0)
        debug_utils = true;
    if (debug_utils) exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tessera";
  app.pEngineName = "tessera";
  app.apiVersion = loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
  VkDebugUtilsMessengerCreateInfoEXT dci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  dci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dci.pfnUserCallback = debug_callback;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pNext = debug_utils ? &dci : nullptr;  // also covers vkCreate/DestroyInstance
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ici.ppEnabledExtensionNames = exts.data();
  VkResult r = c->fn.vkCreateInstance(&ici, nullptr, &c->instance);
  if (r != VK_SUCCESS)
    return unavailable(strprintf("vkCreateInstance failed: %s%s", vk_result_name(r),
                                 r == VK_ERROR_INCOMPATIBLE_DRIVER
                                     ? " (no Vulkan driver is installed: e.g. "
                                       "mesa-vulkan-drivers for lavapipe)"
                                     : ""));
  if (!c->fn.LoadInstance(c->instance, &reason)) return unavailable(reason);
  if (debug_utils && c->fn.vkCreateDebugUtilsMessengerEXT)
    c->fn.vkCreateDebugUtilsMessengerEXT(c->instance, &dci, nullptr, &c->messenger);
  c->validation_layer = layer_on && !layers.empty();  // enabled by name: it loaded
  if (want_layer && c->validation_layer)
    std::fprintf(stderr,
                 "tessera vulkan: validation layer VK_LAYER_KHRONOS_validation active%s\n",
                 c->messenger ? "; its messages follow as 'tessera vulkan: validation ...'"
                              : ", but VK_EXT_debug_utils is missing: its messages go to "
                                "the layer's own output");

  std::vector<VkPhysicalDevice> phys;
  uint32_t reported = 0;
  r = VK_SUCCESS;
  if (!enumerate_bounded(
          [&](uint32_t* n, VkPhysicalDevice* p) { return r = c->fn.vkEnumeratePhysicalDevices(c->instance, n, p); },
          kMaxEnumerated, &phys, &reported)) {
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
      return unavailable(strprintf("vkEnumeratePhysicalDevices failed: %s", vk_result_name(r)));
    return unavailable(strprintf("vkEnumeratePhysicalDevices reported %u devices (more than %u: a "
                                 "loader or driver error)",
                                 reported, kMaxEnumerated));
  }
  std::string skipped;
  for (VkPhysicalDevice p : phys) {
    std::unique_ptr<TsDevice> d;
    std::string skip;
    TsError* e = create_device(c.get(), p, static_cast<uint32_t>(c->devices.size()), &d, &skip);
    if (e) return e;
    if (!d) {
      skipped += (skipped.empty() ? "" : "; ") + skip;
      continue;
    }
    c->device_list.push_back(d.get());
    c->devices.push_back(std::move(d));
  }
  if (c->devices.empty())
    return unavailable(phys.empty() ? std::string("the Vulkan loader found no physical device")
                              : "no usable Vulkan device: " + skipped);
  args->client = c.release();
  return nullptr;
}

}  // namespace tessera::vk

TsClient::~TsClient() {
  devices.clear();  // each waits for its work
  device_list.clear();
  if (messenger && fn.vkDestroyDebugUtilsMessengerEXT)
    fn.vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  if (instance) fn.vkDestroyInstance(instance, nullptr);
  fn.Close();
}

namespace tessera::vk {

namespace {

void drop(TsError* e) {
  if (!e) return;
  TsError_Destroy_Args da{TS_ERROR_DESTROY_ARGS_STRUCT_SIZE, nullptr, e};
  plugin_support::Error_Destroy(&da);
}

template <class T>
std::vector<T*> snapshot(TsDevice* d, std::unordered_set<T*> LiveObjects::*set) {
  std::lock_guard<std::mutex> lk(d->mu);
  const auto& s = d->live.*set;
  return std::vector<T*>(s.begin(), s.end());
}

// Frees the objects of `d` the caller did not destroy, through the functions
// their own Destroy/Free entry points use (each unregisters what it frees, so
// each object goes once).  The device is idle.  Order: what refers to
// another object goes first: graph execs and graphs (their command buffers
// name buffers and pipelines), events (they hold streams), streams, then
// executables and buffers.
void free_leftovers(TsDevice* d) {
  for (TsGraphExec* x : snapshot(d, &LiveObjects::graph_execs)) destroy_graph_exec(x);
  for (TsGraph* g : snapshot(d, &LiveObjects::graphs)) destroy_graph(g);
  for (TsEvent* ev : snapshot(d, &LiveObjects::events)) drop(destroy_event(ev));
  for (TsStream* s : snapshot(d, &LiveObjects::streams)) drop(destroy_stream(s, true));
  for (TsExecutable* x : snapshot(d, &LiveObjects::executables)) drop(destroy_executable(x));
  for (TsBuffer* b : snapshot(d, &LiveObjects::buffers)) drop(destroy_buffer(b));
}

}  // namespace

// Waits for all work, then frees everything the client owns (plugin.h): the
// objects the caller left behind, its pinned host ranges, and the devices
// (~TsDevice destroys the default streams, pools and the VkDevice).  The
// caller makes no other call on the client or its objects meanwhile.
TS_VK_ENTRY(Client_Destroy, TS_CLIENT_DESTROY_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->client, "Client_Destroy", "client");
  TsClient* c = args->client;
  for (auto& d : c->devices) {
    {
      // A capture still open produces no graph: its streams (the default
      // one too) are ordinary again, so their queued work is submitted.
      std::lock_guard<std::mutex> lk(d->mu);
      for (auto& s : d->streams)
        if (s->capture) abandon_capture_locked(*s);
    }
    drop(synchronize_device(d.get()));
  }
  for (auto& d : c->devices) free_leftovers(d.get());
  {
    std::vector<TsCommunicator*> comms;
    {
      std::lock_guard<std::mutex> lk(c->objects_mu);
      comms.assign(c->communicators.begin(), c->communicators.end());
    }
    for (TsCommunicator* x : comms) destroy_communicator(x);
  }
  {
    // Pinned host memory still allocated: release the imports (the memory
    // itself stays valid for the program; Host_Allocate'd blocks are freed).
    std::lock_guard<std::mutex> lk(c->host_mu);
    for (auto& [addr, r] : c->host_ranges) {
      if (r->origin == HostRange::kPinnedBuffer) continue;
      for (size_t i = 0; i < r->views.size() && i < c->devices.size(); ++i)
        if (r->views[i].buffer) release(c->devices[i].get(), r->views[i]);
      if (r->heap) std::free(r->heap);
    }
    c->host_ranges.clear();
  }
  c->magic = kMagicDead;
  delete c;
  return nullptr;
}

TS_VK_ENTRY(Client_GetDevices, TS_CLIENT_GETDEVICES_ARGS_STRUCT_SIZE) {
  TS_VK_CHECK_HANDLE(args->client, "Client_GetDevices", "client");
  args->devices = args->client->device_list.data();
  args->num_devices = args->client->device_list.size();
  return nullptr;
}

}  // namespace tessera::vk
