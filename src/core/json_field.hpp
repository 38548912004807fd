// Strict reading of JSON objects (result documents, the parts hosts send each other): a field that
// is missing or of the wrong type is refused with its JSON path, never read as a default.
//
// Paths name where a value was looked for: a document or object name, then ".key" and "[i]"
// steps ("'a.json'.results.workers[1]"); messages read "PATH: missing key 'KEY'" and
// "PATH.KEY: expected TYPE, found VALUE". Errors are UsageError (exit 2): the input is wrong.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// j[key], or UsageError "WHERE: missing key 'KEY'" (or "WHERE: not a JSON object ...").
const nlohmann::json& json_at(const nlohmann::json& j, const char* key, const std::string& where);

/// j[key] when it is an array, else UsageError naming the path.
const nlohmann::json& json_array_at(const nlohmann::json& j, const char* key, const std::string& where);

/// j[key] when it is a JSON object, else UsageError naming the path.
const nlohmann::json& json_object_at(const nlohmann::json& j, const char* key, const std::string& where);

/// "WHERE.KEY" and "WHERE[I]": the paths of a member and of an element, for nested errors.
std::string json_path(const std::string& where, const char* key);
std::string json_path(const std::string& where, size_t index);

namespace json_detail {
/// UsageError "PATH: expected WHAT, found VALUE" (VALUE shortened to 60 characters).
[[noreturn]] void throw_mistyped(const nlohmann::json& v, const std::string& path, const char* what);

template <class T>
struct strict;  // how a T is checked and read; the types below, and vectors of them

template <>
struct strict<bool> {
  static bool read(const nlohmann::json& v, const std::string& path) {
    if (!v.is_boolean()) throw_mistyped(v, path, "true or false");
    return v.get<bool>();
  }
};
template <>
struct strict<std::string> {
  static std::string read(const nlohmann::json& v, const std::string& path) {
    if (!v.is_string()) throw_mistyped(v, path, "a string");
    return v.get<std::string>();
  }
};
template <>
struct strict<double> {
  static double read(const nlohmann::json& v, const std::string& path) {
    if (!v.is_number()) throw_mistyped(v, path, "a number");
    return v.get<double>();
  }
};
// Integers: an integer JSON number within T's range (no fraction, no sign for unsigned T).
template <class T>
requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)struct strict<T> {
  static T read(const nlohmann::json& v, const std::string& path) {
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(u);
    } else if (v.is_number_integer()) {
      const int64_t s = v.get<int64_t>();
      if constexpr (std::is_signed_v<T>) {
        if (s >= std::numeric_limits<T>::min() && s <= std::numeric_limits<T>::max()) return static_cast<T>(s);
      } else {
        if (s >= 0 && static_cast<uint64_t>(s) <= static_cast<uint64_t>(std::numeric_limits<T>::max()))
          return static_cast<T>(s);
      }
    }
    throw_mistyped(v, path, std::is_signed_v<T> ? "an integer in range" : "a non-negative integer in range");
  }
};
template <class T>
struct strict<std::vector<T>> {
  static std::vector<T> read(const nlohmann::json& v, const std::string& path) {
    if (!v.is_array()) throw_mistyped(v, path, "an array");
    std::vector<T> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) out.push_back(strict<T>::read(v[i], json_path(path, i)));
    return out;
  }
};
}  // namespace json_detail

/// `v` as T (bool, string, double, an integer type, or a vector of them), or UsageError naming
/// `path` and what was found instead. An integer must be an integer JSON number within T's range.
template <class T>
T json_as(const nlohmann::json& v, const std::string& path) {
  return json_detail::strict<T>::read(v, path);
}

/// j[key] as T: UsageError naming the path when the key is missing or its value mistyped.
template <class T>
T json_field(const nlohmann::json& j, const char* key, const std::string& where) {
  return json_as<T>(json_at(j, key, where), json_path(where, key));
}

/// j[key] as T when present, `fallback` when absent: only for fields documented as absent from
/// older documents (say so beside each call). A present value of the wrong type is refused.
template <class T>
T json_field_or(const nlohmann::json& j, const char* key, const std::string& where, T fallback) {
  if (!j.is_object()) json_at(j, key, where);  // throws: not an object
  const auto it = j.find(key);
  return it == j.end() ? fallback : json_as<T>(*it, json_path(where, key));
}

}  // namespace ioprobe
