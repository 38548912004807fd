#include "trace/collect.hpp"

#include <dirent.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/xxh3.hpp"
#include "trace/import.hpp"
#include "trace/record_abi.h"

namespace ioprobe::trace {

namespace {

// Names of IoprobeRecCall, in its order.
constexpr std::array<std::string_view, IOPROBE_CALL_COUNT>
    kCallNames{"open",      "open64",     "openat",   "openat64", "creat",      "creat64", "fopen",  "fopen64",
               "close",     "fclose",     "read",     "pread",    "pread64",    "readv",   "preadv", "preadv64",
               "preadv2",   "preadv64v2", "fread",    "lseek",    "lseek64",    "fseek",   "fseeko", "fseeko64",
               "stat",      "stat64",     "fstat",    "fstat64",  "lstat",      "lstat64", "statx",  "fstatat",
               "fstatat64", "__xstat",    "__fxstat", "__lxstat", "__fxstatat", "mmap",    "mmap64", "munmap"};

struct RawRec {
  IoprobeRec rec;
  std::string path;
};

struct RawThread {
  int32_t tid = 0;
  std::vector<RawRec> recs;
};

struct RawProcess {
  IoprobeRecFileHeader header{};
  std::map<int32_t, RawThread> threads;  // by tid
};

// Reads one per-process file; false when its header is not the interposer's.
bool read_process(const std::string& path, RawProcess& p, CollectStats& stats) {
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < sizeof(IoprobeRecFileHeader)) return false;
  std::memcpy(&p.header, data.data(), sizeof p.header);
  if (p.header.magic != IOPROBE_REC_FILE_MAGIC || p.header.version != IOPROBE_REC_VERSION) return false;
  size_t at = sizeof p.header;
  while (at + sizeof(IoprobeRecChunk) <= data.size()) {
    IoprobeRecChunk c;
    std::memcpy(&c, data.data() + at, sizeof c);
    at += sizeof c;
    if (c.magic != IOPROBE_REC_CHUNK_MAGIC || c.bytes > data.size() - at) {
      at -= sizeof c;  // counted once, below
      break;
    }
    RawThread& th = p.threads[c.tid];
    th.tid = c.tid;
    size_t end = at + c.bytes;
    while (at + sizeof(IoprobeRec) <= end) {
      RawRec r;
      std::memcpy(&r.rec, data.data() + at, sizeof r.rec);
      size_t total = (sizeof r.rec + r.rec.path_len + 7) & ~size_t{7};
      if (at + total > end) break;
      r.path.assign(data.data() + at + sizeof r.rec, r.rec.path_len);
      th.recs.push_back(std::move(r));
      at += total;
    }
    at = end;
  }
  if (at < data.size()) ++stats.bad_chunks;  // a chunk cut off or damaged: the rest of the file is skipped
  return true;
}

class FileTable {
 public:
  // Paths are normalised lexically ("/a/b/../c" is "/a/c"): the interposer records the path as the
  // job named it, made absolute.
  int32_t id_for(const std::string& raw, Trace& t) {
    std::string path = normalize_path(raw);
    auto [it, added] = ids_.emplace(path, static_cast<int32_t>(t.files.size()));
    if (added) t.files.push_back(FileEntry{path, 0, false});
    return it->second;
  }
  static void note_size(FileEntry& f, uint64_t size) {
    if (f.size_known) return;
    f.size_bytes = size;
    f.size_known = true;
  }

