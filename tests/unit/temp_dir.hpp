// A temporary directory for one unit test: made under $TMPDIR (or /tmp) as
// "<base>/ioprobe-<tag>.XXXXXX", removed with everything in it when the object goes out of scope
// (also when a REQUIRE fails). Fails the test (REQUIRE) when it cannot be made.
#pragma once

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

struct TempDir {
  std::string path;
  explicit TempDir(const std::string& tag = "test") {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ioprobe-" + tag + ".XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back(0);
    REQUIRE(mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// Regular files directly in the directory.
  size_t count_files() const {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(path)) n += e.is_regular_file();
    return n;
  }
};
