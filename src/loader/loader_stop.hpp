// Why a loader run ended, as a value (LoaderResult::stop): the kind, and the signal or the count
// of canceled reads where the text carries one. The text is the one result documents and reports
// show ("completed", "interrupted (SIGINT)", ...); to_string and loader_stop_from_string are its
// one spelling each way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ioprobe {

enum class LoaderStopKind {
  kNone,           // not set: an empty result before any part was merged into it (text "")
  kCompleted,      // "completed": every epoch ran
  kDuration,       // "duration reached" (--duration)
  kInterrupted,    // "interrupted (SIGINT)" | "interrupted (SIGTERM)"
  kCanceledReads,  // "stopped early: io_uring canceled N reads (ECANCELED, see ERRORS)"
  kStonewall,      // "stonewall: the first host to read its share ended the measurement"
  kPeerFailed,     // "stopped: a rank of another process failed (see its error)"
};

struct LoaderStop {
  LoaderStopKind kind = LoaderStopKind::kNone;
  int signal = 0;               // kInterrupted: SIGINT (2) or SIGTERM (15); 0 otherwise
  uint64_t canceled_reads = 0;  // kCanceledReads: the reads io_uring canceled; 0 otherwise

  bool operator==(const LoaderStop&) const = default;
  /// Every epoch ran (kCompleted).
  bool completed() const { return kind == LoaderStopKind::kCompleted; }
};

/// An interruption by signal `signal` (SIGTERM names SIGTERM, any other SIGINT, as the text does).
LoaderStop loader_stop_interrupted(int signal);

/// The text: "completed", "duration reached", "interrupted (SIGTERM)", "stopped early: io_uring
/// canceled 8 reads (ECANCELED, see ERRORS)", ...; "" for kNone.
std::string to_string(const LoaderStop& stop);
/// The stop a text names (the inverse of to_string, "" included); nullopt for any other text.
std::optional<LoaderStop> loader_stop_from_string(std::string_view text);

/// j[key] as a stop, for the strict readers: UsageError naming the path when it is missing, not a
/// string, or not a stop's text ("WHERE.KEY: 'TEXT' is not a loader stop reason (...)").
LoaderStop loader_stop_field(const nlohmann::json& j, const char* key, const std::string& where);

}  // namespace ioprobe
