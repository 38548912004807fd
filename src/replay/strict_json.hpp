// Strict reading of JSON fields for the replay codecs: a missing or mistyped field is a
// UsageError naming its path ("replay.streams[2].bytes: missing", "...: expected an unsigned
// integer, got string"), never a default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ioprobe::replay::strict {

/// j[key]; UsageError "PATH.KEY: missing" (or "PATH: expected an object") otherwise.
const nlohmann::json& at(const nlohmann::json& j, const char* key, const std::string& path);
uint64_t u64(const nlohmann::json& j, const char* key, const std::string& path);
int64_t i64(const nlohmann::json& j, const char* key, const std::string& path);
int32_t i32(const nlohmann::json& j, const char* key, const std::string& path);
double number(const nlohmann::json& j, const char* key, const std::string& path);
bool boolean(const nlohmann::json& j, const char* key, const std::string& path);
std::string str(const nlohmann::json& j, const char* key, const std::string& path);
std::vector<std::string> strings(const nlohmann::json& j, const char* key, const std::string& path);
/// j[key] when it is an object (or array when `array`), else UsageError naming the path.
const nlohmann::json& object(const nlohmann::json& j, const char* key, const std::string& path);
const nlohmann::json& array(const nlohmann::json& j, const char* key, const std::string& path);

}  // namespace ioprobe::replay::strict
