// The option tables of run, gen, tune and capacity (Boost.Program_options descriptions): the
// dataset, loader, GPU and hosts groups, and run's whole table. Their values are read in
// run_options.cpp.
#include "cli/run_config.hpp"
#include "cli/shuffle_buffer_options.hpp"

namespace ioprobe::cli {

namespace {
po::typed_value<std::string>* str() { return po::value<std::string>(); }
po::typed_value<std::string>* flag() { return po::value<std::string>()->implicit_value("true"); }
}  // namespace

po::options_description dataset_options_description() {
  po::options_description dataset("Dataset (a generated preset, or your own files)");
  // clang-format off
  dataset.add_options()
      ("dataset", str(), "preset name (workloads/NAME.ini) or path to an .ini file [imagenet-like]")
      ("dir", str(), "where the generated dataset lives [./ioprobe-data/PRESET-FILES]; created if missing; "
                     "ioprobe never writes into a non-empty directory it did not create; a dataset there with "
                     "more files of the same shape is reused, one of another shape is refused")
      ("regenerate", flag(), "replace the ioprobe dataset in --dir when its shape differs from the options "
                             "(removes only the files its manifest lists) [false]")
      ("dataset-kind", str(), "files (one sample per file) | sharded (records inside shard files, read as an "
                              "IterableDataset) | token (Megatron-style token files, one read per sample) [preset's, "
                              "else files]")
      ("files", str(), "number of files to generate (sharded: shards; token: token files) [preset's; imagenet-like: "
                       "50,000 = 5.7 GB, chosen so generate + read take about a minute on a laptop SSD; 1281167 = full "
                       "ImageNet-1k]")
      ("records-per-file", str(), "sharded: records per shard; token: sequences of --seq-len tokens per file [preset's]")
      ("record-size", str(), "sharded: mean record size, e.g. 114660 [preset's]")
      ("record-size-stdev", str(), "sharded: standard deviation of the record size [preset's]")
      ("record-size-min", str(), "sharded: smallest record size drawn [preset's, else 0]")
      ("record-size-max", str(), "sharded: largest record size drawn [preset's, else 16 x mean]")
      ("record-size-dist", str(), "sharded: fixed | normal | lognormal [preset's]")
      ("seq-len", str(), "token: tokens per sample [preset's, else 2048]")
      ("token-bytes", str(), "token: bytes per token, 2 (vocabulary < 65,500) or 4 (e.g. Llama-3) [preset's, else 4]")
      ("dirs", str(), "class folders to spread the files over [preset's]")
      ("file-size", str(), "mean file size, e.g. 114660, 110KB, 2MiB [preset's]")
      ("file-size-stdev", str(), "standard deviation of the file size [preset's]")
      ("file-size-min", str(), "smallest file size drawn [preset's, else 0]")
      ("file-size-max", str(), "largest file size drawn [preset's, else 16 x mean]")
      ("file-size-dist", str(), "fixed | normal | lognormal [preset's]")
      ("content", str(), "what the generated files hold: synthetic (pseudo-random bytes) | jpeg (real baseline JPEG "
                         "images encoded with libjpeg-turbo, exactly the drawn sizes, ImageNet-like dimensions; "
                         "file-per-sample datasets of 1 KiB .. 8 MiB files; generation costs CPU per file) [synthetic; "
                         "a dataset already in --dir keeps its own; jpeg with --decode jpeg]")
      ("seed", str(), "seed of the sizes, of the JPEG images and of the sampler's permutations [0]")
      ("data", str(), "read your own files under DIR instead, all of them (read-only; tree walked without a stat "
                      "per file); the options that shape a generated dataset (--files, --dir, --file-size*, ...) "
                      "are refused with it")
      ("file-list", str(), "read the files named in FILE instead, one path per line, all of them; refuses the "
                           "generated dataset's options as --data does")
      ("follow-symlinks", flag(), "with --data, descend into symlinked directories (loops are detected) [false]")
      ("model", str(), "model trained on the dataset, a catalog key: resnet50, unet3d, cosmoflow, bert [preset's]")
      ("description", str(), "one-line description (preset files)")
      ("full-files", str(), "file count of the real dataset the preset imitates (preset files)");
  // clang-format on
  return dataset;
}

po::options_description loader_options_description(bool for_tune) {
  po::options_description loader("DataLoader emulation (PyTorch map-style semantics)");
  if (!for_tune)
    // clang-format off
    loader.add_options()
        ("workers", str(), "num_workers: worker threads per GPU rank, each reading one file at a time [8]");
  // clang-format on
  loader.add_options()("batch-size", str(), "samples per batch [preset's, else 256]");
  if (!for_tune)
    // clang-format off
    loader.add_options()
        ("prefetch-factor", str(), "batches outstanding per worker (PyTorch default 2) [2]");
  // clang-format on
  loader.add_options()("shuffle", flag(), "fresh seeded permutation each epoch (RandomSampler) [true]")(
      "no-shuffle", flag(), "read in index order (SequentialSampler)")("drop-last", flag(),
                                                                       "drop the last incomplete batch [false]");
  if (!for_tune)
    // clang-format off
    loader.add_options()
        ("epochs", str(), "passes over the dataset [1; with --duration: as many as fit]")
        ("duration", str(), "stop after this long, e.g. 60s, 10m (0 = no limit); without --epochs the run repeats "
                            "epochs until then (time-based, like fio's time_based) [0]");
  // clang-format on
  loader.add_options()("cpu-per-sample", str(), "µs of real CPU work per sample after its read (decode/transform) [0]")(
      "decode", str(),
      "none | jpeg: each worker decodes every sample it read with libjpeg-turbo on its own thread "
      "(the native cost of a Dataset's image decode, without Python), reported in µs per sample; "
      "needs JPEG files (--content jpeg, or your own) [none]")(
      "calibration", str(),
      "FILE from `ioprobe calibrate` (your own Dataset's costs): each worker burns its CPU per "
      "sample, each rank's main process its CPU per batch beside the GPU step, and "
      "--pin-memory copies its bytes per batch [none]")(
      "main-cpu-per-batch", str(),
      "µs of main-process CPU per batch (receive, unpickle, shared-memory attach), "
      "burned beside the GPU step: a step takes max(GPU step, this) [0]")(
      "pin-memory", flag(),
      "DataLoader pin_memory=True: a pin thread per rank copies each batch into page-locked "
      "memory (real memcpy) before the training loop gets it [false]")(
      "read-size", str(),
      "sharded: bytes per sequential shard read, a multiple of 4KiB [1MiB, an assumption: no "
      "sourced default of the readers was found]")(
      "cache", str(), "cold: O_DIRECT (or evict pages first where O_DIRECT is refused); warm: buffered reads [cold]")(
      "direct", str(),
      "cold runs: auto (O_DIRECT where the filesystem accepts it, else buffered with pages "
      "evicted before each epoch) | on (O_DIRECT or stop with the reason) | off (always buffered "
      "+ eviction) [auto]")(
      "engine", str(),
      "auto | io_uring | psync | gds [auto: io_uring for O_DIRECT on a block device; psync on tmpfs, "
      "network filesystems and buffered reads; psync with a warning when io_uring is refused; gds "
      "(GPUDirect Storage) needs a CUDA build with libcufile]")(
      "h2d", str(),
      "none | cuda: copy each delivered batch from page-locked memory to a GPU with cudaMemcpyAsync, "
      "one stream per rank (rank r on device r mod GPUs); needs a CUDA build and a GPU [none]")(
      "drop-caches", flag(), "cold runs without O_DIRECT: also drop the page cache before each epoch (root) [false]");
  if (!for_tune)
    // clang-format off
    loader.add_options()
        ("numa", str(), "none | local (the target device's node) | interleave | node:N: bind workers and their "
                        "buffers with libnuma [none]");
  // clang-format on
  return loader;
}

po::options_description gpu_options_description() {
  po::options_description gpu("GPU side (the consumer spends each GPU's step time per batch)");
  // clang-format off
  gpu.add_options()
      ("gpu", str(), "accelerator kind from workloads/accelerators.json: v100 a100 h100 h200 b200 mi355 l40s rtx4090, or the "
       "report's label (H100-SXM), in any case [h100]")
      ("gpus", str(), "GPU ranks on this host, each with its own loader of --workers workers (DDP) [1]")
      ("ingest-rate", str(), "training: best published training rate (MLPerf Training); emulation: MLPerf Storage "
                             "(DLIO) rate [training]")
      ("gpu-samples-per-s", str(), "your own per-GPU rate instead of the catalog's")
      ("step-time", str(), "GPU compute time per batch instead of the rate, e.g. 0.224s")
      ("sample-bytes", str(), "bytes per sample for the bytes/s demand [the dataset's measured mean]")
      ("au-target", str(), "accelerator utilization a GPU counts as fed at, percent [the workload's floor (MLPerf Storage): 85 retinanet, 90 otherwise]");
  // clang-format on
  return gpu;
}

po::options_description hosts_options_description() {
  po::options_description hosts("Many hosts (when mpirun or srun starts one ioprobe per host; see docs/multihost.md)");
  // clang-format off
  hosts.add_options()
      ("stonewall", flag(), "end every host's measurement when the first host has read its share (IOR's and "
                            "elbencho's stonewalling) [false]")
      ("mpi-timeout", str(), "end the job, naming the step, when a rank waits longer than this for the others in "
                             "one step, e.g. 300s [300s]");
  // clang-format on
  return hosts;
}

po::options_description run_options_description() {
  po::options_description output("Output");
  // clang-format off
  output.add_options()
      ("json", str(), "write the result document (JSON) to FILE")
      ("quiet", flag(), "no progress lines")
      ("help,h", "this help");
  // clang-format on

  po::options_description all;
  po::options_description loader = loader_options_description(false);
  add_shuffle_buffer_options(loader);  // run's only: tune and capacity documents do not record a buffer
  all.add(dataset_options_description()).add(loader).add(gpu_options_description());
  all.add(hosts_options_description()).add(output);
  return all;
}

}  // namespace ioprobe::cli
