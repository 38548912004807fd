#include "cli/options.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "core/value_range.hpp"

namespace ioprobe::cli {

namespace {

// Prefix of the variables_map entries recording which INI file set an option (see load_ini).
const std::string kIniSourcePrefix = " ini-source ";

// Boost.Program_options (1.74) formats its error messages by replacing placeholders such as
// "%canonical_option%" with the user's text, repeatedly: text that itself contains a placeholder
// makes that loop forever (found by tests/fuzz). Such text is refused before Boost sees it.
void refuse_boost_placeholders(const std::string& text, const std::string& where) {
  // Every placeholder name libboost_program_options 1.74 substitutes in its messages (from the
  // library's strings and errors.hpp): a value holding one makes that substitution loop forever.
  for (const char* p : {"%canonical_option%", "%option%", "%value%", "%prefix_option%", "%original_token%",
                        "%invalid_line%", "%prefix%", "%valual_option%", "%example%"})
    if (text.find(p) != std::string::npos)
      throw UsageError(fmt::format("{}: '{}' contains '{}', which ioprobe cannot take in an option; rename or quote "
                                   "differently",
                                   where, escape_bytes(text.substr(0, 200)), p));
}

}  // namespace

po::variables_map parse_command_line(const std::vector<std::string>& args, const po::options_description& desc,
                                     const std::string& command) {
  for (const auto& a : args) refuse_boost_placeholders(a, command);
  po::variables_map vm;
  try {
    // Positional words are collected (Boost tells them from option values) only to be refused by
    // name: ioprobe takes none.
    constexpr const char* kStray = "ioprobe-positional-words";
    po::options_description all;
    // clang-format off
    all.add(desc).add_options()(kStray, po::value<std::vector<std::string>>());
    // clang-format on
    po::positional_options_description pos;
    pos.add(kStray, -1);
    // Boost's default style takes a unique prefix of an option name for the option (--work for
    // --workers): a script with a typo would run with some other option. Only whole names count.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    auto parsed = po::command_line_parser(args).options(all).positional(pos).style(style).run();
    po::store(parsed, vm);
    if (vm.count(kStray))
      throw UsageError(fmt::format("{}: unexpected argument '{}'; options start with --, see 'ioprobe {} --help'",
                                   command, escape_bytes(vm[kStray].as<std::vector<std::string>>().front()), command));
  } catch (const po::unknown_option& e) {
    // The commands with progress lines take --quiet; the others say so rather than "unknown option".
    if (e.get_option_name() == "--quiet")
      throw UsageError(fmt::format("{}: 'ioprobe {}' takes no --quiet (the commands with progress lines take it: "
                                   "run, gen, tune, capacity, checkpoint, raw, scaling); drop it",
                                   command, command));
    // webdataset's shuffle buffer is emulated by run alone (docs/loaders.md): say so, not "unknown".
    if (e.get_option_name() == "--shuffle-buffer" || e.get_option_name() == "--shuffle-initial")
      throw UsageError(fmt::format("{}: {} is an option of 'ioprobe run' only (webdataset's shuffle buffer over "
                                   "sharded datasets, docs/loaders.md); 'ioprobe {}' does not emulate it: drop it, "
                                   "or measure that loader with ioprobe run",
                                   command, e.get_option_name(), command));
    throw UsageError(fmt::format("{}: {}; see 'ioprobe {} --help'", command, e.what(), command));
  } catch (const po::error& e) {
    throw UsageError(fmt::format("{}: {}; see 'ioprobe {} --help'", command, e.what(), command));
  }
  return vm;
}

void load_ini(const std::string& path, const po::options_description& desc, po::variables_map& vm) {
  std::ifstream file(path);
  if (!file) throw UsageError(fmt::format("cannot read workload file '{}': {}", escape_bytes(path), errno_text(errno)));
  std::stringstream text;
  text << file.rdbuf();
  refuse_boost_placeholders(text.str(), "workload file '" + escape_bytes(path) + "'");
  std::istringstream in(text.str());
  try {
    po::parsed_options parsed = po::parse_config_file(in, desc, /*allow_unregistered=*/false);
    std::vector<std::string> from_file;  // keys this file sets that the command line did not
    for (const auto& o : parsed.options)
      if (!vm.count(o.string_key)) from_file.push_back(o.string_key);
    po::store(parsed, vm);
    // Remember where each value came from, inside the map itself (an entry without value
    // semantics, which po::notify skips), so the typed getters can name the file and the key.
    for (const auto& k : from_file) vm.insert({kIniSourcePrefix + k, po::variable_value(boost::any(path), false)});
  } catch (const po::error& e) {
    throw UsageError(fmt::format("workload file '{}': {}; keys are the long option names without '--'",
                                 escape_bytes(path), e.what()));
  }
}

std::string ini_source(const po::variables_map& vm, const std::string& name) {
  auto it = vm.find(kIniSourcePrefix + name);
  return it == vm.end() ? std::string() : boost::any_cast<std::string>(it->second.value());
}

std::string option_label(const po::variables_map& vm, const std::string& name) {
  const std::string file = ini_source(vm, name);
  if (file.empty()) return "--" + name;
  return fmt::format("workload file '{}', key '{}'", escape_bytes(file), name);
}

namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> workload_search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("IOPROBE_WORKLOADS")) dirs.emplace_back(env);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = 0;
    std::string d(exe);
    d = d.substr(0, d.rfind('/'));
    dirs.push_back(d + "/../share/ioprobe/workloads");
    dirs.push_back(d + "/../workloads");
  }
  dirs.emplace_back(IOPROBE_SOURCE_WORKLOADS);
  return dirs;
}

