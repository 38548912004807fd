// The I/O engines by name, as values: the engine a run reads or writes with (EngineKind) and the
// engine asked for (EngineSelection: one of them, or auto, choose_engine's pick for the target).
//
// The names are the ones users type after --engine and the ones result documents carry
// ("io_uring", "psync", "auto"); this is their one spelling. GPUDirect Storage ("gds") is an
// option value only: cli/ refuses it before any configuration stores an engine.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ioprobe {

/// A resolved engine: what reads or writes the data.
enum class EngineKind { kIoUring, kPsync };

/// An engine as asked for: one engine, or auto (choose_engine decides per target).
enum class EngineSelection { kAuto, kIoUring, kPsync };

/// "io_uring" | "psync".
const char* to_string(EngineKind k);
/// "auto" | "io_uring" | "psync".
const char* to_string(EngineSelection s);

/// The engine named `name` ("io_uring", "psync"); nullopt for any other text.
std::optional<EngineKind> engine_kind_from_string(std::string_view name);
/// The selection named `name` ("auto", "io_uring", "psync"); nullopt for any other text.
std::optional<EngineSelection> engine_selection_from_string(std::string_view name);

/// The selection that asks for exactly `k`.
EngineSelection selection_of(EngineKind k);

/// j[key] as an engine, for the strict document readers: UsageError (exit 2) naming the path
/// when the key is missing, not a string ("WHERE.KEY: expected a string, ...") or not an engine
/// ("WHERE.KEY: 'gds' is not an engine (io_uring, psync)").
EngineKind engine_kind_field(const nlohmann::json& j, const char* key, const std::string& where);
/// j[key] where "" stands for no engine (a point never measured): nullopt for "", else as
/// engine_kind_field.
std::optional<EngineKind> engine_kind_or_none_field(const nlohmann::json& j, const char* key, const std::string& where);
/// to_string(*k), or "" for none: the text engine_kind_or_none_field reads back.
const char* to_string_or_empty(const std::optional<EngineKind>& k);
/// The same for a selection ("... is not an engine selection (auto, io_uring, psync)").
EngineSelection engine_selection_field(const nlohmann::json& j, const char* key, const std::string& where);

}  // namespace ioprobe
