// Why a raw run ended, as a value (RawResults::stop): the kind, and the signal where the text
// names one. The text is the one raw documents and reports show ("runtime reached", "interrupted
// (SIGTERM)", ...); to_string and raw_stop_from_string are its one spelling each way.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ioprobe {

enum class RawStopKind {
  kNone,         // not set: an empty result, or a merged document that gave none (text "")
  kOnePass,      // "one pass over the region" (no --runtime)
  kRuntime,      // "runtime reached" (--runtime)
  kErrors,       // "stopped early by I/O errors"
  kInterrupted,  // "interrupted (SIGINT)" | "interrupted (SIGTERM)"
};

struct RawStop {
  RawStopKind kind = RawStopKind::kNone;
  int signal = 0;  // kInterrupted: SIGINT (2) or SIGTERM (15); 0 otherwise

  bool operator==(const RawStop&) const = default;
};

/// An interruption by signal `signal` (SIGTERM names SIGTERM, any other SIGINT, as the text does).
RawStop raw_stop_interrupted(int signal);

/// The text: "one pass over the region", "runtime reached", "stopped early by I/O errors",
/// "interrupted (SIGINT)", "interrupted (SIGTERM)"; "" for kNone.
std::string to_string(const RawStop& stop);
/// The stop a text names (the inverse of to_string, "" included); nullopt for any other text.
std::optional<RawStop> raw_stop_from_string(std::string_view text);

/// j[key] as a stop, for the strict readers: UsageError naming the path when it is missing, not a
/// string, or not a stop's text ("WHERE.KEY: 'TEXT' is not a raw stop reason (...)").
RawStop raw_stop_field(const nlohmann::json& j, const char* key, const std::string& where);

}  // namespace ioprobe