// Dataset presets set "files"; checkpoint presets (llama3-*.ini) set "params" and belong to
// `ioprobe checkpoint --model`.
bool is_dataset_preset(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("files", 0) == 0 && line.find('=') != std::string::npos) return true;
  return false;
}

}  // namespace

std::string workloads_dir() {
  for (const auto& d : workload_search_path())
    if (is_dir(d)) return d;
  throw UsageError("cannot find the workloads/ folder (presets and accelerator catalog); set IOPROBE_WORKLOADS=DIR");
}

std::vector<std::string> list_presets(const std::string& kind) {
  std::vector<std::string> names;
  std::string dir;
  try {
    dir = workloads_dir();
  } catch (const UsageError&) {
    return names;
  }
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 4 && n.substr(n.size() - 4) == ".ini" && is_dataset_preset(dir + "/" + n) == (kind == "dataset"))
        names.push_back(n.substr(0, n.size() - 4));
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string find_workload_file(const std::string& name, const std::string& kind) {
  struct stat st {};
  bool looks_like_path = name.find('/') != std::string::npos ||
                         (name.size() > 4 && name.substr(name.size() - 4) == ".ini");
  if (looks_like_path) {
    int r = stat(name.c_str(), &st);
    if (r == 0 && S_ISREG(st.st_mode)) return name;
    if (r == 0)
      throw UsageError(fmt::format("workload file '{}' is not a regular file; give an .ini file", escape_bytes(name)));
    throw UsageError(fmt::format("workload file '{}' not found: {}", escape_bytes(name), errno_text(errno)));
  }
  for (const auto& d : workload_search_path()) {
    std::string p = d + "/" + name + ".ini";
    if (stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (kind == "dataset" && !is_dataset_preset(p))
        throw UsageError(fmt::format("'{}' is a checkpoint preset, not a dataset: use 'ioprobe checkpoint --model {}'",
                                     escape_bytes(name), escape_bytes(name)));
      if (kind == "checkpoint" && is_dataset_preset(p))
        throw UsageError(fmt::format("'{}' is a dataset preset, not a model: use 'ioprobe --dataset {}'",
                                     escape_bytes(name), escape_bytes(name)));
      return p;
    }
  }
  std::string known;
  for (const auto& n : list_presets(kind)) known += (known.empty() ? "" : ", ") + n;
  throw UsageError(fmt::format("unknown {} preset '{}'; known presets: {} (or give a path to an .ini file)", kind,
                               escape_bytes(name), known.empty() ? "(none found)" : known));
}

bool has(const po::variables_map& vm, const std::string& name) { return vm.count(name) && !vm[name].defaulted(); }

std::string get_string(const po::variables_map& vm, const std::string& name, const std::string& fallback) {
  if (!vm.count(name)) return fallback;
  return vm[name].as<std::string>();
}

namespace {

// The one out-of-range message of every numeric option: the option (or INI file and key), the
// value as given, and the accepted range.
[[noreturn]] void out_of_range(const std::string& opt, const std::string& given, const std::string& lo,
                               const std::string& hi, const char* what = "a value") {
  throw UsageError(
      fmt::format("{}: {} is out of range; give {} from {} to {}", opt, escape_bytes(given), what, lo, hi));
}

std::string number_text(double v) { return fmt::format("{:.15g}", v); }

}  // namespace

