#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "cli/gpu_preflight.hpp"
#include "cli/run_calibration.hpp"
#include "cli/run_config.hpp"
#include "cli/same_options.hpp"
#include "cli/shuffle_buffer_options.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "dataset/jpeg_content.hpp"
#include "topology/numa.hpp"

namespace ioprobe::cli {

namespace {

// --numa node:N names a node this host has: a bind to a missing node would bind no worker while
// the header still said node N.
void check_numa_node(const Placement& p, const std::string& text) {
  if (p.kind != Placement::Kind::Node) return;
  const Topology topo = discover();
  if (topo.has_node(p.node)) return;
  std::string nodes;
  for (const auto& n : topo.nodes) nodes += (nodes.empty() ? "" : ", ") + std::to_string(n.id);
  throw UsageError(
      fmt::format("--numa '{}': this host has no NUMA node {} ({}); give one of its nodes, local, "
                  "interleave or none",
                  text, p.node,
                  nodes.empty() ? "it reports no NUMA nodes in /sys/devices/system/node" : "its nodes: " + nodes));
}

// What `ioprobe gen --help` lists: only the options gen acts on (it parses the run's whole table,
// so that one command line and the presets serve both commands).
po::options_description gen_help_description() {
  po::options_description gen("ioprobe gen options");
  po::options_description all = run_options_description();
  for (const char* name : {"dataset",
                           "dir",
                           "regenerate",
                           "dataset-kind",
                           "files",
                           "dirs",
                           "file-size",
                           "file-size-stdev",
                           "file-size-min",
                           "file-size-max",
                           "file-size-dist",
                           "records-per-file",
                           "record-size",
                           "record-size-stdev",
                           "record-size-min",
                           "record-size-max",
                           "record-size-dist",
                           "seq-len",
                           "token-bytes",
                           "content",
                           "seed",
                           "quiet",
                           "help"})
    gen.add(boost::shared_ptr<po::option_description>(new po::option_description(all.find(name, false))));
  return gen;
}

}  // namespace

bool build_run_config(const CommandContext& ctx, bool for_gen, RunConfig& c) {
  po::options_description desc = run_options_description();
  po::variables_map vm = parse_command_line(ctx.args, desc, for_gen ? "gen" : "run");
  if (vm.count("help") && for_gen) {
    std::cout << "usage: ioprobe gen [OPTIONS]\n\n"
              << "Generates the synthetic dataset (or checks an existing one) and exits; 'ioprobe run' with the\n"
              << "same options then reads it. Options also work as 'name = value' lines in workload INI files\n"
              << "(command line wins). Options of 'ioprobe run' are accepted too, so one command line serves\n"
              << "both, and gen ignores them.\n\n"
              << gen_help_description() << "\nUnits: sizes take B, KB/MB/GB (10^3) or KiB/MiB/GiB (2^10; 4k = 4KiB).\n"
              << "Exit codes: 0 ok, 1 generation failed, 2 bad usage or input, 130/143 interrupted (the dataset\n"
              << "  is marked incomplete and the next gen or run regenerates it).\n";
    return false;
  }
  if (vm.count("help")) {
    std::cout << "usage: ioprobe " << (for_gen ? "gen" : "[run]") << " [OPTIONS]\n\n"
              << (for_gen ? "Generates the synthetic dataset (or checks an existing one) and exits.\n"
                          : "Reads a dataset the way PyTorch DataLoader workers do, consumes the batches at the\n"
                            "chosen GPUs' rate, and reports samples/s, MB/s, latency, AU and the bottleneck.\n")
              << "Options also work as 'name = value' lines in workload INI files (command line wins).\n"
              << desc << "\nUnits: sizes take B, KB/MB/GB (10^3) or KiB/MiB/GiB (2^10; 4k = 4KiB as in fio);\n"
              << "rates print MB/s (10^6 B/s) and MiB/s (2^20 B/s).\n"
              << "Exit codes: 0 ok, 1 run failed, 2 bad usage or input, 130/143 interrupted (partial result).\n";
    return false;
  }
  // Across hosts: every process must run this one plan (refused before any I/O otherwise).
  check_same_options(ctx, vm, desc, for_gen ? "gen" : "run", PresetFile::kDataset);
  run_config_from_vm(vm, desc, for_gen ? RunCommandKind::kGen : RunCommandKind::kRun, c);
  if (!for_gen) resolve_calibrated_worker_costs(c, false);  // this run's ranks x workers are final
  return true;
}

const char* name(CacheMode m) { return m == CacheMode::kWarm ? "warm" : "cold"; }
const char* name(DirectMode m) { return m == DirectMode::kOn ? "on" : m == DirectMode::kOff ? "off" : "auto"; }
const char* name(RateFamily m) { return m == RateFamily::kEmulation ? "emulation" : "training"; }

namespace {

// --content and --decode: what a generation writes, and whether the workers decode JPEG.
void apply_content(po::variables_map& vm, bool own_data, RunConfig& c) {
  DatasetSpec& s = c.spec;
  const bool given = vm.count("content") > 0;
  const ContentKind asked = checked_value(vm, "content", [&] {
    return parse_content_kind(get_choice(vm, "content", "synthetic", {"synthetic", "jpeg"}));
  });
  c.loader.decode_jpeg = get_choice(vm, "decode", "none", {"none", "jpeg"}) == "jpeg";
  if (given && own_data)
    throw UsageError(fmt::format("{}: your own files (--data, --file-list) are read as they are; --content chooses "
                                 "what a generated dataset holds: leave it out",
                                 option_label(vm, "content")));
  if (c.loader.decode_jpeg && s.kind != DatasetKind::kFiles)
    throw UsageError(fmt::format("--decode jpeg decodes one JPEG file per sample; a {} dataset's samples are records "
                                 "inside larger files: leave --decode out or use --dataset-kind files",
                                 dataset_kind_name(s.kind)));
  if (c.loader.decode_jpeg && given && asked != ContentKind::kJpeg)
    throw UsageError(fmt::format("--decode jpeg with {} {}: the workers would decode files that are not JPEG; give "
                                 "--content jpeg, or leave --decode out",
                                 option_label(vm, "content"), content_kind_name(asked)));
  // Not asked for: a dataset already there keeps its content; a new one is JPEG when it is decoded.
  s.content = given ? asked : c.loader.decode_jpeg ? ContentKind::kJpeg : ContentKind::kSynthetic;
  s.content_from_manifest = !given;
  if (own_data || s.content != ContentKind::kJpeg) return;
  const std::string how = given ? option_label(vm, "content") + " jpeg" : std::string("--decode jpeg (JPEG content)");
  if (s.kind != DatasetKind::kFiles)
    throw UsageError(fmt::format("{}: JPEG content is for file-per-sample datasets; a {} dataset holds records "
                                 "inside larger files: use --dataset-kind files, or --content synthetic",
                                 how, dataset_kind_name(s.kind)));
  if (s.size_min < kJpegMinBytes || s.size_max > kJpegMaxBytes)
    throw UsageError(fmt::format("{}: file sizes {} .. {} B (preset '{}' or --file-size*) reach outside the {} .. {} "
                                 "B a generated JPEG file may have; give --file-size-min {} --file-size-max {} or "
                                 "narrower, or --content synthetic",
                                 how, s.size_min, s.size_max, s.preset, kJpegMinBytes, kJpegMaxBytes,
                                 std::max(s.size_min, kJpegMinBytes), std::min(s.size_max, kJpegMaxBytes)));
}

// Your own files (--data, --file-list) are read as they are, all of them: the options that shape a
// generated dataset would be ignored, so one given on the command line is refused, naming both.
// (A preset's values for them are not: the preset describes the synthetic set your files replace.)
void refuse_generation_options(const po::variables_map& vm) {
  const char* own = vm.count("data") ? "data" : vm.count("file-list") ? "file-list" : nullptr;
  if (!own) return;
  const std::string own_text = fmt::format("--{} {}", own, escape_bytes(get_string(vm, own)));
  for (const char* k :
       {"files", "dir", "regenerate", "dataset-kind", "dirs", "records-per-file", "file-size", "file-size-stdev",
        "file-size-min", "file-size-max", "file-size-dist", "record-size", "record-size-stdev", "record-size-min",
        "record-size-max", "record-size-dist", "seq-len", "token-bytes"}) {
    if (!vm.count(k)) continue;
    const std::string given = fmt::format("--{} {}", k, escape_bytes(get_string(vm, k)));
    const std::string k_is = std::string(k) == "files" ? "sets how many files to generate"
                             : std::string(k) == "dir" ? "says where the generated dataset lives"
                                                       : "shapes a generated dataset";
    const bool data = std::string(own) == "data";
    const std::string what_to_do =
        std::string(k) == "files"
            ? (data ? "leave --files out (to read fewer of your files, list them with --file-list FILE)"
                    : "leave --files out (to read fewer of your files, list fewer in the --file-list file)")
        : std::string(k) == "dir"
            ? fmt::format(
                  "give one of them: --dir to generate and read a synthetic dataset, --{} to read your own files", own)
            : fmt::format("leave --{} out", k);
    throw UsageError(fmt::format("{} cannot go with {}: --{} reads your own files as they are, all of them, while "
                                 "--{} {} (it would be ignored); {}",
                                 given, own_text, own, k, k_is, what_to_do));
  }
}

// --gpu sets the GPU's step time through the catalog's rate (workloads/accelerators.json);
// --step-time and --gpu-samples-per-s set it themselves, and --gpu was then dropped without a word.
// One source sets it: both given in one place (the command line, or workload files) is refused;
// across places the command line wins, as for every option, and the notes say which one set it.
void resolve_rate_source(const po::variables_map& vm, RunConfig& c) {
  const char* own = vm.count("step-time") ? "step-time" : vm.count("gpu-samples-per-s") ? "gpu-samples-per-s" : nullptr;
  if (!own || !vm.count("gpu")) return;
  const std::string gpu = get_string(vm, "gpu"), rate = get_string(vm, own);
  const bool gpu_in_ini = !ini_source(vm, "gpu").empty(), rate_in_ini = !ini_source(vm, own).empty();
  if (gpu_in_ini == rate_in_ini)
    throw UsageError(fmt::format("{} {} and {} {} both set the GPU's step time (--gpu through the catalog's rate in "
                                 "workloads/accelerators.json); give one: --gpu for the catalog's figure, or --{} "
                                 "alone for your own (the report then names the GPU 'custom GPU')",
                                 option_label(vm, "gpu"), escape_bytes(gpu), option_label(vm, own), escape_bytes(rate),
                                 own));
  if (gpu_in_ini) {  // a preset's gpu under the command line's own rate
    c.notes.push_back(fmt::format("the GPU's step time comes from --{} {}, not from {} = {} (the catalog's {} rate is "
                                  "not used; the report names the GPU 'custom GPU')",
                                  own, escape_bytes(rate), option_label(vm, "gpu"), escape_bytes(gpu),
                                  escape_bytes(gpu)));
    return;
  }
  // --gpu on the command line over a workload file's own rate: the catalog's rate.
  c.notes.push_back(fmt::format("the GPU's step time comes from --gpu {} (the catalog's rate), not from {} = {}",
                                escape_bytes(gpu), option_label(vm, own), escape_bytes(rate)));
  c.user_step_time_s = -1;
  c.user_samples_per_s = 0;
}

}  // namespace

void run_config_from_vm(po::variables_map& vm, const po::options_description& desc, RunCommandKind kind, RunConfig& c) {
  const bool for_gen = kind == RunCommandKind::kGen, for_tune = kind == RunCommandKind::kTune;
  const bool own_data = vm.count("data") || vm.count("file-list");
  if (vm.count("data") && vm.count("file-list")) throw UsageError("--data and --file-list both given; choose one");
  if (own_data && for_gen) throw UsageError("gen makes a synthetic dataset; --data/--file-list are for 'ioprobe run'");

  refuse_generation_options(vm);
  std::string preset = get_string(vm, "dataset", "imagenet-like");
  std::string preset_file = find_workload_file(preset);
  const bool model_on_command_line = vm.count("model") > 0, preset_named = vm.count("dataset") > 0;
  load_ini(preset_file, desc, vm);
  po::notify(vm);
  // The model is the user's choice when named: --model, or a model= line of the preset --dataset names.
  c.model_given = model_on_command_line || (preset_named && vm.count("model") > 0);

  DatasetSpec& s = c.spec;
  s.preset = own_data ? "none" : preset;
  if (auto slash = s.preset.rfind('/'); slash != std::string::npos) s.preset = s.preset.substr(slash + 1);
  if (s.preset.size() > 4 && s.preset.substr(s.preset.size() - 4) == ".ini") s.preset.resize(s.preset.size() - 4);
  s.description = get_string(vm, "description");
  s.model = get_string(vm, "model", "resnet50");
  s.full_files = get_count(vm, "full-files", 0, 0, UINT64_MAX);
  s.files = get_count(vm, "files", 1000, 1, 100000000);
  s.dirs = get_count(vm, "dirs", 1, 1, 1000000);
  // Your own files (--data, --file-list) are read one sample per file, whatever the preset says.
  s.kind = own_data ? DatasetKind::kFiles : checked_value(vm, "dataset-kind", [&] {
    return parse_dataset_kind(get_choice(vm, "dataset-kind", "files", {"files", "sharded", "token"}));
  });
  // Sizes: files for file-per-sample datasets, records for sharded ones; token samples are
  // seq_len x token_bytes. The other family's options are refused, not silently ignored.
  const std::string sz = s.kind == DatasetKind::kSharded ? "record-size" : "file-size";
  const uint64_t max_size = s.kind == DatasetKind::kSharded ? (4ULL << 30) - 1 : 64ULL << 30;
  if (!own_data)
    for (const char* fam : {"file-size", "record-size"})
      for (const char* suffix : {"", "-stdev", "-min", "-max", "-dist"}) {
        const std::string k = std::string(fam) + suffix;
        if (vm.count(k) && (s.kind == DatasetKind::kToken || k.rfind(sz, 0) != 0))
          throw UsageError(
              fmt::format("--{} (given on the command line or by preset '{}') does not apply to a {} dataset; {}{}", k,
                          s.preset, dataset_kind_name(s.kind),
                          s.kind == DatasetKind::kToken     ? "its samples are --seq-len x --token-bytes"
                          : s.kind == DatasetKind::kSharded ? "size its records with --record-size*"
                                                            : "size its files with --file-size*",
                          // A preset made for the other kind sets it: name presets of the kind asked for.
                          s.kind == DatasetKind::kSharded
                              ? " (a files preset such as imagenet-like, the default, sets --file-size: "
                                "start from a sharded one, --dataset resnet50-tfrecord-like or "
                                "bert-tfrecord-like)"
                          : s.kind == DatasetKind::kToken ? " (start from a token preset: --dataset llm-tokens-like)"
                                                          : ""));
      }
  s.size_mean = get_size(vm, sz, 114660, 1, max_size);  // a sample of 0 bytes reads nothing: no storage figure
  s.size_stdev = get_size(vm, sz + "-stdev", 0, 0, 64ULL << 30);
  s.size_min = get_size(vm, sz + "-min", 0, 0, max_size);
  s.size_max = get_size(vm, sz + "-max", std::min(max_size, std::max<uint64_t>(s.size_mean * 16, 4096)), 0, max_size);
  if (s.size_min > s.size_max)
    throw UsageError(fmt::format("--{}-min ({}) is larger than --{}-max ({})", sz, s.size_min, sz, s.size_max));
  s.dist = checked_value(vm, sz + "-dist", [&] {
    return parse_size_dist(get_choice(vm, sz + "-dist", "fixed", {"fixed", "normal", "lognormal"}));
  });
  if (s.kind != DatasetKind::kFiles) {
    s.dirs = 1;
    if (!vm.count("records-per-file"))
      throw UsageError(fmt::format("--records-per-file: a {} dataset needs it ({}); e.g. --records-per-file 1251",
                                   dataset_kind_name(s.kind),
                                   s.kind == DatasetKind::kSharded ? "records per shard" : "sequences per token file"));
    s.records_per_file = get_count(vm, "records-per-file", 1, 1, 1ULL << 32);
    if (s.files * s.records_per_file > 1000000000ULL)
      throw UsageError(
          fmt::format("--files {} x --records-per-file {} = {} samples; keep it at most 1,000,000,000 (the "
                      "sampler keeps 8 B per sample)",
                      s.files, s.records_per_file, s.files * s.records_per_file));
  }
  if (s.kind == DatasetKind::kToken) {
    s.seq_len = get_count(vm, "seq-len", 2048, 1, 1ULL << 28);
    s.token_bytes = get_count(vm, "token-bytes", 4, 2, 4);
    if (s.token_bytes == 3) throw UsageError("--token-bytes: 3 is not 2 or 4 (Megatron stores uint16 or int32 tokens)");
    if (s.seq_len * s.token_bytes > (1ULL << 31) - 4096)
      throw UsageError(
          fmt::format("--seq-len {} x --token-bytes {} is over 2 GiB per sample", s.seq_len, s.token_bytes));
    s.dist = SizeDist::kFixed;
    s.size_mean = s.seq_len * s.token_bytes;
  }
  s.seed = get_count(vm, "seed", 0, 0, UINT64_MAX);
  if (s.dist == SizeDist::kFixed) {
    // Every file is exactly the mean: a preset's truncation bounds must not clamp it silently.
    s.size_stdev = 0;
    s.size_min = s.size_max = s.size_mean;
  } else if (s.size_mean < s.size_min || s.size_mean > s.size_max) {
    throw UsageError(fmt::format("--{0} {1} lies outside --{0}-min {2} .. --{0}-max {3} (the preset's "
                                 "bounds unless given); give those too, or --{0}-dist fixed",
                                 sz, s.size_mean, s.size_min, s.size_max));
  }

  apply_content(vm, own_data, c);

  if (vm.count("dir")) {
    c.dir = get_string(vm, "dir");
    if (c.dir.empty()) throw UsageError("--dir: empty path; give a directory");
  } else {
    c.dir = fmt::format("ioprobe-data/{}-{}", s.preset, s.files);
    c.dir_is_default = true;
  }
  c.data_dir = get_string(vm, "data");
  c.file_list = get_string(vm, "file-list");
  if (vm.count("data") && c.data_dir.empty()) throw UsageError("--data: empty path; give a directory");
  c.follow_symlinks = get_bool(vm, "follow-symlinks", false);
  c.regenerate = get_bool(vm, "regenerate", false);

  LoaderConfig& l = c.loader;
  if (!for_tune) l.num_workers = static_cast<uint32_t>(get_count(vm, "workers", 8, 1, 4096));
  l.batch_size = static_cast<uint32_t>(get_count(vm, "batch-size", 256, 1, 1u << 24));
  l.prefetch_factor = static_cast<uint32_t>(get_count(vm, "prefetch-factor", 2, 1, 1024));
  l.shuffle = get_bool_pair(vm, "shuffle", "no-shuffle", true);
  l.drop_last = get_bool(vm, "drop-last", false);
  l.duration_s = get_duration(vm, "duration", 0);
  l.epochs = static_cast<uint32_t>(get_count(vm, "epochs", l.duration_s > 0 ? kMaxEpochs : 1, 1, kMaxEpochs));
  l.costs.worker.loop_us = get_double(vm, "cpu-per-sample", 0, 0, 60e6);
  l.costs.main_cpu_per_batch_us = get_double(vm, "main-cpu-per-batch", 0, 0, 600e6);
  l.pin_memory = get_bool(vm, "pin-memory", false);
  apply_calibration(vm, c);
  l.read_size = get_size(vm, "read-size", 1ULL << 20, 4096, 256ULL << 20);
  if (l.read_size % 4096)
    throw UsageError(fmt::format("--read-size {}: must be a multiple of 4 KiB (O_DIRECT reads are 4 KiB-aligned)",
                                 format_bytes(l.read_size)));
  apply_shuffle_buffer_options(vm, s.kind, l);
  l.seed = s.seed;
  l.ranks = static_cast<uint32_t>(get_count(vm, "gpus", 1, 1, 1024));
  if (static_cast<uint64_t>(l.ranks) * l.num_workers > 16384)
    throw UsageError(fmt::format("--gpus {} x --workers {} = {} worker threads; keep it at most 16384", l.ranks,
                                 l.num_workers, static_cast<uint64_t>(l.ranks) * l.num_workers));
  // The synthetic dataset's size is known now: refused before it is generated (--data and
  // --file-list are checked once enumerated, in cmd_run).
  if (!own_data)
    check_drop_last_batches(l, s.kind == DatasetKind::kFiles ? s.files : s.files * s.records_per_file,
                            s.kind == DatasetKind::kFiles ? "samples" : "records");
  // Ranks left without a sample, refused before generation too (this process's ranks are the
  // least the job has; prepare_run checks the whole job's and warns about partial batches).
  if (!own_data && !for_gen) {
    const bool shards = s.kind == DatasetKind::kSharded;
    const uint64_t samples = s.kind == DatasetKind::kFiles ? s.files : s.files * s.records_per_file;
    (void)check_rank_shares(l, 1, shards ? s.files : samples, shards ? "shards" : "samples", samples);
  }
  c.cache = get_choice(vm, "cache", "cold", {"cold", "warm"}) == "warm" ? CacheMode::kWarm : CacheMode::kCold;
  const std::string direct = get_choice(vm, "direct", "auto", {"auto", "on", "off"});
  c.direct = direct == "on" ? DirectMode::kOn : direct == "off" ? DirectMode::kOff : DirectMode::kAuto;
  if (c.cache == CacheMode::kWarm && c.direct == DirectMode::kOn)
    throw UsageError("--cache warm reads through the page cache; --direct on contradicts it (use --cache cold)");
  const std::string engine = get_choice(vm, "engine", "auto", {"auto", "io_uring", "psync", "gds"});
  if (engine == "gds") refuse_gds();  // before any dataset is generated
  l.h2d_devices = check_h2d(get_choice(vm, "h2d", "none", {"none", "cuda"}));
  l.h2d_cuda = l.h2d_devices > 0;
  c.engine_request = engine_selection_from_string(engine).value_or(EngineSelection::kAuto);  // gds refused above
  c.drop_caches = get_bool(vm, "drop-caches", false);
  // Parsed now: a typo, or a node this host lacks, must not cost a dataset generation.
  if (!for_tune)
    c.numa = checked_value(vm, "numa", [&] {
      const std::string text = get_string(vm, "numa", "none");
      Placement p = parse_placement(text);
      check_numa_node(p, text);
      return p;
    });

  c.gpu = get_string(vm, "gpu", "h100");
  c.rate_family = get_choice(vm, "ingest-rate", "training", {"training", "emulation"}) == "emulation"
                      ? RateFamily::kEmulation
                      : RateFamily::kTraining;
  c.user_samples_per_s = get_double(vm, "gpu-samples-per-s", 0, 1e-6, 1e12);
  if (vm.count("step-time")) {
    c.user_step_time_s = get_duration(vm, "step-time", 0);
    if (c.user_step_time_s <= 0) throw UsageError("--step-time: must be greater than 0");
  }
  if (vm.count("gpu-samples-per-s") && vm.count("step-time"))
    throw UsageError("--gpu-samples-per-s and --step-time both set the GPU's rate; give one");
  resolve_rate_source(vm, c);
  c.sample_bytes = static_cast<double>(get_size(vm, "sample-bytes", 0, 1, 1ULL << 40));
  // A percentage: below 10 is no training job's floor (MLPerf Storage's are 70-90), and is most
  // likely a fraction typed for a percentage (0.9 meant as 90%), so it gets its own message.
  try {
    c.au_target = get_double(vm, "au-target", 90, 10, 100) / 100.0;
  } catch (const UsageError&) {
    const std::string given = vm["au-target"].as<std::string>();
    double pct = -1;
    try {
      pct = parse_decimal(given, "--au-target");
    } catch (const UsageError&) {
    }
    if (pct >= 0 && pct < 10)
      throw UsageError(fmt::format("--au-target {}: a percentage, so {}% of the time computing would count as fed; "
                                   "give a percentage from 10 to 100 (90 for 90%; MLPerf Storage's floors are 70-90)",
                                   escape_bytes(given), escape_bytes(given)));
    throw;
  }
  c.au_target_given = vm.count("au-target") > 0;

  c.json_path = get_string(vm, "json");
  if (vm.count("json") && c.json_path.empty()) throw UsageError("--json: empty path; give a file name");
  c.quiet = get_bool(vm, "quiet", false);
  c.stonewall = get_bool(vm, "stonewall", false);
  c.mpi_timeout_s = get_duration(vm, "mpi-timeout", 300);
  if (c.mpi_timeout_s < 1)
    throw UsageError(fmt::format("--mpi-timeout {} s is too short: a step of the slowest host must fit in it (at least "
                                 "1s; the default 300s)",
                                 c.mpi_timeout_s));
}

std::string check_rank_shares(const LoaderConfig& l, uint32_t processes, uint64_t units, const char* unit,
                              uint64_t samples) {
  const uint64_t world = uint64_t{l.ranks} * std::max<uint32_t>(1, processes);
  const std::string ranks = processes > 1 ? fmt::format("--gpus {} on each of {} processes ({} GPU ranks)", l.ranks,
                                                        processes, world)
                                          : fmt::format("--gpus {}", l.ranks);
  if (units < world)
    throw UsageError(fmt::format("{} with {} {}: {} rank(s) would get no {} in any epoch (each goes to one rank) and "
                                 "read nothing while their GPUs count in the demand; use at least {} {} (--files) or "
                                 "at most {} GPU ranks",
                                 ranks, format_count(units), unit, format_count(world - units), unit,
                                 format_count(world), unit, format_count(units)));
  if (l.drop_last || samples >= world * l.batch_size) return "";
  return fmt::format("{} with {} samples: each rank gets about {} per epoch, less than one --batch-size {} batch, so "
                     "every step is one partial batch and the figures weigh each epoch's start more than steady "
                     "loading; use at least {} samples, a smaller --batch-size or fewer --gpus",
                     ranks, format_count(samples), format_count(samples / world), l.batch_size,
                     format_count(world * l.batch_size));
}

void check_drop_last_batches(const LoaderConfig& l, uint64_t samples, const char* unit) {
  const uint64_t per_rank = (samples + l.ranks - 1) / std::max<uint32_t>(1, l.ranks);
  if (l.drop_last && per_rank < l.batch_size)
    throw UsageError(fmt::format("--drop-last true with {} {} per rank and --batch-size {} gives no batch at all; "
                                 "lower --batch-size, use more files, or --drop-last false",
                                 format_count(per_rank), unit, l.batch_size));
}

}  // namespace ioprobe::cli
