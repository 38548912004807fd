#include "dataset/generator.hpp"
#include "core/message.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/free_space.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "dataset/dataset_dir.hpp"
#include "dataset/file_content.hpp"
#include "dataset/footprint.hpp"
#include "dataset/manifest.hpp"

namespace ioprobe {

namespace {

// The spec with the content of the complete dataset `m` describes, when the content was not asked
// for (content_from_manifest) and taking it makes the shapes match; else `spec` as it is.
DatasetSpec with_manifest_content(const DatasetSpec& spec, const std::optional<Manifest>& m);

// True when `want` equals `have` in everything but the file count, and asks for no more files
// than `have` holds.
bool is_prefix_of(const nlohmann::json& want, const nlohmann::json& have) {
  if (!have.contains("files") || !want.contains("files")) return false;
  nlohmann::json a = want, b = have;
  a.erase("files");
  b.erase("files");
  return a == b && want["files"].get<uint64_t>() <= have["files"].get<uint64_t>();
}

// "files 200000 on disk vs 50000 asked, dirs 1 vs 1000": the identity fields that differ.
std::string spec_difference(const nlohmann::json& want, const nlohmann::json& have) {
  std::string out;
  for (const auto& [key, value] : have.items()) {
    if (want.contains(key) && want[key] == value) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {} on disk vs {} asked", key, value.dump(), want.contains(key) ? want[key].dump() : "none");
  }
  return out.empty() ? "generator version" : out;
}

// The files of `spec` in `dir`: paths, sizes and records, from the seed alone (no disk access).
struct FilePlan {
  FileIndex index;
  RecordLayout layout;
  std::vector<uint64_t> sizes, record_sizes;
  uint64_t total = 0;
  bool records = false;
  bool stopped = false;  // the stop callback ended the planning: the fields above are incomplete
};

// `stop` is polled every 65,536 files or records; when it says so the plan is left incomplete
// with `stopped` set.
FilePlan plan_files(const std::string& dir, const DatasetSpec& spec, const std::function<bool()>& stop = {}) {
  FilePlan p;
  auto stopping = [&](uint64_t i) {
    if ((i & 0xFFFF) != 0 || !stop || !stop()) return false;
    p.stopped = true;
    return true;
  };
  p.records = spec.kind != DatasetKind::kFiles;
  SizeStream stream(spec);
  if (p.records) {
    p.record_sizes.resize(spec.files * spec.records_per_file);
    for (uint64_t r = 0; r < p.record_sizes.size(); ++r) {
      if (stopping(r)) return p;
      p.record_sizes[r] = stream.next();
    }
    p.layout = RecordLayout(spec.kind, spec.files, spec.records_per_file, p.record_sizes);
    p.sizes.resize(spec.files);
    for (uint64_t f = 0; f < spec.files; ++f) p.sizes[f] = p.layout.file_bytes(f);
  } else {
    p.sizes.resize(spec.files);
    for (uint64_t i = 0; i < spec.files; ++i) {
      if (stopping(i)) return p;
      p.sizes[i] = stream.next();
    }
  }
  p.index = FileIndex(dir);
  for (uint64_t i = 0; i < spec.files; ++i) {
    if (stopping(i)) return p;
    p.index.add(generated_file_path(spec, i), static_cast<int64_t>(p.sizes[i]));
    p.total += p.sizes[i];
  }
  return p;
}

// Writes files [first, end) of `plan` with opts.threads writers and a progress line. Throws the
// first writer's error; stops early (interrupted) on SIGINT/SIGTERM.
SliceOutcome write_files(const std::string& dir, const DatasetSpec& spec, const FilePlan& plan, uint64_t first,
                         uint64_t end, const GenerateOptions& opts) {
  SliceOutcome so;
  so.first = first;
  so.end = end;
  const uint64_t count = end - first;
  const int64_t start = now_ns();
  std::atomic<uint64_t> next{first}, done_files{0}, done_bytes{0}, padding{0};
  const bool jpeg = spec.content == ContentKind::kJpeg;
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mu;
  // On a terminal one line redrawn every 250 ms (and at the last file); in a log a line every 10 s.
  ProgressLine progress(opts.progress, 0.25, 10);
  if (!progress.tty()) progress.print(fmt::format("generating {} files...", format_count(count)));
  auto writer = [&] {
    std::vector<char> buf;
    try {
      for (;;) {
        if (failed.load() || interrupted()) return;
        uint64_t i = next.fetch_add(1);
        if (i >= end) return;
        if (plan.records)
          write_records(dir + "/" + plan.index.path(i), plan.record_sizes, i * spec.records_per_file,
                        spec.records_per_file, spec.seed, buf);
        else
          padding += write_one(dir + "/" + plan.index.path(i), plan.sizes[i], spec.seed ^ (i * 0x100000001B3ULL),
                               spec.content, buf);
        done_bytes += plan.sizes[i];
        const uint64_t files = done_files.fetch_add(1) + 1, bytes = done_bytes.load();
        progress.update(
            [&] {
              const double s = static_cast<double>(now_ns() - start) / 1e9;
              const double rate = s > 0 ? static_cast<double>(bytes) / s : 0;
              // JPEG content costs CPU per file (libjpeg-turbo encodes): files/s is its measure.
              return jpeg ? fmt::format("generating JPEG images: {}/{} files, {}, {:.0f} files/s, {} ({} encode "
                                        "threads)",
                                        format_count(files), format_count(count), format_bytes(bytes),
                                        s > 0 ? static_cast<double>(files) / s : 0.0, format_rate(rate),
                                        std::max(1, opts.threads))
                          : fmt::format("generating: {}/{} files, {}, {}", format_count(files), format_count(count),
                                        format_bytes(bytes), format_rate(rate));
            },
            progress.tty() && files == count);
      }
    } catch (...) {
      std::lock_guard<std::mutex> g(error_mu);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::jthread> threads;
  for (int t = 0; t < std::max(1, opts.threads); ++t) threads.emplace_back(writer);
  for (auto& t : threads) t.join();
  progress.finish(/*keep=*/true);
  if (error) std::rethrow_exception(error);
  so.files = done_files.load();
  so.bytes = done_bytes.load();
  so.jpeg_padding_bytes = padding.load();
  so.interrupted = interrupted() && so.files < count;
  so.generate_s = static_cast<double>(now_ns() - start) / 1e9;
  return so;
}

// ensure_dataset() under the directory's exclusive lock; `state` as inspected under it.
// `pending` (a split generation's owner): when files must be written, stop after the layout (file
// list, record index, incomplete manifest, class folders) and return that manifest there.
DatasetOutcome ensure_locked(const std::string& dir, const DatasetSpec& asked, const GenerateOptions& opts,
                             DirState state, std::optional<Manifest>* pending = nullptr) {
  DatasetOutcome out;
  refuse_unusable(dir, state);
  std::optional<FileIndex> old;  // a previous dataset to replace, removed once the new one is planned
  std::optional<Manifest> old_manifest;
  const DatasetSpec spec = state == DirState::kOurs ? with_manifest_content(asked, read_manifest(dir)) : asked;
  out.content = spec.content;
  nlohmann::json identity = spec_identity(spec);
  if (state == DirState::kOurs) {
    Manifest m = *read_manifest(dir);
    if (m.complete && m.spec == identity) {
      out.index = read_file_list(dir, m.list_xxh64);
      if (spec.kind != DatasetKind::kFiles) {
        std::vector<int64_t> file_sizes(out.index.size());
        for (size_t i = 0; i < out.index.size(); ++i) file_sizes[i] = out.index.file_size(i);
        out.layout = RecordLayout::read(dir, m.records, file_sizes);
      }
      out.action = "reused";
      out.bytes = m.bytes;
      return out;
    }
    if (m.complete && spec.kind == DatasetKind::kFiles && is_prefix_of(identity, m.spec)) {
      // File i's size, path and bytes depend only on i and the seed: the first spec.files files
      // of the larger dataset are exactly the dataset asked for.
      FileIndex all = read_file_list(dir, m.list_xxh64);
      out.index = FileIndex(all.root());
      for (uint64_t i = 0; i < spec.files; ++i) {
        out.index.add(all.path(i), all.file_size(i));
        out.bytes += static_cast<uint64_t>(std::max<int64_t>(0, all.file_size(i)));
      }
      out.action = fmt::format("reused: the first {} of its {} files", format_count(spec.files),
                               format_count(all.size()));
      out.source_files = all.size();
      return out;
    }
    if (m.complete && !opts.regenerate)
      throw UsageError(
          fmt::format("--dir '{}' holds a complete ioprobe dataset of another shape ({}); nothing was changed.\n"
                      "  to use it: give the options it was generated with, or read it as it is with --data '{}'\n"
                      "  otherwise: choose another --dir, or add --regenerate to replace it (removes only the {} files "
                      "ioprobe wrote there)",
                      escape_bytes(dir), spec_difference(identity, m.spec), escape_bytes(dir), m.files));
    old = read_file_list(dir, m.list_xxh64);
    old_manifest = m;
    out.action = m.spec == identity ? "regenerated (previous generation incomplete)"
                 : m.complete       ? "regenerated (spec changed, --regenerate)"
                                    : "regenerated (previous generation incomplete, spec changed)";
  } else {
    out.action = "generated";
  }

  // The space first, before anything is planned or removed: an instant estimate refuses a
  // dataset far too large for the filesystem, then the exact total, drawn without keeping the
  // sizes. A signal during either (or during the planning) leaves the directory as it was.
  uint64_t freed_bytes = 0;
  if (old)
    for (size_t i = 0; i < old->size(); ++i)
      freed_bytes += (static_cast<uint64_t>(std::max<int64_t>(0, old->file_size(i))) + kFootprintBlock - 1) /
                     kFootprintBlock * kFootprintBlock;
  const uint64_t freed_files = old ? old->size() : 0;
  const DatasetFootprint estimate = estimate_footprint(spec);
  if (!estimate.exact) check_space(dir, spec, estimate, freed_bytes, freed_files);
  const DatasetFootprint footprint = estimate.exact ? estimate : exact_footprint(spec, interrupted);
  auto stopped = [&] {
    out.interrupted = true;
    out.nothing_written = true;
    return out;
  };
  if (footprint.stopped) return stopped();
  check_space(dir, spec, footprint, freed_bytes, freed_files);  // on failure the caller removes a dir it made
  FilePlan plan = plan_files(dir, spec, interrupted);
  if (plan.stopped) return stopped();
  const bool records = plan.records;
  FileIndex& index = plan.index;
  const uint64_t total = plan.total;
  if (records) out.layout = plan.layout;
  if (old) {
    // Marked incomplete before its files go, so that a failure or a signal from here on never
    // leaves a manifest that calls the remains complete.
    Manifest gone = *old_manifest;
    gone.complete = false;
    write_manifest(dir, gone);
    remove_listed_files(dir, *old);
    if (!old_manifest->records.is_null()) unlink((dir + "/" + kRecordListName).c_str());  // our own record index
  }
  refuse_foreign_files(dir, index);  // before anything is written
  if (opts.progress) {
    const std::optional<FreeSpace> fs = free_space(dir);
    message(fmt::format("writing the dataset: {} files, {} in '{}'{}{}", format_count(spec.files), format_bytes(total),
                        escape_bytes(dir),
                        fs && fs->reported ? fmt::format(" ({} free there)", format_bytes(fs->bytes)) : "",
                        ram_note(dir, total)));
  }

  Manifest m;
  m.complete = false;
  m.spec = identity;
  m.files = spec.files;
  m.bytes = total;
  m.list_xxh64 = write_file_list(dir, index);
  if (records) m.records = out.layout.write(dir);
  write_manifest(dir, m);  // from here on the directory is marked as ours, incomplete

  for (uint64_t c = 0; c < (records ? 0 : std::min<uint64_t>(spec.dirs, spec.files)); ++c) {
    std::string sub = dir + "/" + fmt::format("c{:04d}", c);
    if (mkdir(sub.c_str(), 0755) != 0 && errno != EEXIST) throw IoError(errno, "mkdir", sub);
  }

  if (pending) {  // a split generation: the writers write the files, publish_dataset() the rest
    *pending = m;
    out.index = std::move(index);
    out.bytes = total;
    return out;
  }
  const SliceOutcome written = write_files(dir, spec, plan, 0, spec.files, opts);
  const int64_t start = now_ns() - static_cast<int64_t>(written.generate_s * 1e9);
  if (interrupted()) {
    out.interrupted = true;
    out.index = std::move(index);
    out.generate_s = static_cast<double>(now_ns() - start) / 1e9;
    return out;  // manifest stays "complete": false
  }
  sync_dir(dir);
  m.complete = true;
  write_manifest(dir, m);
  out.generate_s = static_cast<double>(now_ns() - start) / 1e9;
  out.index = std::move(index);
  out.bytes = total;
  out.jpeg_padding_bytes = written.jpeg_padding_bytes;
  return out;
}

}  // namespace

namespace {

DatasetSpec with_manifest_content(const DatasetSpec& spec, const std::optional<Manifest>& m) {
  if (!spec.content_from_manifest || !m || !m->complete || spec.kind != DatasetKind::kFiles) return spec;
  DatasetSpec s = spec;
  s.content = m->spec.is_object() && m->spec.value("content", "synthetic") == "jpeg" ? ContentKind::kJpeg
                                                                                     : ContentKind::kSynthetic;
  const nlohmann::json want = spec_identity(s);
  return want == m->spec || is_prefix_of(want, m->spec) ? s : spec;
}

// GenerateOptions::reuse_only: a shared lock, and a dataset that is already complete.
DatasetOutcome reuse_prepared(const std::string& dir, const DatasetSpec& spec, const GenerateOptions& opts) {
  auto no_dataset = [&] {
    return Error(fmt::format("'{}' holds no complete dataset of this shape, though the process that prepares it for "
                             "this one has finished (in a multi-host job: rank 0 for a shared directory, the host's "
                             "first process for a node-local one); see that process's messages",
                             escape_bytes(dir)),
                 kExitFailure);
  };
  if (inspect_dir(dir) != DirState::kOurs) throw no_dataset();
  auto lock = std::make_shared<DirLock>(dir, DirLock::Mode::kShared, "", [&](const std::string& holder) {
    message(fmt::format("'{}' is locked by {}; waiting until it is done with the dataset (Ctrl-C to stop)",
                        escape_bytes(dir), holder));
  });
  const DirState state = inspect_dir(dir);
  const std::optional<Manifest> m = state == DirState::kOurs ? read_manifest(dir) : std::nullopt;
  const nlohmann::json identity = spec_identity(with_manifest_content(spec, m));
  if (!m || !m->complete ||
      !(m->spec == identity || (spec.kind == DatasetKind::kFiles && is_prefix_of(identity, m->spec))))
    throw no_dataset();
  DatasetOutcome out = ensure_locked(dir, spec, opts, state);  // a reuse: reads only
  out.lock = std::move(lock);
  return out;
}

}  // namespace

DatasetOutcome ensure_dataset(const std::string& dir, const DatasetSpec& spec, const GenerateOptions& opts) {
  if (opts.reuse_only) return reuse_prepared(dir, spec, opts);
  // Refused before anything is written there, the lock file included.
  DirState state = inspect_dir(dir);
  refuse_unusable(dir, state);
  const bool made_dir = state == DirState::kMissing;
  if (made_dir) make_dir(dir, opts.create_parents);
  // "": the lock file records this process's command line as the holder's purpose.
  std::shared_ptr<DirLock> lock;
  try {
    lock = std::make_shared<DirLock>(dir, DirLock::Mode::kExclusive, "", [&](const std::string& holder) {
      message(fmt::format("'{}' is locked by {}; waiting until it is done with the dataset (Ctrl-C to stop)",
                          escape_bytes(dir), holder));
    });
  } catch (const IoError& e) {
    // A directory this process may not write and that holds no lock file: it can only read a
    // complete dataset there, unlocked; without one there is nothing to read and nothing may be
    // written (the error named the file list's temporary file, exit 1).
    if (e.err() != EACCES && e.err() != EROFS && e.err() != EPERM) throw;
    const std::optional<Manifest> m = read_manifest(dir);
    if (!m || !m->complete)
      throw UsageError(fmt::format("--dir '{}' is not writable ({}) and holds no complete dataset to read; ioprobe "
                                   "writes the dataset there: choose a writable --dir",
                                   escape_bytes(dir), errno_text(e.err())));
  }
  DatasetOutcome out;
  try {
    out = ensure_locked(dir, spec, opts, inspect_dir(dir));  // again: the holder may have written it meanwhile
  } catch (...) {
    if (made_dir) {
      lock.reset();        // removes the lock file
      rmdir(dir.c_str());  // only when empty: leave nothing behind that we made
    }
    throw;
  }
  if (out.interrupted) {
    if (made_dir && out.nothing_written) {
      lock.reset();        // removes the lock file
      rmdir(dir.c_str());  // only when empty: leave nothing behind that we made
    }
    return out;
  }
  if (!lock) return out;
  // Reading from here on: other readers may join, no writer may start.
  const std::optional<Manifest> before = read_manifest(dir);
  lock->downgrade();
  const std::optional<Manifest> after = read_manifest(dir);
  if (!before || !after || !after->complete || after->list_xxh64 != before->list_xxh64)
    throw Error(fmt::format("the dataset in '{}' was changed by another process while this one took it for reading; "
                            "run again",
                            escape_bytes(dir)),
                kExitFailure);
  out.lock = std::move(lock);
  return out;
}

SplitGeneration begin_split_generation(const std::string& dir, const DatasetSpec& spec, const GenerateOptions& opts) {
  DirState state = inspect_dir(dir);
  refuse_unusable(dir, state);
  if (state == DirState::kMissing) make_dir(dir, opts.create_parents);
  SplitGeneration g;
  g.lock = std::make_shared<DirLock>(dir, DirLock::Mode::kExclusive, "", [&](const std::string& holder) {
    message(fmt::format("'{}' is locked by {}; waiting until it is done with the dataset (Ctrl-C to stop)",
                        escape_bytes(dir), holder));
  });
  std::optional<Manifest> pending;
  DatasetOutcome out;
  try {
    out = ensure_locked(dir, spec, opts, inspect_dir(dir), &pending);
  } catch (...) {
    if (state == DirState::kMissing) {
      g.lock.reset();      // removes the lock file
      rmdir(dir.c_str());  // only when empty: leave nothing behind that we made
    }
    throw;
  }
  if (out.interrupted) {  // a signal before anything was written
    g.interrupted = true;
    g.lock.reset();
    if (state == DirState::kMissing) rmdir(dir.c_str());
    return g;
  }
  if (!pending) {  // a complete dataset is there already: the plain path reuses it
    g.lock.reset();
    return g;
  }
  g.pending = true;
  g.action = out.action;
  g.list_xxh64 = pending->list_xxh64;
  g.manifest = *pending;
  return g;
}

SliceOutcome write_dataset_slice(const std::string& dir, const DatasetSpec& spec, uint64_t slice, uint64_t slices,
                                 const std::string& list_xxh64, const GenerateOptions& opts) {
  const std::optional<Manifest> m = read_manifest(dir);
  if (!m || m->complete || m->list_xxh64 != list_xxh64)
    throw Error(fmt::format("'{}' does not hold the incomplete dataset layout the owner just wrote (manifest {}); "
                            "this host does not see the same directory, or another process changed it",
                            escape_bytes(dir),
                            !m            ? "missing"
                            : m->complete ? "already complete"
                                          : "of another layout"),
                kExitFailure);
  const FilePlan plan = plan_files(dir, spec, interrupted);
  const uint64_t first = spec.files * slice / slices, end = spec.files * (slice + 1) / slices;
  if (plan.stopped) return SliceOutcome{.first = first, .end = end, .interrupted = true};
  if (file_list_xxh64(plan.index) != list_xxh64)
    throw Error(fmt::format("this host lays out the dataset in '{}' differently from the owner (file list hash {} vs "
                            "{}); run the same ioprobe version on every host",
                            escape_bytes(dir), file_list_xxh64(plan.index), list_xxh64),
                kExitFailure);
  SliceOutcome so = write_files(dir, spec, plan, first, end, opts);
  if (!so.interrupted) sync_dir(dir);
  return so;
}

void publish_dataset(const std::string& dir, SplitGeneration& g) {
  if (!g.pending) return;
  const std::optional<Manifest> m = read_manifest(dir);
  if (!m || m->complete || m->list_xxh64 != g.list_xxh64)
    throw Error(fmt::format("the dataset manifest in '{}' changed while the hosts wrote the files; run again",
                            escape_bytes(dir)),
                kExitFailure);
  sync_dir(dir);
  Manifest done = g.manifest;
  done.complete = true;
  write_manifest(dir, done);
  g.pending = false;
  g.lock.reset();
}

}  // namespace ioprobe
