#include "trace/trace_format.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe::trace {

using json = nlohmann::json;

namespace {

constexpr const char* kFixHint =
    "re-record it (ioprobe record) or re-import it; a trace is written whole or not at all";

// One line of the file being read, for error messages.
struct LineCtx {
  const std::string& path;
  size_t line;
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError(fmt::format("trace {} line {}: {}; {}", escape_bytes(path), line, what, kFixHint));
  }
  // `what` already says what to do.
  [[noreturn]] void fail_with_advice(const std::string& what) const {
    throw UsageError(fmt::format("trace {} line {}: {}", escape_bytes(path), line, what));
  }
};

int64_t get_int(const json& j, const char* key, const LineCtx& at, bool required, int64_t dflt) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) at.fail(fmt::format("the field \"{}\" is missing", key));
    return dflt;
  }
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      at.fail(fmt::format("the field \"{}\" = {} is too large", key, v));
    return static_cast<int64_t>(v);
  }
  at.fail(fmt::format("the field \"{}\" must be an integer, not {}", key, it->dump()));
}

uint64_t get_uint(const json& j, const char* key, const LineCtx& at, bool required) {
  int64_t v = get_int(j, key, at, required, 0);
  if (v < 0) at.fail(fmt::format("the field \"{}\" = {} must not be negative", key, v));
  return static_cast<uint64_t>(v);
}

std::string get_str(const json& j, const char* key, const LineCtx& at, bool required) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) at.fail(fmt::format("the field \"{}\" is missing", key));
    return {};
  }
  if (!it->is_string()) at.fail(fmt::format("the field \"{}\" must be a string, not {}", key, it->dump()));
  return it->get<std::string>();
}

void read_header(const json& h, const LineCtx& at, Trace& t) {
  auto fmt_it = h.find("format");
  if (fmt_it == h.end() || !fmt_it->is_string() || fmt_it->get<std::string>() != kFormatName)
    at.fail(fmt::format("not an ioprobe trace: the first line's \"format\" is {}, expected \"{}\"",
                        fmt_it == h.end() ? std::string("missing") : fmt_it->dump(), kFormatName));
  int64_t version = get_int(h, "version", at, true, 0);
  if (version != kFormatVersion)
    at.fail_with_advice(fmt::format("trace format version {} is not the version this ioprobe reads ({}); read it "
                                    "with the ioprobe that wrote it, or re-record (ioprobe record) or re-import it",
                                    version, kFormatVersion));
  t.version = static_cast<int>(version);
  t.source = get_str(h, "source", at, false);
  t.host = unescape_bytes(get_str(h, "host", at, false));
  if (auto it = h.find("anonymized"); it != h.end()) {
    if (!it->is_boolean()) at.fail("the field \"anonymized\" must be true or false");
    t.anonymized = it->get<bool>();
  }
  if (auto it = h.find("partial"); it != h.end()) {
    if (!it->is_boolean()) at.fail("the field \"partial\" must be true or false");
    if (it->get<bool>()) {
      t.partial = unescape_bytes(get_str(h, "partial_reason", at, false));
      if (t.partial.empty()) t.partial = "partial";
    }
  }
  if (std::string clock = get_str(h, "clock", at, false); !clock.empty() && clock != "CLOCK_MONOTONIC")
    at.fail(fmt::format("the clock \"{}\" is not CLOCK_MONOTONIC", clock));
  t.duration_ns = get_int(h, "duration_ns", at, false, 0);
  if (t.duration_ns < 0) at.fail("the field \"duration_ns\" must not be negative");
  for (const char* key : {"command", "limits"}) {
    auto it = h.find(key);
    if (it == h.end()) continue;
    if (!it->is_array()) at.fail(fmt::format("the field \"{}\" must be an array of strings", key));
    auto& out = std::string(key) == "command" ? t.command : t.limits;
    for (const auto& s : *it) {
      if (!s.is_string()) at.fail(fmt::format("the field \"{}\" must be an array of strings", key));
      out.push_back(unescape_bytes(s.get<std::string>()));
    }
  }
  if (auto it = h.find("mapped"); it != h.end()) {
    if (!it->is_object()) at.fail("the field \"mapped\" must be an object");
    t.mapped.mapped_bytes = get_uint(*it, "mapped_bytes", at, false);
    t.mapped.touched_bytes = get_uint(*it, "touched_bytes", at, false);
    if (auto s = it->find("sampled"); s != it->end()) {
      if (!s->is_boolean()) at.fail("the field \"mapped.sampled\" must be true or false");
      t.mapped.sampled = s->get<bool>();
    }
  }
}

