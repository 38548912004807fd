#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <numeric>

#include "core/error.hpp"
#include "dataset/generator.hpp"
#include "dataset/manifest.hpp"
#include "dataset/spec.hpp"
#include "dataset/walker.hpp"

using namespace ioprobe;

namespace {
std::string temp_dir() {
  char tmpl[] = "/tmp/ioprobe-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}
void write_file(const std::string& p, size_t n) { std::ofstream(p, std::ios::binary) << std::string(n, 'x'); }
}  // namespace

TEST_CASE("generated size distributions keep the stated mean within 2%", "[dataset]") {
  for (SizeDist dist : {SizeDist::kLognormal, SizeDist::kNormal}) {
    DatasetSpec s;
    s.files = 200000;
    s.size_mean = 114660;
    s.size_stdev = 57330;
    s.size_min = 1024;
    s.size_max = 2 << 20;
    s.dist = dist;
    s.seed = 3;
    auto sizes = draw_file_sizes(s);
    double mean = std::accumulate(sizes.begin(), sizes.end(), 0.0) / sizes.size();
    double var = 0;
    for (auto v : sizes) var += (v - mean) * (v - mean);
    double sd = std::sqrt(var / sizes.size());
    INFO(size_dist_name(dist) << " mean " << mean << " sd " << sd);
    CHECK(std::fabs(mean - 114660) / 114660 < 0.02);
    CHECK(std::fabs(sd - 57330) / 57330 < 0.05);  // the spread too, unlike DLIO's ~0.71x
    CHECK(draw_file_sizes(s) == sizes);           // deterministic
  }
}

TEST_CASE("ensure_dataset generates, reuses, and refuses foreign directories", "[dataset]") {
  std::string root = temp_dir();
  DatasetSpec s;
  s.files = 50;
  s.dirs = 5;
  s.size_mean = 5000;
  s.size_max = 100000;
  s.seed = 9;
  GenerateOptions g;
  g.progress = false;
  auto a = ensure_dataset(root + "/ds", s, g);
  a.lock.reset();  // its shared lock would make this process's next call wait for itself
  CHECK(a.action == "generated");
  REQUIRE(a.index.size() == 50);
  struct stat st {};
  REQUIRE(stat((root + "/ds/" + a.index.path(7)).c_str(), &st) == 0);
  CHECK(st.st_size == a.index.file_size(7));
  auto b = ensure_dataset(root + "/ds", s, g);
  b.lock.reset();
  CHECK(b.action == "reused");

  // Fewer files of the same shape: the first ones are exactly that dataset, reused as they are.
  s.files = 20;
  auto sub = ensure_dataset(root + "/ds", s, g);
  sub.lock.reset();
  CHECK(sub.action == "reused: the first 20 of its 50 files");
  REQUIRE(sub.index.size() == 20);
  CHECK(std::string(sub.index.path(7)) == a.index.path(7));
  CHECK(sub.index.file_size(19) == a.index.file_size(19));
  uint64_t first20 = 0;
  for (size_t i = 0; i < 20; ++i) first20 += static_cast<uint64_t>(a.index.file_size(i));
  CHECK(sub.bytes == first20);

  // Another shape (or more files) is refused without --regenerate, and nothing is touched.
  write_file(root + "/ds/users-file.txt", 10);
  s.dirs = 4;
  try {
    ensure_dataset(root + "/ds", s, g);
    FAIL("a dataset of another shape was replaced without --regenerate");
  } catch (const UsageError& e) {
    CHECK_THAT(e.what(), Catch::Contains("dirs 5 on disk vs 4 asked") && Catch::Contains("--regenerate"));
  }
  REQUIRE(stat((root + "/ds/" + a.index.path(7)).c_str(), &st) == 0);
  s.dirs = 5;
  s.files = 60;
  CHECK_THROWS_AS(ensure_dataset(root + "/ds", s, g), UsageError);

  // With --regenerate only our own files are replaced; a foreign file stays.
  g.regenerate = true;
  s.files = 20;
  s.dirs = 4;
  auto c = ensure_dataset(root + "/ds", s, g);
  c.lock.reset();
  CHECK(c.action == "regenerated (spec changed, --regenerate)");
  CHECK(stat((root + "/ds/users-file.txt").c_str(), &st) == 0);
  g.regenerate = false;

  // A non-empty directory without our manifest is refused; a file as --dir too.
  mkdir((root + "/foreign").c_str(), 0755);
  write_file(root + "/foreign/precious.dat", 100);
  CHECK_THROWS_AS(ensure_dataset(root + "/foreign", s, g), UsageError);
  CHECK(stat((root + "/foreign/precious.dat").c_str(), &st) == 0);
  CHECK_THROWS_AS(ensure_dataset(root + "/foreign/precious.dat", s, g), UsageError);
  CHECK_THROWS_AS(ensure_dataset(root + "/missing-parent/x", s, g), UsageError);
  std::system(("rm -rf " + root).c_str());
}

TEST_CASE("an incomplete generation is detected and redone", "[dataset]") {
  std::string root = temp_dir();
  DatasetSpec s;
  s.files = 10;
  s.size_mean = 1000;
  s.size_max = 1000;
  GenerateOptions g;
  g.progress = false;
  ensure_dataset(root + "/ds", s, g);
  Manifest m = *read_manifest(root + "/ds");
  m.complete = false;
  write_manifest(root + "/ds", m);
  auto again = ensure_dataset(root + "/ds", s, g);
  again.lock.reset();
  CHECK(again.action == "regenerated (previous generation incomplete)");
  CHECK(read_manifest(root + "/ds")->complete);
  std::system(("rm -rf " + root).c_str());
}

TEST_CASE("read_file_list refuses malformed lines (found by tests/fuzz)", "[dataset]") {
  std::string dir = temp_dir();
  for (std::string bad : {std::string("0`\t\0{\n", 7), std::string("12\t../up\n"), std::string("12\t/abs\n"),
                          std::string("x\tname\n"), std::string("-4\tname\n"), std::string("12\t\n")}) {
    INFO(bad);
    std::ofstream(dir + "/" + kFileListName, std::ios::binary) << bad;
    CHECK_THROWS_AS(read_file_list(dir, ""), UsageError);
  }
  std::ofstream(dir + "/" + kFileListName, std::ios::binary) << "12\tc0000/a b:c.bin\n0\tempty.bin\n";
  FileIndex ok = read_file_list(dir, "");
  REQUIRE(ok.size() == 2);
  CHECK(std::string(ok.path(0)) == "c0000/a b:c.bin");
  CHECK(ok.file_size(1) == 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("walk_tree: symlink loops, dangling links, aliases", "[walker]") {
  std::string ds = temp_dir();
  for (int i = 0; i < 10; ++i) write_file(ds + "/f" + std::to_string(i), 4096);
  mkdir((ds + "/sub").c_str(), 0755);
  REQUIRE(symlink("..", (ds + "/sub/up").c_str()) == 0);
  REQUIRE(symlink(".", (ds + "/self").c_str()) == 0);
  REQUIRE(symlink("f0", (ds + "/alias").c_str()) == 0);
  // Dangling by construction: its target is a name inside our own fresh directory, never created.
  REQUIRE(symlink((ds + "/no-such-target").c_str(), (ds + "/dangling").c_str()) == 0);
  // A link to a character device: never read (it would never end), skipped and said, not dropped.
  REQUIRE(symlink("/dev/zero", (ds + "/zero.jpg").c_str()) == 0);
  for (bool follow : {false, true}) {
    WalkResult w = walk_tree(ds, follow);
    INFO("follow " << follow);
    CHECK(w.index.size() == 11);  // 10 files + alias
    int loops = 0, dangling = 0, device = 0;
    for (const auto& msg : w.warnings) {
      loops += msg.find("symlink loop") != std::string::npos;
      dangling += msg.find("dangling") != std::string::npos;
      device += msg.find("zero.jpg': symlink to a device, FIFO or socket") != std::string::npos;
    }
    CHECK(dangling == 1);
    CHECK(device == 1);
    CHECK(w.skipped == (follow ? 4U : 2U));  // the dangling link and the device link (+ 2 loops when following)
    CHECK(loops == (follow ? 2 : 0));
    CHECK(w.duplicates == 1);  // alias names f0 again
  }
  CHECK_THROWS_AS(walk_tree(ds + "/f0", false), UsageError);
  CHECK_THROWS_AS(walk_tree(ds + "/nope", false), UsageError);
  std::system(("rm -rf " + ds).c_str());
}

namespace {
std::string walk_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("read_path_list: CRLF, comments, blank lines, duplicates, missing list", "[walker]") {
  std::string ds = temp_dir();
  write_file(ds + "/a.bin", 100);
  write_file(ds + "/b.bin", 200);
  std::string list = ds + "/list.txt";
  std::ofstream(list, std::ios::binary) << "# my dataset\r\n\r\n   \r\n"
                                        << ds << "/a.bin\r\n  # indented comment\n"
                                        << ds << "/b.bin\n";
  WalkResult w = read_path_list(list);
  REQUIRE(w.index.size() == 2);
  CHECK(std::string(w.index.path(0)) == ds + "/a.bin");  // no carriage return left on the path
  CHECK(std::string(w.index.path(1)) == ds + "/b.bin");
  CHECK(w.duplicates == 0);
  CHECK(w.warnings.empty());

  // The same file named three more times, once through ./ and b/../ spellings.
  std::ofstream(list, std::ios::binary) << ds << "/a.bin\n"
                                        << ds << "/./a.bin\n"
                                        << ds << "/b.bin\n"
                                        << ds << "/x/../a.bin\n"
                                        << ds << "/a.bin\n";
  w = read_path_list(list);
  CHECK(w.index.size() == 5);
  CHECK(w.duplicates == 3);
  REQUIRE(w.warnings.size() == 1);
  CHECK(w.warnings[0].find("page cache") != std::string::npos);

  std::ofstream(list, std::ios::binary) << "# only comments\n\n";
  CHECK(walk_error([&] { read_path_list(list); }).find("names no files") != std::string::npos);
  CHECK(walk_error([&] { read_path_list(ds + "/nope.txt"); }).find("does not exist") != std::string::npos);
  CHECK(walk_error([&] { read_path_list(ds); }).find("is a directory") != std::string::npos);
  CHECK(walk_error([&] { walk_tree(ds + "/nope", false); }).find("does not exist") != std::string::npos);
  std::system(("rm -rf " + ds).c_str());
}

TEST_CASE("walk_tree: hard links are counted as duplicates, distinct files are not", "[walker]") {
  std::string ds = temp_dir();
  for (int i = 0; i < 5; ++i) write_file(ds + "/f" + std::to_string(i), 512);
  WalkResult w = walk_tree(ds, false);
  CHECK(w.index.size() == 5);
  CHECK(w.duplicates == 0);
  REQUIRE(link((ds + "/f1").c_str(), (ds + "/hard").c_str()) == 0);
  w = walk_tree(ds, false);
  CHECK(w.index.size() == 6);
  CHECK(w.duplicates == 1);
  REQUIRE(w.warnings.size() == 1);
  CHECK(w.warnings[0].find("hard links") != std::string::npos);
  std::system(("rm -rf " + ds).c_str());
}
