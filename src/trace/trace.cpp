#include "trace/trace.hpp"

#include <array>
#include <utility>

namespace ioprobe::trace {

namespace {

constexpr std::array<std::pair<OpKind, std::string_view>, 7> kOpNames{{
    {OpKind::open, "open"},
    {OpKind::close, "close"},
    {OpKind::read, "read"},
    {OpKind::lseek, "lseek"},
    {OpKind::stat, "stat"},
    {OpKind::mmap, "mmap"},
    {OpKind::munmap, "munmap"},
}};

constexpr std::array<std::pair<MarkKind, std::string_view>, 5> kMarkNames{{
    {MarkKind::batch_wait_begin, "batch_wait_begin"},
    {MarkKind::batch_wait_end, "batch_wait_end"},
    {MarkKind::worker_start, "worker_start"},
    {MarkKind::epoch_begin, "epoch_begin"},
    {MarkKind::epoch_end, "epoch_end"},
}};

}  // namespace

std::string_view op_kind_name(OpKind k) {
  for (const auto& [kind, name] : kOpNames)
    if (kind == k) return name;
  return "unknown";
}

bool parse_op_kind(std::string_view name, OpKind* out) {
  for (const auto& [kind, n] : kOpNames)
    if (n == name) {
      *out = kind;
      return true;
    }
  return false;
}

std::string_view mark_kind_name(MarkKind k) {
  for (const auto& [kind, name] : kMarkNames)
    if (kind == k) return name;
  return "unknown";
}

bool parse_mark_kind(std::string_view name, MarkKind* out) {
  for (const auto& [kind, n] : kMarkNames)
    if (n == name) {
      *out = kind;
      return true;
    }
  return false;
}

uint64_t Trace::read_bytes() const {
  uint64_t total = 0;
  for (const auto& s : streams)
    for (const auto& op : s.ops)
      if (op.kind == OpKind::read) total += op.bytes;
  return total;
}

uint64_t Trace::op_count() const {
  uint64_t n = 0;
  for (const auto& s : streams) n += s.ops.size();
  return n;
}

}  // namespace ioprobe::trace