// Per stream while reading: the line of its last op and mark, for the order check.
struct StreamOrder {
  int64_t last_op_t = std::numeric_limits<int64_t>::min();
  size_t last_op_line = 0;
  int64_t last_mark_t = std::numeric_limits<int64_t>::min();
  size_t last_mark_line = 0;
};

int32_t stream_ref(const json& j, const LineCtx& at, const Trace& t) {
  int64_t s = get_int(j, "s", at, true, 0);
  if (s < 0 || s >= static_cast<int64_t>(t.streams.size()))
    at.fail(fmt::format("stream {} is not declared (streams declared before this line: {})", s, t.streams.size()));
  return static_cast<int32_t>(s);
}

void read_op(const json& j, const LineCtx& at, Trace& t, std::vector<StreamOrder>& order) {
  Op op;
  std::string kind = get_str(j, "op", at, true);
  if (!parse_op_kind(kind, &op.kind))
    at.fail(fmt::format("unknown op \"{}\" (known: open, close, read, lseek, stat, mmap, munmap)", escape_bytes(kind)));
  int32_t s = stream_ref(j, at, t);
  op.start_ns = get_int(j, "t", at, true, 0);
  op.dur_ns = get_int(j, "d", at, true, 0);
  if (op.start_ns < 0 || op.dur_ns < 0)
    at.fail(fmt::format("negative time (t={}, d={}): times are ns from the trace's start", op.start_ns, op.dur_ns));
  op.gap_cpu_ns = get_int(j, "c", at, false, -1);
  if (op.gap_cpu_ns < -1) at.fail(fmt::format("the field \"c\" = {} must be -1 (unknown) or more", op.gap_cpu_ns));
  int64_t f = get_int(j, "f", at, false, -1);
  if (f < -1 || f >= static_cast<int64_t>(t.files.size()))
    at.fail(fmt::format("file {} is not declared (files declared before this line: {})", f, t.files.size()));
  op.file = static_cast<int32_t>(f);
  op.offset = get_uint(j, "off", at, false);
  op.requested = get_uint(j, "len", at, false);
  int64_t ret = get_int(j, "ret", at, false, 0);
  op.error = static_cast<int32_t>(get_int(j, "err", at, false, 0));
  if (op.error < 0) at.fail(fmt::format("the field \"err\" = {} must be an errno value (>= 0)", op.error));
  if (op.kind == OpKind::read && ret > 0) op.bytes = static_cast<uint64_t>(ret);
  op.call = get_str(j, "call", at, false);
  StreamOrder& o = order[s];
  if (op.start_ns < o.last_op_t)
    at.fail(fmt::format("time goes backwards in stream {}: t={} ns is before t={} ns of line {}", s, op.start_ns,
                        o.last_op_t, o.last_op_line));
  o.last_op_t = op.start_ns;
  o.last_op_line = at.line;
  t.streams[s].ops.push_back(std::move(op));
}

