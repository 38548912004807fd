#include "raw/raw_stop.hpp"

#include <csignal>

#include "core/interrupt.hpp"
#include "core/json_text_value.hpp"

namespace ioprobe {

RawStop raw_stop_interrupted(int signal) {
  return {.kind = RawStopKind::kInterrupted, .signal = signal == SIGTERM ? SIGTERM : SIGINT};
}

std::string to_string(const RawStop& stop) {
  switch (stop.kind) {
    case RawStopKind::kOnePass:
      return "one pass over the region";
    case RawStopKind::kRuntime:
      return "runtime reached";
    case RawStopKind::kErrors:
      return "stopped early by I/O errors";
    case RawStopKind::kInterrupted:
      return interrupted_text(stop.signal);
    case RawStopKind::kNone:
      break;
  }
  return "";
}

std::optional<RawStop> raw_stop_from_string(std::string_view text) {
  for (const RawStop s :
       {RawStop{}, RawStop{.kind = RawStopKind::kOnePass}, RawStop{.kind = RawStopKind::kRuntime},
        RawStop{.kind = RawStopKind::kErrors}, raw_stop_interrupted(SIGINT), raw_stop_interrupted(SIGTERM)})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

RawStop raw_stop_field(const nlohmann::json& j, const char* key, const std::string& where) {
  return json_text_value(j, key, where, raw_stop_from_string,
                         "a raw stop reason (one pass over the region, runtime reached, stopped early by I/O errors, "
                         "interrupted (SIGINT), interrupted (SIGTERM))");
}

}  // namespace ioprobe
