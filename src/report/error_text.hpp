// Failures kept in results (core/error_record.hpp) as text: the only place their lines, counts
// and hints are written. The hint comes from the errno and the operation, never from reading the
// text back. Their JSON form is core/error_record.hpp's.
#pragma once

#include <string>
#include <vector>

#include "core/error_record.hpp"

namespace ioprobe {

/// error_line(e), then " (N times)" when e.count > 1.
std::string error_text(const ErrorRecord& e);

/// What to do about the failure, chosen from e.err and e.op: ECANCELED (io_uring could not
/// start its io-wq worker threads) names the thread limits. "" when there is nothing to add.
std::string error_hint(const ErrorRecord& e);

/// One failure's lines: `label` + error_text(e), then its hint (error_hint) after `indent` when
/// there is one. For results that keep one failure (a checkpoint's save, restore, verify).
std::string failure_lines(const std::string& label, const ErrorRecord& e, const std::string& indent);

/// The text lines of a result's error list: one per distinct failure (error_text, each prefixed
/// by `indent`), then each distinct hint once. "" for an empty list.
std::string error_list_text(const std::vector<ErrorRecord>& errors, const std::string& indent);

}  // namespace ioprobe
