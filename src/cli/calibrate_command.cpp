// `ioprobe calibrate`: runs the user's own Dataset (FILE.py:FUNC) in real PyTorch DataLoaders on
// their files and writes the calibration document that `run`, `tune` and `capacity` read with
// --calibration. The measuring is python/ioprobe_calibrate.py's (calibrate/driver.hpp runs it).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "calibrate/calibration.hpp"
#include "calibrate/driver.hpp"
#include "cli/calibrate_read.hpp"
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "report/calibration_text.hpp"
#include "report/document.hpp"
#include "topology/host.hpp"
#include "tune/sweep.hpp"

namespace ioprobe::cli {

namespace {

// The `ioprobe run` command that uses the calibration at `json_path`, as it runs when printed: these
// files at this batch size (the figures are per batch), in the shape the Dataset read them.
std::string run_hint(const Calibration& cal, const std::string& data, uint64_t batch, const std::string& json_path) {
  const double files = static_cast<double>(cal.files);
  const double held = static_cast<double>(cal.dataset_samples);
  if (cal.dataset_samples == 0 && cal.dataset_kind != "iterable")
    return fmt::format("use it with (your dataset's directory in place of this one, if it is larger):\n  ioprobe run "
                       "--data {} --batch-size {} --calibration {}\n",
                       shell_quote(data), batch, shell_quote(json_path));
  if (cal.dataset_samples == 0)  // a stream of one sample per file, in the stream's own order
    return fmt::format("use it with (your dataset's directory in place of this one, if it is larger; --no-shuffle: "
                       "an IterableDataset reads its files in its own order, here the listed one, with no sampler; "
                       "drop it if your stream shuffles them):\n  ioprobe run --data {} --no-shuffle --batch-size {} "
                       "--calibration {}\n",
                       shell_quote(data), batch, shell_quote(json_path));
  if (cal.dataset_kind != "iterable")  // rows of large files read by index: not what `run --data` reads
    return fmt::format(
        "your Dataset's {} files held {} samples ({:.0f} per file): `ioprobe run --data` would read each file as one "
        "sample, so no command is printed for it. Emulate reads of samples inside large files with --dataset-kind "
        "token (one fixed-size read per sample at its offset) and --calibration {}, or record the real job's reads "
        "with `ioprobe record` and replay them (docs/replay.md)\n",
        cal.files, cal.dataset_samples, held / files, shell_quote(json_path));
  // A stream's files hold its samples: a sharded dataset of their shape stands for them.
  return fmt::format(
      "your IterableDataset's {} files held {} samples ({:.0f} per file, {:.0f} B per sample with the files' own "
      "headers): a sharded dataset of that shape emulates them, its shard order shuffled per epoch (--no-shuffle "
      "reads the shards in order, as webdataset's shardshuffle=False; add --shuffle-buffer N [--shuffle-initial I] "
      "for a .shuffle(N, initial=I) buffer; more --files for a longer run):\n  ioprobe run --dataset "
      "resnet50-tfrecord-like --records-per-file {:.0f} --record-size {:.0f} --record-size-dist fixed --files {} "
      "--batch-size {} --calibration {}\n",
      cal.files, cal.dataset_samples, held / files, static_cast<double>(cal.data_bytes) / held,
      std::max(1.0, std::round(held / files)), std::max(1.0, std::round(static_cast<double>(cal.data_bytes) / held)),
      cal.files, batch, shell_quote(json_path));
}

std::string absolute(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return when;
}

// --oversubscribe: "none" (or empty: the default, 2,4) into the driver's list, each level a whole
// number of worker processes per CPU from 2 to 64 (tune's list parser), given in increasing order.
std::string oversubscribe_levels(const std::string& given) {
  if (given == "none") return "";
  const std::string list = given.empty() ? "2,4" : given;
  // tune's parser checks each item and sorts them; the order given is checked on the items here.
  const std::vector<uint32_t> levels = parse_uint_list(list, "--oversubscribe", 2, 64);
  std::vector<uint32_t> given_order;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    given_order.push_back(parse_uint_list(list.substr(pos, comma - pos), "--oversubscribe", 2, 64).front());
    pos = comma + 1;
  }
  for (size_t i = 1; i < given_order.size(); ++i)
    if (given_order[i] <= given_order[i - 1])
      throw UsageError(fmt::format("--oversubscribe '{}': {} is not above {}, the level before it; give the levels in "
                                   "increasing order, e.g. 2,4 (or none)",
                                   escape_bytes(given), given_order[i], given_order[i - 1]));
  std::string out = fmt::format("{}", fmt::join(levels, ","));
  if (out != list)  // the parser's own forms (spaces, leading zeros): one plain spelling in the document
    throw UsageError(
        fmt::format("--oversubscribe '{}': give the levels as increasing whole numbers, e.g. 2,4 (or none)",
                    escape_bytes(given)));
  return out;
}

// How long the user's code may run in a calibration unless --timeout says. A default calibration at
// batch size 256 takes 52,224 samples (6 passes of 16 batches, and the oversubscribed passes' 27,648
// on 2 CPUs): at 10 ms of CPU per sample on 2 CPUs, about 6 minutes of work (arithmetic, not measured).
constexpr double kCalibrationTimeoutDefaultS = 600;

// A temporary file made in `dir` (mkstemp), removed on every return and throw; a second Ctrl-C
// (core/interrupt.hpp's quit) removes it too.
struct TempFile {
  std::string path;
  int slot = -1;
  explicit TempFile(const std::string& dir) : path(dir + "/ioprobe-calibrate-XXXXXX") {
    const int fd = mkstemp(path.data());
    if (fd < 0)
      throw UsageError(fmt::format("cannot create a temporary file in {} ({}); set TMPDIR to a writable directory",
                                   escape_bytes(dir), errno_text(errno)));
    close(fd);
    slot = remove_on_quit(path);
  }
  ~TempFile() {
    unlink(path.c_str());
    keep_on_quit(slot);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// The driver's result file (a JSON object of some KB); "" when it cannot be read.
std::string read_small_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Says that the user's code printed on stdout, and how much of it was shown (DriverWatch's mark).
void say_stdout(const DriverRun& run, const DriverWatch& watch) {
  if (run.out_lines == 0) return;
  std::cerr << fmt::format(
      "ioprobe calibrate: your code printed {} line(s) ({}) on stdout; {} shown above after '{}'{} (ioprobe's "
      "stdout carries only its report)\n",
      format_count(run.out_lines), format_bytes(run.out_bytes),
      run.out_lines <= watch.stdout_lines_shown ? std::string("all")
                                                : fmt::format("the first {}", watch.stdout_lines_shown),
      watch.stdout_mark.substr(watch.stdout_mark.find('[')),
      run.out_lines <= watch.stdout_lines_shown ? "" : ", the rest only counted");
}

// The end of a calibration --timeout stopped: what was running and what to do.
std::string timeout_text(const DriverRun& run, double timeout_s, const std::string& file) {
  // The driver's last line, "[12.1 s] pass 1 of 6: ..." or "[12.1 s]   still: pass 1 of 6: ...: 0 of 192 samples
  // done, 10 s in this step", without the time since its start.
  std::string step = run.last_step;
  if (const size_t p = step.find("] "); p != std::string::npos) step = step.substr(p + 2);
  step.erase(0, std::min(step.size(), step.find_first_not_of(' ')));
  if (step.rfind("still: ", 0) == 0) step = step.substr(7);
  return fmt::format(
      "ioprobe calibrate: stopped: --timeout {} passed while {}; the stacks above show where each process was (your "
      "code's lines are those of {}). If it was working, only slowly, give a longer --timeout (e.g. --timeout {}) "
      "or --timeout 0 for no limit, or fewer --samples; if it hangs, fix the code at the top of its stack. No "
      "calibration document was written.\n",
      format_seconds(timeout_s),
      run.last_step.empty() ? std::string("the driver had not yet started its first step (importing torch)")
                            : fmt::format("the calibration was at: {}", step),
      escape_bytes(file), fmt::format("{:.0f}m", std::ceil(std::max(2 * timeout_s, 60.0) / 60)));
}

}  // namespace

int cmd_calibrate(const CommandContext& ctx) {
  po::options_description desc(
      "usage: ioprobe calibrate --dataset-factory FILE.py:FUNC --data DIR [--python PY] [--batch-size B]\n"
      "                         [--samples N] [--oversubscribe 2,4] [--oversubscribe-cpus K] [--timeout D]\n"
      "                         [--json CAL.json]\n\n"
      "Measures what your own Dataset costs in a real PyTorch DataLoader on this host (CPU per sample in the\n"
      "workers, the main process's CPU per batch, bytes per batch, worker start-up, pin_memory), with your\n"
      "files in the page cache, at num_workers 0, 1 and 2; and the workers' costs with more worker processes\n"
      "than CPUs (--oversubscribe). `ioprobe run --calibration FILE` then models your loader with these costs.\n"
      "FUNC(paths: list[str]) returns a torch Dataset over those files; a module-level collate_fn, when FILE.py\n"
      "defines one, is the DataLoader's collate_fn. A thread pipeline instead: FUNC(paths, num_threads) returns\n"
      "an iterable of batches built by num_threads threads of one process (docs/calibrate.md).\n\noptions");
  // clang-format off
  desc.add_options()                                                                              //
      ("help,h", "print this help")                                                               //
      ("dataset-factory", po::value<std::string>(), "FILE.py:FUNC, FUNC(paths) returns your Dataset, or FUNC(paths, num_threads) your thread pipeline's batches")  //
      ("data", po::value<std::string>(), "directory of your files (the first --samples of them, sorted)")  //
      ("python", po::value<std::string>(),
       "the python3 your training uses [python3 on PATH, else /usr/bin/python3: the first that imports torch]")  //
      ("batch-size", po::value<std::string>(), "DataLoader batch_size [256]")                    //
      ("samples", po::value<std::string>(), "files used per run [16 batches]")                   //
      ("oversubscribe", po::value<std::string>(),
       "worker processes per CPU at which the workers' costs are measured too, each a whole number from 2 to 64: "
       "a pass at num_workers = P x K bound to K CPUs, over the files as often as needed; 'none' skips them [2,4]")  //
      ("oversubscribe-cpus", po::value<std::string>(),
       "K: CPUs those passes are bound to [2, or 1 on a 1-CPU host]")  //
      ("timeout", po::value<std::string>(),
       "the longest your code may run in the calibration, e.g. 30m; 0: no limit. When it passes, each process's "
       "Python stack (every thread) and the step that was running are shown, and ioprobe calibrate exits 124 [10m]")  //
      ("json", po::value<std::string>(), "write the calibration document to FILE (JSON, written atomically)");
  // clang-format on
  po::variables_map vm = parse_command_line(ctx.args, desc, "calibrate");
  if (vm.count("help")) {
    std::cout << desc
              << "\nExit codes: 0 ok, 1 the measurement failed, 2 bad usage, or your code or data is unusable,\n"
                 "  124 --timeout passed (no calibration document is written), 130/143 interrupted (none either).\n";
    return kExitOk;
  }
  const std::string factory = get_string(vm, "dataset-factory");
  if (factory.empty()) throw UsageError("--dataset-factory FILE.py:FUNC is required; see ioprobe calibrate --help");
  const size_t colon = factory.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == factory.size())
    throw UsageError(fmt::format("--dataset-factory '{}': give FILE.py:FUNC, the module and the function that "
                                 "returns your Dataset (e.g. train.py:make_dataset)",
                                 escape_bytes(factory)));
  const std::string file = factory.substr(0, colon), func = factory.substr(colon + 1);
  struct stat st {};
  if (stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw UsageError(fmt::format("--dataset-factory '{}': {} is not a file; give the path of your Dataset's module",
                                 escape_bytes(factory), escape_bytes(file)));
  const std::string data = get_string(vm, "data");
  if (data.empty()) throw UsageError("--data DIR is required: the directory of the files your Dataset reads");
  if (stat(data.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("--data '{}' {}; give the directory of your files", escape_bytes(data),
                                 errno == ENOENT ? "does not exist" : "is not a directory"));
  const uint64_t batch = get_count(vm, "batch-size", 256, 1, 1 << 20);
  // The num_workers=2 pass needs 3 steady batches from each worker, 6 in all: the driver refuses
  // fewer before any pass (python/ioprobe_calibrate.py), as only it knows whether the files are the
  // samples (a map-style Dataset) or hold them (an IterableDataset over shards).
  const uint64_t samples = get_count(vm, "samples", 16 * batch, 1, 1ULL << 32);
  const std::string json_path = get_string(vm, "json");
  if (!json_path.empty()) check_output_path(json_path, "--json", "calibration");
  if (vm.count("oversubscribe") && get_string(vm, "oversubscribe").empty())
    throw UsageError("--oversubscribe is empty; give the worker processes per CPU to measure (e.g. 2,4), or none");
  const std::string over = oversubscribe_levels(get_string(vm, "oversubscribe"));
  const int cpus_allowed = probe_host().cpus_allowed;
  const uint64_t over_cpus = get_count(vm, "oversubscribe-cpus",
                                       static_cast<uint64_t>(std::min(2, std::max(1, cpus_allowed))), 1, 4096);
  if (static_cast<int64_t>(over_cpus) > std::max(1, cpus_allowed))
    throw UsageError(fmt::format("--oversubscribe-cpus {}: this process may run on {} CPU(s); give at most {}",
                                 over_cpus, cpus_allowed, std::max(1, cpus_allowed)));

  const double timeout_s = vm.count("timeout") ? parse_duration(get_string(vm, "timeout"), "--timeout")
                                               : kCalibrationTimeoutDefaultS;

  const std::string driver = find_calibration_driver();
  const std::vector<std::string> pythons = python_candidates(get_string(vm, "python"));
  if (pythons.empty())
    throw UsageError("no python3 found on PATH or at /usr/bin/python3; install one with PyTorch (Debian: apt-get "
                     "install python3-torch) or give --python PY");
  // The driver writes the files it used (for ioprobe's own read of them, calibrate_read.hpp) and
  // its result into temporary files: its stdout is the user's code's.
  const char* tmpdir = getenv("TMPDIR");
  const std::string tmp = tmpdir && *tmpdir ? tmpdir : "/tmp";  // an empty TMPDIR is unset
  const TempFile paths_file(tmp), result_file(tmp);
  std::vector<std::string> args{"--factory",
                                absolute(file),
                                "--func",
                                func,
                                "--data",
                                absolute(data),
                                "--batch-size",
                                std::to_string(batch),
                                "--samples",
                                std::to_string(samples),
                                "--oversubscribe",
                                over,
                                "--oversubscribe-cpus",
                                std::to_string(over_cpus),
                                "--paths-out",
                                paths_file.path,
                                "--result-out",
                                result_file.path};
  DriverWatch watch;
  watch.timeout_s = timeout_s;
  watch.stdout_mark = "ioprobe calibrate: [stdout of your code] ";
  DriverRun run;
  std::string used;
  // The driver's own "no torch" exit says so on stderr; a silent exit 3 is some other program's.
  const auto no_torch = [](const DriverRun& r) {
    return r.exit_code == kDriverNoTorch && r.signal == 0 && !r.silent();
  };
  for (size_t i = 0; i < pythons.size() && !interrupted(); ++i) {
    used = pythons[i];
    std::vector<std::string> with_next = args;  // the driver's no-torch line then says what comes next
    if (i + 1 < pythons.size()) with_next.insert(with_next.end(), {"--next-python", pythons[i + 1]});
    run = run_driver(used, driver, with_next, watch);
    if (!no_torch(run)) break;
  }
  say_stdout(run, watch);
  if (run.timed_out) {
    std::cerr << timeout_text(run, timeout_s, file);
    return kExitCalibrationTimeout;
  }
  // Ctrl-C (or SIGTERM): the driver was told and ended quietly; no document, exit 130 / 143 as a
  // run's. Nothing was written: the document is written whole, after a driver that finished.
  if (interrupted()) {
    std::cerr << "ioprobe calibrate: interrupted; no calibration document was written\n";
    return interrupt_exit_code();
  }
  if (no_torch(run))
    throw UsageError(fmt::format("no python3 that imports torch (tried {}); install PyTorch (Debian: apt-get install "
                                 "python3-torch) or give --python with the interpreter your training uses",
                                 fmt::join(pythons, ", ")));
  if (run.exit_code != 0 && driver_failure_is_usage(run))
    throw UsageError(driver_failure_text(used, driver, run));    // not a Python that ran the driver
  if (run.exit_code == 2 && run.signal == 0) return kExitUsage;  // the driver named the file and what to do
  if (run.exit_code != 0) throw Error(driver_failure_text(used, driver, run), kExitFailure);
  // The driver's result is in its file; stdout was the user's code's.
  const std::string result = read_small_file(result_file.path);
  std::string last = run.out;
  while (!last.empty() && last.back() == '\n') last.pop_back();
  if (const size_t nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
  std::optional<Calibration> parsed = calibration_from_driver_result(result, "the calibration driver " + driver);
  if (!parsed) {
    // It exited 0 without its result line: not the driver running (a --python that is no Python),
    // or the user's code ended the process early (os._exit, sys.exit in a worker's import).
    throw UsageError(fmt::format(
        "{} ran the calibration driver {} and exited 0 without its result ({}); give --python a python3 that "
        "imports torch, and check that your module does not end the process (os._exit, sys.exit) when imported or "
        "called",
        escape_bytes(used), driver,
        last.empty() ? std::string("it printed nothing")
                     : fmt::format("its last line: '{}'", escape_bytes(last.substr(0, 200)))));
  }
  Calibration cal = std::move(*parsed);
  std::cerr << "ioprobe calibrate: ioprobe's own read of the same files from the page cache (io_uring, psync)\n";
  std::vector<std::string> read_notes;
  try {
    measure_own_read(read_driver_paths(paths_file.path), static_cast<uint32_t>(batch), cal, read_notes);
  } catch (const Error& e) {  // a side figure: the driver's measurements are kept without it
    read_notes.push_back(fmt::format("ioprobe's own read was not measured ({}); run takes nothing off", e.what()));
  }
  for (const std::string& n : read_notes) std::cerr << "ioprobe calibrate: " << n << "\n";
  if (interrupted()) {
    std::cerr << "ioprobe calibrate: interrupted; no calibration document was written\n";
    return interrupt_exit_code();
  }
  const HostInfo host = probe_host();
  cal.ioprobe_version = IOPROBE_VERSION;
  cal.created = utc_now();
  for (const auto& a : ctx.argv) cal.command.push_back(escape_bytes(a));
  cal.code_file = absolute(file);
  cal.function = func;
  cal.data_dir = absolute(data);
  cal.hostname = host.hostname;
  cal.kernel = host.kernel;
  cal.cpus_allowed = host.cpus_allowed;
  // The text and the file are both the document calibration_to_json writes.
  std::cout << render_calibration_text(calibration_to_json(cal));
  if (!json_path.empty()) {
    write_json_file(json_path, calibration_to_json(cal));
    std::cout << "\nwritten: " << escape_bytes(json_path) << "; " << run_hint(cal, absolute(data), batch, json_path);
  }
  return kExitOk;
}

}  // namespace ioprobe::cli
