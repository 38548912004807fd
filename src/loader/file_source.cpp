#include "loader/file_source.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

FileSource::FileSource(const SourceEnv& env)
    : MapStyleSource(env), readers_(env.cfg->num_workers), decoders_(env.cfg->num_workers) {
  for (uint32_t w = 0; w < env.cfg->num_workers; ++w) tallies_.push_back(std::make_unique<ByteTally>(env.bytes_read));
}

void FileSource::init_worker(uint32_t w) {
  const LoaderConfig& cfg = *env_.cfg;
  FileReaderOptions ropts;
  ropts.direct = cfg.direct;
  readers_[w] = make_file_reader(cfg.engine, ropts);
  if (cfg.decode_jpeg) decoders_[w] = std::make_unique<JpegDecoder>();
}

Batch FileSource::fetch(uint32_t w, const BatchTask& t, WorkerStats& ws, const std::atomic<bool>& cancel) {
  Batch r;
  r.sample_ids.reserve(t.end > t.begin ? t.end - t.begin : 0);  // one allocation per batch
  const FileIndex& index = *env_.index;
  FileReader* reader = readers_[w].get();
  ByteTally& tally = *tallies_[w];
  for (uint64_t pos = t.begin; pos < t.end; ++pos) {
    if (cancel) {
      r.cancelled = true;
      break;
    }
    // The index entries of the next files, in the cache by the time they are read: the system
    // calls of this file give the loads time to finish.
    if (pos + 2 < t.end) index.prefetch_entry(order_[pos + 2]);
    if (pos + 1 < t.end) index.prefetch_path(order_[pos + 1]);
    const uint64_t idx = order_[pos];
    const int64_t hint = index.file_size(idx);
    FileReadResult fr;
    if (!reader) {
      fr.err = EIO;
      fr.failed_op = "set up engine for";
    } else {
      ReadControl ctl;
      ctl.stop = &cancel;  // the queue cancels on --duration, a signal or an error stop
      ctl.bytes_read = &tally;
      fr = reader->read_file(env_.dirfd, index.path(idx), hint, ctl);
      if (fr.stopped) {  // stopped inside the file: no sample, no error
        r.cancelled = true;
        break;
      }
    }
    // A file whose size changed since the dataset was indexed: no system call failed, so no errno
    // (an EIO here read as a failing device); the record says what changed.
    std::string size_changed;
    if (fr.err == 0 && hint >= 0 && fr.bytes != hint) {
      fr.err = EIO;  // counted as a failed sample below
      fr.failed_op = "read";
      size_changed = fmt::format("size changed: {} B read, {} B when the dataset was indexed (the file was modified "
                                 "or truncated after; regenerate or re-list the dataset)",
                                 fr.bytes, hint);
    }
    if (fr.err == 0 && env_.cfg->decode_jpeg && !decode(w, ws, fr, idx)) {
      ++ws.errors;
      ++r.errors;
      ws.io_bytes += static_cast<uint64_t>(fr.bytes);
    } else if (fr.err) {
      ++ws.errors;
      ++r.errors;
      // io_uring cancels reads it cannot hand to an io-wq worker thread (none can be created
      // under a pids or thread limit): every later read would fail the same way, each after a
      // wait, so the run stops after a few instead of failing file by file through the epoch.
      if (fr.err == ECANCELED && env_.on_canceled_read) env_.on_canceled_read();
      if (env_.on_error)
        env_.on_error(size_changed.empty()
                          ? ErrorRecord{.err = fr.err, .op = fr.failed_op, .path = index.display_path(idx)}
                          : ErrorRecord{.op = fr.failed_op, .path = index.display_path(idx), .detail = size_changed});
    } else {
      ++ws.files;
      ws.bytes += static_cast<uint64_t>(fr.bytes);
      ws.io_bytes += static_cast<uint64_t>(fr.bytes);
      ++r.samples;
      r.bytes += static_cast<uint64_t>(fr.bytes);
      r.sample_ids.push_back(idx);
      ws.file_latency.record(static_cast<uint64_t>(fr.total_ns));
      ws.open_latency.record(static_cast<uint64_t>(fr.open_ns + fr.close_ns));
    }
    per_sample_cpu(env_, w, ws, &cancel);
  }
  tally.flush();  // the live counter has every byte of the batch before the batch is delivered
  return r;
}

// --decode jpeg: decodes the file just read on this worker thread; its CPU time counts as the
// worker's CPU work. False (error noted) when it does not decode.
bool FileSource::decode(uint32_t w, WorkerStats& ws, const FileReadResult& fr, uint64_t idx) {
  JpegDecoder* dec = decoders_[w].get();
  std::string why;
  const int64_t c0 = thread_cpu_ns();
  if (!dec) {
    why = "no decoder (the worker could not be set up)";
  } else if (!fr.data) {
    why = fmt::format("{} B does not fit one read request; ioprobe decodes files of at most 8 MiB", fr.bytes);
  } else {
    const JpegDecodeResult d = dec->decode(fr.data, static_cast<size_t>(fr.bytes));
    if (d.ok) ws.decoded_pixels += static_cast<uint64_t>(d.width) * d.height;
    else why = d.error;
  }
  const int64_t cpu = thread_cpu_ns() - c0;
  ws.decode_cpu_ns += cpu;
  ws.cpu_work_ns += cpu;
  if (why.empty()) {
    ++ws.decoded;
    return true;
  }
  ++ws.decode_errors;
  if (env_.on_error)
    env_.on_error(ErrorRecord{.op = "decode (libjpeg-turbo)", .path = env_.index->display_path(idx), .detail = why});
  return false;
}

}  // namespace ioprobe
