#include "loader/loader_stop.hpp"

#include <charconv>
#include <csignal>
#include <system_error>

#include <fmt/format.h>

#include "core/interrupt.hpp"
#include "core/json_text_value.hpp"

namespace ioprobe {

namespace {

constexpr std::string_view kCanceledPrefix = "stopped early: io_uring canceled ";
constexpr std::string_view kCanceledSuffix = " reads (ECANCELED, see ERRORS)";

}  // namespace

LoaderStop loader_stop_interrupted(int signal) {
  return {.kind = LoaderStopKind::kInterrupted, .signal = signal == SIGTERM ? SIGTERM : SIGINT};
}

std::string to_string(const LoaderStop& stop) {
  switch (stop.kind) {
    case LoaderStopKind::kCompleted:
      return "completed";
    case LoaderStopKind::kDuration:
      return "duration reached";
    case LoaderStopKind::kInterrupted:
      return interrupted_text(stop.signal);
    case LoaderStopKind::kCanceledReads:
      return fmt::format("{}{}{}", kCanceledPrefix, stop.canceled_reads, kCanceledSuffix);
    case LoaderStopKind::kStonewall:
      return "stonewall: the first host to read its share ended the measurement";
    case LoaderStopKind::kPeerFailed:
      return "stopped: a rank of another process failed (see its error)";
    case LoaderStopKind::kNone:
      break;
  }
  return "";
}

std::optional<LoaderStop> loader_stop_from_string(std::string_view text) {
  for (const LoaderStop s :
       {LoaderStop{}, LoaderStop{.kind = LoaderStopKind::kCompleted}, LoaderStop{.kind = LoaderStopKind::kDuration},
        loader_stop_interrupted(SIGINT), loader_stop_interrupted(SIGTERM),
        LoaderStop{.kind = LoaderStopKind::kStonewall}, LoaderStop{.kind = LoaderStopKind::kPeerFailed}})
    if (text == to_string(s)) return s;
  if (text.starts_with(kCanceledPrefix) && text.ends_with(kCanceledSuffix)) {
    const std::string_view count = text.substr(kCanceledPrefix.size(),
                                               text.size() - kCanceledPrefix.size() - kCanceledSuffix.size());
    LoaderStop s{.kind = LoaderStopKind::kCanceledReads};
    const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), s.canceled_reads);
    // Digits only, as to_string writes them: the text must read back to the same value.
    if (ec == std::errc() && end == count.data() + count.size() && to_string(s) == text) return s;
  }
  return std::nullopt;
}

LoaderStop loader_stop_field(const nlohmann::json& j, const char* key, const std::string& where) {
  return json_text_value(j, key, where, loader_stop_from_string,
                         "a loader stop reason (completed, duration reached, interrupted (SIGINT), interrupted "
                         "(SIGTERM), stopped early: io_uring canceled N reads ..., stonewall: ..., stopped: a rank "
                         "of another process failed ...)");
}

}  // namespace ioprobe
