#include "core/json_field.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe {

const nlohmann::json& json_at(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: not a JSON object (looking for '{}')", where, key));
  auto it = j.find(key);
  if (it == j.end()) throw UsageError(fmt::format("{}: missing key '{}'", where, key));
  return *it;
}

const nlohmann::json& json_array_at(const nlohmann::json& j, const char* key, const std::string& where) {
  const nlohmann::json& a = json_at(j, key, where);
  if (!a.is_array()) json_detail::throw_mistyped(a, json_path(where, key), "an array");
  return a;
}

const nlohmann::json& json_object_at(const nlohmann::json& j, const char* key, const std::string& where) {
  const nlohmann::json& o = json_at(j, key, where);
  if (!o.is_object()) json_detail::throw_mistyped(o, json_path(where, key), "a JSON object");
  return o;
}

std::string json_path(const std::string& where, const char* key) { return where + "." + key; }
std::string json_path(const std::string& where, size_t index) { return fmt::format("{}[{}]", where, index); }

namespace json_detail {
void throw_mistyped(const nlohmann::json& v, const std::string& path, const char* what) {
  std::string found = v.dump();
  if (found.size() > 60) found = found.substr(0, 57) + "...";
  throw UsageError(fmt::format("{}: expected {}, found {}", path, what, found));
}
}  // namespace json_detail

}  // namespace ioprobe
