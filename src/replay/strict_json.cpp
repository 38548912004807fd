#include "replay/strict_json.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe::replay::strict {

using nlohmann::json;

namespace {

const char* type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_unsigned()) return "unsigned integer";
  if (v.is_number_integer()) return v.get<int64_t>() < 0 ? "negative integer" : "integer";
  if (v.is_number_float()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

[[noreturn]] void mistyped(const std::string& path, const char* key, const char* want, const json& v) {
  throw UsageError(fmt::format("{}.{}: expected {}, got {}", path, key, want, type_name(v)));
}

}  // namespace

const json& at(const json& j, const char* key, const std::string& path) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: expected an object, got {}", path, type_name(j)));
  auto it = j.find(key);
  if (it == j.end()) throw UsageError(fmt::format("{}.{}: missing", path, key));
  return *it;
}

uint64_t u64(const json& j, const char* key, const std::string& path) {
  const json& v = at(j, key, path);
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0))
    mistyped(path, key, "an unsigned integer", v);
  return v.get<uint64_t>();
}

int64_t i64(const json& j, const char* key, const std::string& path) {
  const json& v = at(j, key, path);
  if (!v.is_number_integer()) mistyped(path, key, "an integer", v);
  return v.get<int64_t>();
}

int32_t i32(const json& j, const char* key, const std::string& path) {
  const int64_t v = i64(j, key, path);
  if (v < INT32_MIN || v > INT32_MAX)
    throw UsageError(fmt::format("{}.{}: {} is out of range of a 32-bit integer", path, key, v));
  return static_cast<int32_t>(v);
}

double number(const json& j, const char* key, const std::string& path) {
  const json& v = at(j, key, path);
  if (!v.is_number()) mistyped(path, key, "a number", v);
  return v.get<double>();
}

bool boolean(const json& j, const char* key, const std::string& path) {
  const json& v = at(j, key, path);
  if (!v.is_boolean()) mistyped(path, key, "a boolean", v);
  return v.get<bool>();
}

std::string str(const json& j, const char* key, const std::string& path) {
  const json& v = at(j, key, path);
  if (!v.is_string()) mistyped(path, key, "a string", v);
  return v.get<std::string>();
}

std::vector<std::string> strings(const json& j, const char* key, const std::string& path) {
  const json& v = array(j, key, path);
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      throw UsageError(fmt::format("{}.{}[{}]: expected a string, got {}", path, key, i, type_name(v[i])));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

const json& object(const json& j, const char* key, const std::string& path) {
  const json& v = at(j, key, path);
  if (!v.is_object()) mistyped(path, key, "an object", v);
  return v;
}

const json& array(const json& j, const char* key, const std::string& path) {
  const json& v = at(j, key, path);
  if (!v.is_array()) mistyped(path, key, "an array", v);
  return v;
}

}  // namespace ioprobe::replay::strict