void read_mark(const json& j, const LineCtx& at, Trace& t, std::vector<StreamOrder>& order) {
  Mark m;
  std::string kind = get_str(j, "mark", at, true);
  if (!parse_mark_kind(kind, &m.kind))
    at.fail(fmt::format("unknown mark \"{}\" (known: batch_wait_begin, batch_wait_end, worker_start, epoch_begin, "
                        "epoch_end)",
                        escape_bytes(kind)));
  int32_t s = stream_ref(j, at, t);
  m.t_ns = get_int(j, "t", at, true, 0);
  if (m.t_ns < 0) at.fail(fmt::format("negative time t={}", m.t_ns));
  m.batch = get_int(j, "batch", at, false, 0);
  StreamOrder& o = order[s];
  if (m.t_ns < o.last_mark_t)
    at.fail(fmt::format("time goes backwards in stream {}: mark at t={} ns is before t={} ns of line {}", s, m.t_ns,
                        o.last_mark_t, o.last_mark_line));
  o.last_mark_t = m.t_ns;
  o.last_mark_line = at.line;
  t.streams[s].marks.push_back(m);
}

json header_json(const Trace& t) {
  json h = json::object();
  h["format"] = kFormatName;
  h["version"] = kFormatVersion;
  h["source"] = t.source;
  json cmd = json::array();
  for (const auto& w : t.command) cmd.push_back(escape_bytes(w));
  h["command"] = cmd;
  h["host"] = escape_bytes(t.host);
  h["anonymized"] = t.anonymized;
  if (!t.partial.empty()) {
    h["partial"] = true;
    h["partial_reason"] = escape_bytes(t.partial);
  }
  h["clock"] = "CLOCK_MONOTONIC";
  h["duration_ns"] = t.duration_ns;
  json limits = json::array();
  for (const auto& l : t.limits) limits.push_back(escape_bytes(l));
  h["limits"] = limits;
  h["mapped"] = {{"mapped_bytes", t.mapped.mapped_bytes},
                 {"touched_bytes", t.mapped.touched_bytes},
                 {"sampled", t.mapped.sampled}};
  return h;
}

void append_op(std::string& out, const Op& op, size_t s) {
  int64_t ret = op.error != 0 ? -1 : (op.kind == OpKind::read ? static_cast<int64_t>(op.bytes) : 0);
  fmt::format_to(std::back_inserter(out),
                 "{{\"op\":\"{}\",\"s\":{},\"t\":{},\"d\":{},\"c\":{},\"f\":{},\"off\":{},\"len\":{},\"ret\":{},"
                 "\"err\":{},\"call\":{}}}\n",
                 op_kind_name(op.kind), s, op.start_ns, op.dur_ns, op.gap_cpu_ns, op.file, op.offset, op.requested, ret,
                 op.error, json(escape_bytes(op.call)).dump());
}

}  // namespace

std::string format_trace(const Trace& t) {
  std::string out = header_json(t).dump();
  out += '\n';
  for (size_t i = 0; i < t.files.size(); ++i) {
    const FileEntry& f = t.files[i];
    json line = {{"file", i}, {"path", escape_bytes(f.path)}};
    if (f.size_known) line["size"] = f.size_bytes;
    out += line.dump();
    out += '\n';
  }
  for (size_t i = 0; i < t.streams.size(); ++i) {
    const Stream& s = t.streams[i];
    json line = {{"stream", i}, {"pid", s.pid}, {"tid", s.tid}, {"ppid", s.ppid}, {"role", s.role}, {"rank", s.rank}};
    out += line.dump();
    out += '\n';
  }
  uint64_t events = 0;
  for (size_t i = 0; i < t.streams.size(); ++i) {
    const Stream& s = t.streams[i];
    // Ops and marks of the stream merged by time (each list is already in time order).
    size_t oi = 0, mi = 0;
    while (oi < s.ops.size() || mi < s.marks.size()) {
      bool take_mark = mi < s.marks.size() && (oi == s.ops.size() || s.marks[mi].t_ns <= s.ops[oi].start_ns);
      if (take_mark) {
        const Mark& m = s.marks[mi++];
        fmt::format_to(std::back_inserter(out), "{{\"mark\":\"{}\",\"s\":{},\"t\":{},\"batch\":{}}}\n",
                       mark_kind_name(m.kind), i, m.t_ns, m.batch);
      } else {
        append_op(out, s.ops[oi++], i);
      }
      ++events;
    }
  }
  fmt::format_to(std::back_inserter(out), "{{\"end\":true,\"events\":{}}}\n", events);
  return out;
}

