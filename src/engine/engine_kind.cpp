#include "engine/engine_kind.hpp"

#include "core/json_field.hpp"
#include "core/json_text_value.hpp"

namespace ioprobe {

const char* to_string(EngineKind k) { return k == EngineKind::kIoUring ? "io_uring" : "psync"; }

const char* to_string(EngineSelection s) {
  switch (s) {
    case EngineSelection::kIoUring:
      return "io_uring";
    case EngineSelection::kPsync:
      return "psync";
    case EngineSelection::kAuto:
      break;
  }
  return "auto";
}

std::optional<EngineKind> engine_kind_from_string(std::string_view name) {
  if (name == "io_uring") return EngineKind::kIoUring;
  if (name == "psync") return EngineKind::kPsync;
  return std::nullopt;
}

std::optional<EngineSelection> engine_selection_from_string(std::string_view name) {
  if (name == "auto") return EngineSelection::kAuto;
  if (const auto k = engine_kind_from_string(name)) return selection_of(*k);
  return std::nullopt;
}

EngineSelection selection_of(EngineKind k) {
  return k == EngineKind::kIoUring ? EngineSelection::kIoUring : EngineSelection::kPsync;
}

EngineKind engine_kind_field(const nlohmann::json& j, const char* key, const std::string& where) {
  return json_text_value(j, key, where, engine_kind_from_string, "an engine (io_uring, psync)");
}

std::optional<EngineKind> engine_kind_or_none_field(const nlohmann::json& j, const char* key,
                                                    const std::string& where) {
  if (json_field<std::string>(j, key, where).empty()) return std::nullopt;
  return engine_kind_field(j, key, where);
}

const char* to_string_or_empty(const std::optional<EngineKind>& k) { return k ? to_string(*k) : ""; }

EngineSelection engine_selection_field(const nlohmann::json& j, const char* key, const std::string& where) {
  return json_text_value(j, key, where, engine_selection_from_string, "an engine selection (auto, io_uring, psync)");
}

}  // namespace ioprobe
