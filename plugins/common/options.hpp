// Named plugin options (ABI 1.2): checks what a caller passes against what
// the plugin declares, once, and hands back typed values.
//
//   static const TsOptionInfo kOptions[] = {
//       {TS_OPTION_INFO_STRUCT_SIZE, nullptr, "devices", TS_VALUE_INT64, "1", "..."}};
//   OptionValues values;
//   if (TsError* e = ParseOptions("cpu", "Client_Create", kOptions, 1,
//                                 args->options, args->num_options, &values))
//     return e;
//   int64_t n = values.Int("devices", 1);
//
// A value of another type than declared is accepted in its text form
// (TS_VALUE_STRING "4" for an int64: environment variables arrive so);
// anything else -- an unknown name, a value that does not parse, the same
// name twice, a malformed TsNamedValue -- is TS_ERROR_INVALID_ARGUMENT that
// names the option and lists the known ones.
//
// Thread-safety: ParseOptions is stateless; OptionValues is a value type.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "tessera/plugin.h"

namespace tessera::plugin_support {

class OptionValues {
 public:
  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  int64_t Int(const std::string& name, int64_t def) const;
  double Float(const std::string& name, double def) const;
  bool Bool(const std::string& name, bool def) const;
  std::string String(const std::string& name, const std::string& def) const;

  struct Value {
    TsValueType type = TS_VALUE_STRING;
    std::string s;
    int64_t i = 0;
    double f = 0;
    bool b = false;
  };
  std::map<std::string, Value>& values() { return values_; }
  const std::map<std::string, Value>& values() const { return values_; }

 private:
  std::map<std::string, Value> values_;
};

// "devices (int64, default 1): number of cpu devices; threads (...)".
std::string DescribeOptions(const TsOptionInfo* known, size_t num_known);

// Parses `given` against `known`.  `plugin` and `where` name the plugin and
// the entry point in messages.
TsError* ParseOptions(const char* plugin, const char* where, const TsOptionInfo* known,
                      size_t num_known, const TsNamedValue* given, size_t num_given,
                      OptionValues* out) noexcept;

const char* ValueTypeName(TsValueType type);

}  // namespace tessera::plugin_support
