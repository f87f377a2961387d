#include "options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "plugin_support.hpp"

namespace tessera::plugin_support {

namespace {

// Bounds on what a caller may pass: a hostile or broken caller must not make
// the plugin read without end.
constexpr size_t kMaxOptions = 1024;
constexpr size_t kMaxText = 64 * 1024;

bool BoundedLength(const char* s, size_t* len) {
  if (s == nullptr) return false;
  const void* nul = std::memchr(s, 0, kMaxText + 1);
  if (nul == nullptr) return false;
  *len = static_cast<size_t>(static_cast<const char*>(nul) - s);
  return true;
}

bool ParseInt(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  // Base 10 only: "010" is ten, not eight (base 0 read it as octal, and
  // "09" was then not a number at all); "0x10" is not a count.
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool ParseFloat(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool ParseBool(const std::string& text, bool* out) {
  static const char* kTrue[] = {"1", "true", "on", "yes"};
  static const char* kFalse[] = {"0", "false", "off", "no"};
  for (const char* t : kTrue)
    if (text == t) return *out = true, true;
  for (const char* f : kFalse)
    if (text == f) return *out = false, true;
  return false;
}

}  // namespace

const char* ValueTypeName(TsValueType type) {
  switch (type) {
    case TS_VALUE_STRING: return "string";
    case TS_VALUE_INT64: return "int64";
    case TS_VALUE_FLOAT64: return "float64";
    case TS_VALUE_BOOL: return "bool";
  }
  return "unknown type";
}

// "an integer (int64)": the type as a sentence needs it.
const char* ValueTypePhrase(TsValueType type) {
  switch (type) {
    case TS_VALUE_STRING: return "a string";
    case TS_VALUE_INT64: return "an integer (int64)";
    case TS_VALUE_FLOAT64: return "a number (float64)";
    case TS_VALUE_BOOL: return "a boolean";
  }
  return "a value of unknown type";
}

int64_t OptionValues::Int(const std::string& name, int64_t def) const {
  auto it = values_.find(name);
  return it == values_.end() ? def : it->second.i;
}
double OptionValues::Float(const std::string& name, double def) const {
  auto it = values_.find(name);
  return it == values_.end() ? def : it->second.f;
}
bool OptionValues::Bool(const std::string& name, bool def) const {
  auto it = values_.find(name);
  return it == values_.end() ? def : it->second.b;
}
std::string OptionValues::String(const std::string& name, const std::string& def) const {
  auto it = values_.find(name);
  return it == values_.end() ? def : it->second.s;
}

std::string DescribeOptions(const TsOptionInfo* known, size_t num_known) {
  if (num_known == 0) return "none";
  std::string out;
  for (size_t i = 0; i < num_known; ++i) {
    const TsOptionInfo& o = known[i];
    out += (i ? "; " : "") + std::string(o.name) + " (" + ValueTypeName(o.type);
    if (o.default_value && *o.default_value) out += std::string(", default ") + o.default_value;
    out += ")";
    if (o.description && *o.description) out += std::string(": ") + o.description;
  }
  return out;
}

TsError* ParseOptions(const char* plugin, const char* where, const TsOptionInfo* known,
                      size_t num_known, const TsNamedValue* given, size_t num_given,
                      OptionValues* out) noexcept {
  return guard(plugin, where, [&]() -> TsError* {
    if (num_given == 0) return nullptr;
    if (given == nullptr)
      return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: %s: num_options is %zu but options is NULL",
                    plugin, where, num_given);
    if (num_given > kMaxOptions)
      return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: %s: %zu options given; at most %zu are read",
                    plugin, where, num_given, kMaxOptions);
    const std::string list = DescribeOptions(known, num_known);
    for (size_t i = 0; i < num_given; ++i) {
      const TsNamedValue& v = given[i];
      if (v.struct_size < TS_NAMED_VALUE_STRUCT_SIZE)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "%s: %s: option %zu has struct_size %zu, smaller than "
                      "TS_NAMED_VALUE_STRUCT_SIZE (%zu)",
                      plugin, where, i, v.struct_size, static_cast<size_t>(TS_NAMED_VALUE_STRUCT_SIZE));
      size_t len = 0;
      if (!BoundedLength(v.name, &len) || len == 0)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "%s: %s: option %zu has no name (NULL, empty or not NUL-terminated)", plugin,
                      where, i);
      std::string name(v.name, len);
      const TsOptionInfo* info = nullptr;
      for (size_t k = 0; k < num_known; ++k)
        if (known[k].name && name == known[k].name) info = &known[k];
      if (info == nullptr)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "%s: %s: unknown option '%s'; the options of the %s plugin are: %s", plugin,
                      where, name.c_str(), plugin, list.c_str());
      if (out->Has(name))
        return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: %s: option '%s' is given twice", plugin,
                      where, name.c_str());
      // An unknown value type is refused before v.type is read as a TsValueType.
      const int64_t given_type = raw_enum(v.type);
      if (given_type < TS_VALUE_STRING || given_type > TS_VALUE_BOOL)
        return errorf(TS_ERROR_INVALID_ARGUMENT,
                      "%s: %s: option '%s' takes %s; got a value of unknown type %lld", plugin,
                      where, name.c_str(), ValueTypePhrase(info->type),
                      static_cast<long long>(given_type));
      OptionValues::Value value;
      value.type = info->type;
      std::string text;
      if (v.type == TS_VALUE_STRING) {
        size_t slen = 0;
        if (!BoundedLength(v.string_value, &slen))
          return errorf(TS_ERROR_INVALID_ARGUMENT,
                        "%s: %s: option '%s': string value is NULL or longer than %zu bytes",
                        plugin, where, name.c_str(), kMaxText);
        text.assign(v.string_value, slen);
      }
      bool ok = true;
      switch (info->type) {
        case TS_VALUE_STRING:
          ok = v.type == TS_VALUE_STRING;
          value.s = text;
          break;
        case TS_VALUE_INT64:
          if (v.type == TS_VALUE_INT64) value.i = v.int64_value;
          else ok = v.type == TS_VALUE_STRING && ParseInt(text, &value.i);
          value.s = std::to_string(value.i);
          break;
        case TS_VALUE_FLOAT64:
          if (v.type == TS_VALUE_FLOAT64) value.f = v.float64_value;
          else if (v.type == TS_VALUE_INT64) value.f = static_cast<double>(v.int64_value);
          else ok = v.type == TS_VALUE_STRING && ParseFloat(text, &value.f);
          break;
        case TS_VALUE_BOOL:
          if (v.type == TS_VALUE_BOOL) value.b = v.bool_value != 0;
          else ok = v.type == TS_VALUE_STRING && ParseBool(text, &value.b);
          value.s = value.b ? "true" : "false";
          break;
        default:
          ok = false;
      }
      if (!ok) {
        std::string got = v.type == TS_VALUE_STRING ? "'" + text + "'" : ValueTypePhrase(v.type);
        return errorf(TS_ERROR_INVALID_ARGUMENT, "%s: %s: option '%s' takes %s; got %s%s",
                      plugin, where, name.c_str(), ValueTypePhrase(info->type), got.c_str(),
                      info->type == TS_VALUE_BOOL ? " (write 1/0, true/false, on/off or yes/no)"
                                                  : "");
      }
      out->values()[name] = value;
    }
    return nullptr;
  });
}

}  // namespace tessera::plugin_support
