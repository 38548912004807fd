// The error a number parser throws when the text is a well-formed number too large for what it
// is parsed into, so that a caller that knows the option's accepted range can name it.
#pragma once

#include "core/error.hpp"

namespace ioprobe {

/// A well-formed number out of what the parser can hold: parse_count over 2^64 - 1, parse_size
/// over 9e18 B, parse_duration over 365 days (core/units.hpp). A UsageError (exit 2) whose
/// message names the option and the value; cli/options.cpp catches it to add the option's range.
class ValueOutOfRange : public UsageError {
 public:
  using UsageError::UsageError;
};

}  // namespace ioprobe
