#include "plugin_options.hpp"
#include "plugin_discovery.hpp"

#include <cctype>
#include <cstdlib>
#include <algorithm>
#include <cstring>

#include "log.hpp"

extern char** environ;

namespace tessera {

OptionValue OptionValue::String(std::string name, std::string value) {
  OptionValue v;
  v.name = std::move(name);
  v.type = TS_VALUE_STRING;
  v.string_value = std::move(value);
  return v;
}
OptionValue OptionValue::Int(std::string name, int64_t value) {
  OptionValue v;
  v.name = std::move(name);
  v.type = TS_VALUE_INT64;
  v.int64_value = value;
  return v;
}
OptionValue OptionValue::Float(std::string name, double value) {
  OptionValue v;
  v.name = std::move(name);
  v.type = TS_VALUE_FLOAT64;
  v.float64_value = value;
  return v;
}
OptionValue OptionValue::Bool(std::string name, bool value) {
  OptionValue v;
  v.name = std::move(name);
  v.type = TS_VALUE_BOOL;
  v.bool_value = value;
  return v;
}
std::string OptionValue::ValueText() const {
  switch (type) {
    case TS_VALUE_STRING: return string_value;
    case TS_VALUE_INT64: return std::to_string(int64_value);
    case TS_VALUE_FLOAT64: return std::to_string(float64_value);
    case TS_VALUE_BOOL: return bool_value ? "true" : "false";
  }
  return "";
}

const char* ValueTypeName(TsValueType type) {
  switch (type) {
    case TS_VALUE_STRING: return "string";
    case TS_VALUE_INT64: return "int64";
    case TS_VALUE_FLOAT64: return "float64";
    case TS_VALUE_BOOL: return "bool";
  }
  return "unknown";
}

std::string DefaultCacheDirectory() {
  if (const char* d = std::getenv("TESSERA_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tessera";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tessera";
  return "";
}

namespace detail {

namespace {

constexpr size_t kMaxOptionInfos = 256;

std::string Upper(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}
std::string Lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Declares(const PluginCandidate& c, const std::string& name) {
  for (const OptionInfo& o : c.options)
    if (o.name == name) return true;
  return false;
}

void Put(std::vector<ResolvedOption>* out, OptionValue v, std::string origin) {
  for (ResolvedOption& r : *out)
    if (r.value.name == v.name) {
      r.value = std::move(v);
      r.origin = std::move(origin);
      return;
    }
  out->push_back({std::move(v), std::move(origin)});
}

}  // namespace

StatusOr<std::vector<ResolvedOption>> ResolveClientOptions(const PluginCandidate& candidate,
                                                           bool takes_options,
                                                           const RuntimeOptions& options,
                                                           bool forward_validate) {
  std::vector<ResolvedOption> out;
  // Lowest precedence: the defaults a tool chose.
  if (auto d = options.plugin_option_defaults.find(candidate.name);
      d != options.plugin_option_defaults.end() && takes_options)
    for (const OptionValue& v : d->second)
      Put(&out, v, "RuntimeOptions::plugin_option_defaults");
  if (options.read_environment) {
    // Global variables, only onto options the plugin declares.
    if (Declares(candidate, "cache_dir")) {
      std::string root = DefaultCacheDirectory();
      if (!root.empty())
        Put(&out, OptionValue::String("cache_dir", root + "/" + candidate.name),
            std::getenv("TESSERA_CACHE_DIR") ? "TESSERA_CACHE_DIR" : "the default cache folder");
    }
    if (forward_validate && Declares(candidate, "validation")) {
      if (const char* v = std::getenv("TESSERA_VALIDATE"); v && *v)
        Put(&out, OptionValue::String("validation", v), "TESSERA_VALIDATE");
    }
    // TESSERA_<PLUGIN>_<OPTION>: every one, so that a misspelt option is an
    // error from the plugin rather than silently ignored.
    const std::string prefix = "TESSERA_" + Upper(candidate.name) + "_";
    // Variables of a plugin whose name extends this one's (cpu_fast for
    // cpu) are that plugin's.
    std::vector<std::string> longer;
    for (const std::string& n : KnownPluginNames())
      if (n.size() > candidate.name.size() && n.compare(0, candidate.name.size() + 1, candidate.name + "_") == 0)
        longer.push_back("TESSERA_" + Upper(n) + "_");
    std::vector<ResolvedOption> prefixed;
    for (char** e = environ; e && *e; ++e) {
      const char* entry = *e;
      if (std::strncmp(entry, prefix.c_str(), prefix.size()) != 0) continue;
      if (std::any_of(longer.begin(), longer.end(),
                      [&](const std::string& p) { return std::strncmp(entry, p.c_str(), p.size()) == 0; }))
        continue;
      const char* eq = std::strchr(entry, '=');
      if (!eq || eq == entry + prefix.size()) continue;
      std::string var(entry, eq);
      std::string option = Lower(var.substr(prefix.size()));
      prefixed.push_back({OptionValue::String(option, eq + 1), var});
    }
    if (!prefixed.empty() && !takes_options) {
      TESSERA_LOG(kDebug, "plugin " + candidate.name + " (ABI " + candidate.abi_version +
                              ") takes no options: ignoring " + DescribeResolved(prefixed));
    } else {
      for (ResolvedOption& r : prefixed) Put(&out, std::move(r.value), std::move(r.origin));
    }
  }
  auto it = options.plugin_options.find(candidate.name);
  if (it != options.plugin_options.end() && !it->second.empty()) {
    if (!takes_options)
      return Status(StatusCode::kInvalidArgument,
                    "plugin '" + candidate.name + "' implements ABI " + candidate.abi_version +
                        ", which has no plugin options (ABI 1.2 added them), but "
                        "RuntimeOptions::plugin_options gives it some: rebuild the plugin "
                        "against tessera/plugin.h 1.2 or drop the options");
    for (const OptionValue& v : it->second) Put(&out, v, "RuntimeOptions");
  }
  if (!takes_options) out.clear();
  return out;
}

std::vector<TsNamedValue> ToNamedValues(const std::vector<OptionValue>& values) {
  std::vector<TsNamedValue> out;
  for (const OptionValue& v : values) {
    TsNamedValue n{};
    n.struct_size = TS_NAMED_VALUE_STRUCT_SIZE;
    n.name = v.name.c_str();
    n.type = v.type;
    n.string_value = v.string_value.c_str();
    n.int64_value = v.int64_value;
    n.float64_value = v.float64_value;
    n.bool_value = v.bool_value ? 1 : 0;
    out.push_back(n);
  }
  return out;
}

std::string DescribeResolved(const std::vector<ResolvedOption>& options) {
  std::string out;
  for (const ResolvedOption& r : options)
    out += (out.empty() ? "" : ", ") + r.value.name + "=" + r.value.ValueText() + " (from " +
           r.origin + ")";
  return out.empty() ? "no options" : out;
}

std::string BoundedString(const char* text, size_t max) {
  if (text == nullptr) return "";
  const void* nul = std::memchr(text, 0, max + 1);
  size_t len = nul ? static_cast<size_t>(static_cast<const char*>(nul) - text) : max;
  return std::string(text, len);
}

std::vector<OptionInfo> CopyOptionInfos(const TsOptionInfo* infos, size_t count) {
  std::vector<OptionInfo> out;
  if (infos == nullptr) return out;
  if (count > kMaxOptionInfos) count = kMaxOptionInfos;
  for (size_t i = 0; i < count; ++i) {
    const TsOptionInfo& o = infos[i];
    if (o.struct_size < TS_OPTION_INFO_STRUCT_SIZE || o.name == nullptr) continue;
    OptionInfo info;
    info.name = BoundedString(o.name, 128);
    // Read as its bytes: a type outside the enum's values, loaded as
    // TsValueType, is undefined behaviour (UBSan, fuzz/plugin_fuzzer.cpp).
    uint32_t type;
    static_assert(sizeof(type) == sizeof(o.type));
    std::memcpy(&type, &o.type, sizeof(type));
    info.type = type <= TS_VALUE_BOOL ? static_cast<TsValueType>(type) : TS_VALUE_STRING;
    info.default_value = BoundedString(o.default_value);
    info.description = BoundedString(o.description);
    if (!info.name.empty()) out.push_back(std::move(info));
  }
  return out;
}

}  // namespace detail
}  // namespace tessera