uint64_t get_count(const po::variables_map& vm, const std::string& name, uint64_t fallback, uint64_t lo, uint64_t hi) {
  if (!vm.count(name)) return fallback;
  const std::string opt = option_label(vm, name);
  const std::string& given = vm[name].as<std::string>();
  uint64_t v = 0;
  try {
    v = parse_count(given, opt);
  } catch (const ValueOutOfRange&) {  // over 2^64 - 1 (e.g. 99999999999999999999)
    out_of_range(opt, given, format_count(lo), format_count(hi));
  }
  if (v < lo || v > hi) out_of_range(opt, given, format_count(lo), format_count(hi));
  return v;
}

uint64_t get_size(const po::variables_map& vm, const std::string& name, uint64_t fallback, uint64_t lo, uint64_t hi) {
  if (!vm.count(name)) return fallback;
  const std::string opt = option_label(vm, name);
  const std::string& given = vm[name].as<std::string>();
  uint64_t v = 0;
  try {
    v = parse_size(given, opt);
  } catch (const ValueOutOfRange&) {  // too large for 64 bits (e.g. 1e99)
    out_of_range(opt, given, format_bytes(lo), format_bytes(hi), "a size");
  }
  if (v < lo || v > hi) out_of_range(opt, given, format_bytes(lo), format_bytes(hi), "a size");
  return v;
}

double get_duration(const po::variables_map& vm, const std::string& name, double fallback) {
  if (!vm.count(name)) return fallback;
  const std::string opt = option_label(vm, name);
  const std::string& given = vm[name].as<std::string>();
  try {
    return parse_duration(given, opt);
  } catch (const ValueOutOfRange&) {
    out_of_range(opt, given, "0 s", "365 days (e.g. 30s, 10m, 24h)", "a duration");
  }
}

double get_double(const po::variables_map& vm, const std::string& name, double fallback, double lo, double hi) {
  if (!vm.count(name)) return fallback;
  const std::string& s = vm[name].as<std::string>();
  std::string opt = option_label(vm, name);
  // Decimal only (core/units.hpp parse_decimal): strtod took "0x10" as 16 and "inf" as a number.
  // A leading '-' is the number's sign, checked against the range like any other value.
  const bool negative = !s.empty() && s.front() == '-';
  double v = 0;
  try {
    v = parse_decimal(negative ? std::string_view(s).substr(1) : std::string_view(s), opt);
  } catch (const ValueOutOfRange&) {
    out_of_range(opt, s, number_text(lo), number_text(hi));
  } catch (const UsageError&) {
    throw UsageError(fmt::format("{}: '{}' is not a decimal number; give a number from {} to {} (digits, an optional "
                                 "fraction and exponent, e.g. 12, 0.5, 1e6)",
                                 opt, escape_bytes(s), number_text(lo), number_text(hi)));
  }
  if (negative) v = -v;
  if (!(v >= lo && v <= hi)) out_of_range(opt, s, number_text(lo), number_text(hi));
  return v;
}

bool get_bool(const po::variables_map& vm, const std::string& name, bool fallback) {
  if (!vm.count(name)) return fallback;
  std::string s = vm[name].as<std::string>();
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
  if (s == "false" || s == "no" || s == "off" || s == "0") return false;
  throw UsageError(fmt::format("{}: '{}' is not a boolean; use true or false (also 1/0, yes/no, on/off)",
                               option_label(vm, name), escape_bytes(s)));
}

bool get_bool_pair(const po::variables_map& vm, const std::string& positive, const std::string& negative,
                   bool fallback) {
  const bool pos = has(vm, positive), neg = has(vm, negative);
  if (pos && neg) {
    const std::string pos_file = ini_source(vm, positive), neg_file = ini_source(vm, negative);
    if (pos_file == neg_file)
      throw UsageError(
          fmt::format("--{} and --{} are opposites: give one of them{}", positive, negative,
                      pos_file.empty() ? "" : fmt::format(" (workload file '{}' sets both)", escape_bytes(pos_file))));
    // The command line wins over a workload file.
    return pos_file.empty() ? get_bool(vm, positive, fallback) : !get_bool(vm, negative, !fallback);
  }
  if (pos) return get_bool(vm, positive, fallback);
  if (neg) return !get_bool(vm, negative, !fallback);
  return fallback;
}

std::string get_choice(const po::variables_map& vm, const std::string& name, const std::string& fallback,
                       const std::vector<std::string>& choices) {
  std::string v = get_string(vm, name, fallback);
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  throw UsageError(fmt::format("{}: '{}' is not one of: {}", option_label(vm, name), escape_bytes(v), list));
}

}  // namespace ioprobe::cli
