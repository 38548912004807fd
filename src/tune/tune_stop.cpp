#include "tune/tune_stop.hpp"

#include "core/json_text_value.hpp"

namespace ioprobe {

TuneStop tune_stop_of_run(const LoaderStop& run) { return {.kind = TuneStopKind::kLoaderRun, .run = run}; }

std::string to_string(const TuneStop& stop) {
  switch (stop.kind) {
    case TuneStopKind::kCompleted:
      return "completed";
    case TuneStopKind::kBudget:
      return "budget";
    case TuneStopKind::kInterrupted:
      return "interrupted";
    case TuneStopKind::kLoaderRun:
      return to_string(stop.run);
  }
  return "";
}

std::optional<TuneStop> tune_stop_from_string(std::string_view text) {
  for (const TuneStopKind k : {TuneStopKind::kCompleted, TuneStopKind::kBudget, TuneStopKind::kInterrupted})
    if (text == to_string(TuneStop{.kind = k})) return TuneStop{.kind = k};
  if (const auto run = loader_stop_from_string(text)) return tune_stop_of_run(*run);
  return std::nullopt;
}

TuneStop tune_stop_field(const nlohmann::json& j, const char* key, const std::string& where) {
  return json_text_value(j, key, where, tune_stop_from_string,
                         "a tune stop reason (completed, budget, interrupted, or a loader run's stop reason)");
}

}  // namespace ioprobe
