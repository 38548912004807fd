// Strict reading of a value a JSON document spells as one of a fixed set of texts (an engine's
// name, why a run stopped): the text is read as json_field<std::string> reads it, then parsed; a
// text the parser does not know is refused with its path, as json_field refuses a mistyped value.
#pragma once

#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_field.hpp"

namespace ioprobe {

/// j[key] as the value `parse` (text -> std::optional<T>) makes of it. UsageError (exit 2):
/// "WHERE.KEY: missing key" / "expected a string, found ..." as json_field, and
/// "WHERE.KEY: 'TEXT' is not WHAT" when `parse` gives nullopt (`what`: "an engine (io_uring,
/// psync)", the accepted texts in parentheses).
template <class Parse>
auto json_text_value(const nlohmann::json& j, const char* key, const std::string& where, Parse&& parse,
                     const char* what) {
  const std::string text = json_field<std::string>(j, key, where);
  auto value = std::forward<Parse>(parse)(text);
  if (!value) throw UsageError(fmt::format("{}: '{}' is not {}", json_path(where, key), text, what));
  return *std::move(value);
}

}  // namespace ioprobe
