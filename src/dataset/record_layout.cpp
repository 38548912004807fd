#include "dataset/record_layout.hpp"

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <xxhash.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

RecordLayout::RecordLayout(DatasetKind kind, uint64_t files, uint64_t per_file, uint64_t fixed_size)
    : kind_(kind), files_(files), per_file_(per_file), fixed_(fixed_size) {}

RecordLayout::RecordLayout(DatasetKind kind, uint64_t files, uint64_t per_file, const std::vector<uint64_t>& sizes)
    : kind_(kind), files_(files), per_file_(per_file) {
  if (sizes.size() != files * per_file)
    throw std::logic_error("RecordLayout: sizes.size() != files x records_per_file");
  bool all_same = !sizes.empty();
  for (uint64_t s : sizes) {
    if (s > UINT32_MAX) throw std::logic_error("RecordLayout: record of 4 GiB or more");
    all_same &= s == sizes.front();
  }
  if (all_same && sizes.front() > 0) {
    fixed_ = sizes.front();
    return;
  }
  sizes_.assign(sizes.begin(), sizes.end());
}

uint64_t RecordLayout::file_bytes(uint64_t f) const {
  if (fixed_) return fixed_ * per_file_;
  uint64_t sum = 0;
  for (uint64_t r = 0; r < per_file_; ++r) sum += sizes_[f * per_file_ + r];
  return sum;
}

uint64_t RecordLayout::total_bytes() const {
  uint64_t sum = 0;
  for (uint64_t f = 0; f < files_; ++f) sum += file_bytes(f);
  return sum;
}

RecordPlace RecordLayout::locate_fixed(uint64_t sample) const {
  if (!fixed_) throw std::logic_error("RecordLayout::locate_fixed needs fixed record sizes");
  return {sample / per_file_, (sample % per_file_) * fixed_, fixed_};
}

nlohmann::json RecordLayout::write(const std::string& dir) const {
  nlohmann::json j = {{"kind", dataset_kind_name(kind_)}, {"records_per_file", per_file_}};
  if (fixed_) {
    j["fixed_size_bytes"] = fixed_;
    return j;
  }
  std::string bytes(sizes_.size() * 4, '\0');
  for (size_t i = 0; i < sizes_.size(); ++i) {
    const uint32_t v = sizes_[i];
    const unsigned char le[4] = {static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8),
                                 static_cast<unsigned char>(v >> 16), static_cast<unsigned char>(v >> 24)};
    std::memcpy(bytes.data() + 4 * i, le, 4);
  }
  write_file_atomically(dir + "/" + kRecordListName, bytes, "check that the dataset directory is writable");
  j["list"] = kRecordListName;
  j["list_xxh64"] = fmt::format("{:016x}", XXH64(bytes.data(), bytes.size(), 0));
  return j;
}

RecordLayout RecordLayout::read(const std::string& dir, const nlohmann::json& rj,
                                const std::vector<int64_t>& file_sizes) {
  const std::string where = escape_bytes(dir + "/.ioprobe-dataset.json");
  RecordLayout l;
  try {
    l.kind_ = parse_dataset_kind(rj.at("kind").get<std::string>());
    l.per_file_ = rj.at("records_per_file").get<uint64_t>();
    l.fixed_ = rj.value("fixed_size_bytes", uint64_t{0});
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("'{}': malformed \"records\" object ({}); remove the dataset with its manifest or "
                                 "choose another --dir",
                                 where, e.what()));
  }
  l.files_ = file_sizes.size();
  if (!l.fixed_) {
    const std::string path = dir + "/" + kRecordListName;
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw UsageError(fmt::format("record index '{}' is missing; remove the dataset's manifest to regenerate it",
                                   escape_bytes(path)));
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    if (fmt::format("{:016x}", XXH64(bytes.data(), bytes.size(), 0)) != rj.value("list_xxh64", "") ||
        bytes.size() != l.files_ * l.per_file_ * 4)
      throw UsageError(fmt::format("record index '{}' does not match its manifest (changed after generation); remove "
                                   "the dataset with its manifest or choose another --dir",
                                   escape_bytes(path)));
    l.sizes_.resize(bytes.size() / 4);
    for (size_t i = 0; i < l.sizes_.size(); ++i) {
      const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + 4 * i);
      l.sizes_[i] = static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 | static_cast<uint32_t>(b[2]) << 16 |
                    static_cast<uint32_t>(b[3]) << 24;
    }
  }
  for (uint64_t f = 0; f < l.files_; ++f)
    if (file_sizes[f] < 0 || static_cast<uint64_t>(file_sizes[f]) != l.file_bytes(f))
      throw UsageError(fmt::format("'{}': file {} has {} B in the file list but its records add up to {} B; remove the "
                                   "dataset with its manifest or choose another --dir",
                                   where, f, file_sizes[f], l.file_bytes(f)));
  return l;
}

}  // namespace ioprobe