void write_trace(const Trace& t, const std::string& path) {
  write_file_atomically(path, format_trace(t), "choose another --out directory where a file can be created");
}

Trace read_trace(const std::string& path) {
  // A directory opens and reads as empty, a device reads forever: name what it is instead.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw UsageError(fmt::format("trace {}: {}, not a trace file; give the path of a trace written by ioprobe record",
                                 escape_bytes(path), S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UsageError(fmt::format("trace {}: cannot open it: {}; give the path of a trace written by ioprobe record",
                                 escape_bytes(path), errno_text(errno)));
  Trace t;
  std::vector<StreamOrder> order;
  std::string text;
  size_t line_no = 0;
  uint64_t events = 0;
  bool ended = false;
  while (std::getline(in, text)) {
    ++line_no;
    LineCtx at{path, line_no};
    if (in.eof()) at.fail("the last line is cut off (no newline at its end): the trace is truncated");
    if (ended) at.fail("a line after the end line");
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (line_no == 1) at.fail("not an ioprobe trace (the first line is not a JSON header)");
      at.fail("not a JSON object");
    }
    if (line_no == 1) {
      read_header(j, at, t);
      continue;
    }
    if (j.contains("op")) {
      read_op(j, at, t, order);
      ++events;
    } else if (j.contains("mark")) {
      read_mark(j, at, t, order);
      ++events;
    } else if (j.contains("file")) {
      int64_t id = get_int(j, "file", at, true, 0);
      if (id != static_cast<int64_t>(t.files.size()))
        at.fail(fmt::format("file id {} out of order (expected {})", id, t.files.size()));
      FileEntry f;
      f.path = unescape_bytes(get_str(j, "path", at, true));
      f.size_known = j.contains("size");
      f.size_bytes = get_uint(j, "size", at, false);
      t.files.push_back(std::move(f));
    } else if (j.contains("stream")) {
      int64_t id = get_int(j, "stream", at, true, 0);
      if (id != static_cast<int64_t>(t.streams.size()))
        at.fail(fmt::format("stream id {} out of order (expected {})", id, t.streams.size()));
      Stream s;
      s.pid = static_cast<int32_t>(get_int(j, "pid", at, false, 0));
      s.tid = static_cast<int32_t>(get_int(j, "tid", at, false, 0));
      s.ppid = static_cast<int32_t>(get_int(j, "ppid", at, false, 0));
      s.role = get_str(j, "role", at, false);
      s.rank = static_cast<int32_t>(get_int(j, "rank", at, false, 0));
      t.streams.push_back(std::move(s));
      order.emplace_back();
    } else if (j.contains("end")) {
      uint64_t n = get_uint(j, "events", at, true);
      if (n != events)
        at.fail(fmt::format("the end line counts {} events but the trace holds {} op and mark lines: lines are missing "
                            "or were added",
                            n, events));
      ended = true;
    } else {
      at.fail(fmt::format("unknown line kind {} (expected op, mark, file, stream or end)", text.substr(0, 80)));
    }
  }
  if (line_no == 0) throw UsageError(fmt::format("trace {}: the file is empty; {}", escape_bytes(path), kFixHint));
  if (!ended) LineCtx{path, line_no}.fail("the trace ends without its end line ({\"end\":true,...}): it is truncated");
  return t;
}

bool is_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string first;
  if (!std::getline(in, first)) return false;
  json j = json::parse(first, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.value("format", std::string()) == kFormatName;
}

std::string unused_trace_name(const std::string& stem) {
  struct stat st {};
  for (int n = 1; n <= 9999; ++n) {
    std::string name = n == 1 ? stem + ".jsonl" : fmt::format("{}-{}.jsonl", stem, n);
    if (::lstat(name.c_str(), &st) != 0 && errno == ENOENT) return name;
  }
  throw IoError(EEXIST, "choose a trace name", stem + ".jsonl", "pass --out with a new name");
}

}  // namespace ioprobe::trace
