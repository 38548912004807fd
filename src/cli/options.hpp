// Shared machinery for every subcommand's options: parsing the command line and workload INI
// files with the same Boost.Program_options descriptions, locating presets, and typed getters
// that turn a bad value into one clear UsageError line (exit code 2).
//
// Numbers, sizes and durations are declared as strings and parsed here, so "-1", "abc" or "4XB"
// give a message naming the option, the value and the accepted form (Boost would wrap "-1"
// into a huge unsigned number).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe::comm {
class Comm;
}

namespace ioprobe::cli {

namespace po = boost::program_options;

/// Everything a subcommand receives from main().
struct CommandContext {
  std::vector<std::string> argv;  // the whole command line as typed, for the result document
  std::vector<std::string> args;  // the arguments after the subcommand name
  comm::Comm* comm = nullptr;     // the job's processes (a LocalComm when no launcher started it)
  // Set when every process of a multi-host job learned the command's outcome (a JobFailure, or
  // the result gathered): its exit code needs no MPI_Abort.
  mutable bool job_outcome_shared = false;
};

/// Parses `args` against `desc` (no positional arguments). Throws UsageError on unknown options,
/// missing values or stray words, naming them and pointing at --help.
po::variables_map parse_command_line(const std::vector<std::string>& args, const po::options_description& desc,
                                     const std::string& command);

/// Adds the settings of INI file `path` to `vm`; values already in `vm` (the command line) win.
/// Throws UsageError for unreadable files, syntax errors and unknown keys (with file and key).
/// Records in `vm` which file set each value, so that the getters below name the file and the
/// key (not "--key") when such a value is bad.
void load_ini(const std::string& path, const po::options_description& desc, po::variables_map& vm);

/// The INI file that set option `name` in `vm` ("" when it came from the command line or is absent).
std::string ini_source(const po::variables_map& vm, const std::string& name);

/// How to name option `name` in an error: "--name", or "workload file 'F.ini', key 'name'" when
/// an INI file set it.
std::string option_label(const po::variables_map& vm, const std::string& name);

/// Runs `check` (which validates the value of option `name` and throws UsageError naming
/// "--name"); when an INI file set that value, the error is rethrown prefixed with the file.
template <class F>
auto checked_value(const po::variables_map& vm, const std::string& name, F&& check) -> decltype(check());

/// Resolves a workload name ("imagenet-like") or a file path to an existing file. Names are
/// looked up as <dir>/<name>.ini in $IOPROBE_WORKLOADS, <exe>/../share/ioprobe/workloads,
/// <exe>/../workloads and the source tree's workloads/. Throws UsageError listing the presets.
/// `kind` is "dataset" (presets that set files, for run/gen/tune) or "checkpoint" (presets that
/// set params, for `ioprobe checkpoint --model`); a preset of the other kind is refused with a
/// pointer to the right command.
std::string find_workload_file(const std::string& name_or_path, const std::string& kind = "dataset");

/// The directory holding the presets and the accelerator catalog (first match of the search
/// path above that exists). Throws UsageError when none is found.
std::string workloads_dir();

/// Names of the presets available (files *.ini in workloads_dir()), sorted.
std::vector<std::string> list_presets(const std::string& kind = "dataset");

// Typed getters. `name` is the option name without dashes; each throws UsageError naming
// "--name" and the value when it does not parse or lies outside [lo, hi].
bool has(const po::variables_map& vm, const std::string& name);
std::string get_string(const po::variables_map& vm, const std::string& name, const std::string& fallback = "");
uint64_t get_count(const po::variables_map& vm, const std::string& name, uint64_t fallback, uint64_t lo, uint64_t hi);
uint64_t get_size(const po::variables_map& vm, const std::string& name, uint64_t fallback, uint64_t lo, uint64_t hi);
double get_duration(const po::variables_map& vm, const std::string& name, double fallback);
double get_double(const po::variables_map& vm, const std::string& name, double fallback, double lo, double hi);
/// "true/false/yes/no/on/off/1/0" as written in INI files or after --opt=.
bool get_bool(const po::variables_map& vm, const std::string& name, bool fallback);
/// A switch and its opposite (--shuffle / --no-shuffle) read as one value: `positive`'s, or the
/// negation of `negative`'s, or `fallback` when neither is given. Both from the same source (the
/// command line, or one workload file) is a UsageError naming both, as Boost.Program_options'
/// own example `conflicting_options` (libs/program_options/example/real.cpp) refuses such a
/// pair; one from a workload file and one from the command line: the command line's wins.
bool get_bool_pair(const po::variables_map& vm, const std::string& positive, const std::string& negative,
                   bool fallback);
/// Value must be one of `choices`.
std::string get_choice(const po::variables_map& vm, const std::string& name, const std::string& fallback,
                       const std::vector<std::string>& choices);

template <class F>
auto checked_value(const po::variables_map& vm, const std::string& name, F&& check) -> decltype(check()) {
  try {
    return check();
  } catch (const UsageError& e) {
    const std::string file = ini_source(vm, name);
    if (file.empty()) throw;
    throw UsageError("workload file '" + escape_bytes(file) + "', key '" + name + "': " + e.what());
  }
}

}  // namespace ioprobe::cli