 private:
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace

std::vector<std::string> recorder_limits() {
  return {
      std::string("page faults of mmap'ed files are not calls: the mapped ranges are recorded (mapped.mapped_bytes), "
                  "and at unmap or exit the bytes of each range present in the process's page table "
                  "(mapped.touched_bytes, from /proc/self/pagemap: touched pages plus the kernel's fault-around "
                  "neighbours, an upper bound; sampled false when a process ended without reporting); the order "
                  "of first touches is not seen"),
      std::string(
          "only data files are recorded: paths under /proc, /sys, /dev (but /dev/shm), /run, /etc, /usr, /lib, /bin, "
          "Python packages "
          "(site-packages, dist-packages, __pycache__, .pyenv), *.py, *.pyc, shared libraries and files an open "
          "creates "
          "(O_CREAT|O_EXCL, O_TMPFILE) are left out"),
      std::string(
          "reads through io_uring, libaio, direct syscalls, statically linked programs, GPU direct storage and network "
          "object stores are not seen"),
      std::string(
          "a descriptor shared by processes after fork has one file position in the kernel but one tracked copy per "
          "process: read() offsets are exact when each process reads its own descriptors (as DataLoader workers do)"),
      "times include the recorder's own cost (about 0.1-0.7 us of CPU per recorded call, tools/bench-record)",
      std::string(
          "thread CPU time is read only around gaps and calls of 20 us or more: shorter ones are counted as CPU, so a "
          "gap's CPU time may be off by up to 200 us"),
  };
}

Trace collect_records(const CollectInput& in, CollectStats* stats_out) {
  CollectStats stats;
  DIR* d = opendir(in.dir.c_str());
  if (!d) throw IoError(errno, "opendir", in.dir, "the recording directory of ioprobe record");
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".rec") == 0) names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());

  std::vector<RawProcess> procs;
  for (const auto& n : names) {
    RawProcess p;
    if (read_process(in.dir + "/" + n, p, stats)) procs.push_back(std::move(p));
    else ++stats.bad_chunks;
  }
  stats.processes = procs.size();
  std::stable_sort(procs.begin(), procs.end(), [](const RawProcess& a, const RawProcess& b) {
    return a.header.start_ns != b.header.start_ns ? a.header.start_ns < b.header.start_ns : a.header.pid < b.header.pid;
  });

  Trace t;
  t.source = "ioprobe record";
  t.command = in.command;
  t.host = in.host;
  t.duration_ns = std::max<int64_t>(0, in.end_ns - in.start_ns);
  t.limits = recorder_limits();

  // Files: every open id (across processes: a fork child uses its parent's descriptors).
  FileTable files;
  std::unordered_map<uint64_t, int32_t> by_open;
  std::unordered_set<int32_t> pids;
  for (auto& p : procs) {
    pids.insert(p.header.pid);
    for (auto& [tid, th] : p.threads)
      for (auto& r : th.recs) {
        if (r.rec.kind != IOPROBE_REC_OPEN && !(r.rec.kind == IOPROBE_REC_STAT && !r.path.empty())) continue;
        int32_t f = files.id_for(r.path, t);
        if (r.rec.err == 0) FileTable::note_size(t.files[f], r.rec.size);
        if (r.rec.open_id) by_open[r.rec.open_id] = f;
      }
  }
  bool any_batch_marks = false;
  for (auto& p : procs)
    for (auto& [tid, th] : p.threads)
      for (auto& r : th.recs)
        if (r.rec.kind == IOPROBE_REC_MARK && (r.rec.call == static_cast<uint8_t>(MarkKind::batch_wait_begin) ||
                                               r.rec.call == static_cast<uint8_t>(MarkKind::batch_wait_end)))
          any_batch_marks = true;

  bool main_given = false;
  uint64_t mappings = 0, touched_reports = 0;  // every mapping reported at its unmap or at exit: sampled
  for (auto& p : procs) {
    // The main thread first, then the others by tid.
    std::vector<RawThread*> threads;
    for (auto& [tid, th] : p.threads) threads.push_back(&th);
    std::stable_partition(threads.begin(), threads.end(), [&](RawThread* th) { return th->tid == p.header.pid; });
    for (RawThread* th : threads) {
      if (th->recs.empty()) continue;
      std::stable_sort(th->recs.begin(), th->recs.end(),
                       [](const RawRec& a, const RawRec& b) { return a.rec.t_ns < b.rec.t_ns; });
      Stream s;
      s.pid = p.header.pid;
      s.tid = th->tid;
      s.ppid = pids.count(p.header.ppid) && p.header.ppid != p.header.pid ? p.header.ppid : 0;
      s.rank = p.header.rank;
      int64_t prev_cpu_end = -1;
      int64_t worker = -1;
      bool batch_marks = false;
      for (const RawRec& rr : th->recs) {
        const IoprobeRec& r = rr.rec;
        int64_t t_rel = std::max<int64_t>(0, r.t_ns - in.start_ns);
        if (r.kind == IOPROBE_REC_MARK) {
          if (r.call > static_cast<uint8_t>(MarkKind::epoch_end)) continue;
          Mark m{static_cast<MarkKind>(r.call), t_rel, r.ret};
          if (m.kind == MarkKind::worker_start) worker = r.ret;
          if (m.kind == MarkKind::batch_wait_begin || m.kind == MarkKind::batch_wait_end) batch_marks = true;
          s.marks.push_back(m);
          continue;
        }
        if (r.kind == IOPROBE_REC_TOUCHED) {
          if (r.ret == 0) {
            t.mapped.touched_bytes += r.size;
            ++touched_reports;
          }
          continue;
        }
        if (r.kind > IOPROBE_REC_MUNMAP) continue;
        Op op;
        op.kind = static_cast<OpKind>(r.kind);
        op.start_ns = t_rel;
        op.dur_ns = std::max<int64_t>(0, r.dur_ns);
        if (r.cpu_start_ns >= 0)
          op.gap_cpu_ns = std::max<int64_t>(0, prev_cpu_end >= 0 ? r.cpu_start_ns - prev_cpu_end : r.cpu_start_ns);
        if (r.cpu_end_ns >= 0) prev_cpu_end = r.cpu_end_ns;
        if (!rr.path.empty()) {
          op.file = files.id_for(rr.path, t);
        } else if (r.open_id) {
          auto it = by_open.find(r.open_id);
          if (it == by_open.end()) {
            ++stats.unknown_opens;
            continue;
          }
          op.file = it->second;
        }
        op.offset = r.offset;
        op.requested = r.len;
        op.bytes = op.kind == OpKind::read && r.ret > 0 ? static_cast<uint64_t>(r.ret) : 0;
        op.error = r.err;
        op.call = r.call < kCallNames.size() ? std::string(kCallNames[r.call]) : "unknown";
        if (op.kind == OpKind::mmap && op.error == 0) {
          t.mapped.mapped_bytes += op.requested;
          ++mappings;
        }
        s.ops.push_back(std::move(op));
      }
      if (s.ops.empty() && s.marks.empty()) continue;
      bool is_main_thread = th->tid == p.header.pid;
      if (worker >= 0) s.role = fmt::format("worker {}", worker);
      else if (batch_marks || (!any_batch_marks && is_main_thread && !main_given)) s.role = "main";
      else s.role = is_main_thread ? "process" : "thread";
      if (s.role == "main") main_given = true;
      t.streams.push_back(std::move(s));
    }
  }
  t.mapped.sampled = mappings > 0 && touched_reports >= mappings;
  if (!t.mapped.sampled) t.mapped.touched_bytes = 0;  // a partial sum would read as a measurement
  if (stats_out) *stats_out = stats;
  return t;
}

void anonymize_paths(Trace& t) {
  for (auto& f : t.files) {
    std::string_view p = f.path;
    std::string ext;
    size_t slash = p.rfind('/');
    std::string_view last = slash == std::string_view::npos ? p : p.substr(slash + 1);
    size_t dot = last.rfind('.');
    if (dot != std::string_view::npos && dot > 0 && last.size() - dot <= 9) ext = std::string(last.substr(dot));
    uint64_t h = XXH3_64bits(f.path.data(), f.path.size());
    f.path = fmt::format("anon:{:016x}{}", h, ext);
  }
  // The command line and host name can name the data too: only the program's name stays.
  if (!t.command.empty()) {
    std::string prog = t.command[0].substr(t.command[0].rfind('/') + 1);
    size_t n = t.command.size() - 1;
    t.command = {prog};
    if (n) t.command.push_back(fmt::format("({} argument(s) left out by --anonymize)", n));
  }
  if (!t.host.empty()) t.host = fmt::format("anon:{:016x}", XXH3_64bits(t.host.data(), t.host.size()));
  t.anonymized = true;
}

}  // namespace ioprobe::trace
