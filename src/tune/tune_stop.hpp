// Why a tune sweep ended, as a value (TuneOutcome::stop): its own reasons (every run done, the
// --budget spent, a signal between runs), or the stop of the loader run that cut it short. The
// text is the one tune documents and reports show (tune.stop_reason: "completed", "budget",
// "interrupted", or the loader's text, e.g. "interrupted (SIGINT)"); to_string and
// tune_stop_from_string are its one spelling each way.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "loader/loader_stop.hpp"

namespace ioprobe {

enum class TuneStopKind {
  kCompleted,    // "completed": every run of the sweep done
  kBudget,       // "budget": the next run would not fit in --budget
  kInterrupted,  // "interrupted": a signal arrived between runs
  kLoaderRun,    // a run was cut short: its LoaderStop's text
};

struct TuneStop {
  TuneStopKind kind = TuneStopKind::kCompleted;
  LoaderStop run;  // kLoaderRun: the stop of the run that ended the sweep; not set otherwise

  bool operator==(const TuneStop&) const = default;
};

/// The stop of the run `run` that ended the sweep.
TuneStop tune_stop_of_run(const LoaderStop& run);

/// The text: "completed", "budget", "interrupted", or the run's loader stop text.
std::string to_string(const TuneStop& stop);
/// The stop a text names (the inverse of to_string); nullopt for any other text. "completed" is
/// the sweep's own (a run that completed does not end a sweep).
std::optional<TuneStop> tune_stop_from_string(std::string_view text);

/// j[key] as a stop, for the strict readers: UsageError naming the path when it is missing, not a
/// string, or not a stop's text ("WHERE.KEY: 'TEXT' is not a tune stop reason (...)").
TuneStop tune_stop_field(const nlohmann::json& j, const char* key, const std::string& where);

}  // namespace ioprobe
