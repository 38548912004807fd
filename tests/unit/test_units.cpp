#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

using namespace ioprobe;

TEST_CASE("parse_size: decimal and binary units", "[units]") {
  CHECK(parse_size("4096", "x") == 4096);
  CHECK(parse_size("4KiB", "x") == 4096);
  CHECK(parse_size("4k", "x") == 4096);
  CHECK(parse_size("4KB", "x") == 4000);
  CHECK(parse_size("1PiB", "x") == (uint64_t{1} << 50));
  CHECK(parse_size("2PB", "x") == 2000000000000000ull);
  CHECK(parse_size("110kB", "x") == 110000);
  CHECK(parse_size("1.5GiB", "x") == 1610612736ULL);
  CHECK(parse_size("1.5GB", "x") == 1500000000ULL);
  CHECK(parse_size("1M", "x") == 1048576);
  CHECK(parse_size("64MiB", "x") == 67108864);
  CHECK(parse_size(" 2 TiB ", "x") == 2199023255552ULL);
  CHECK(parse_size("0", "x") == 0);
}

TEST_CASE("parse_size: bad input names the option and value", "[units]") {
  CHECK_THROWS_AS(parse_size("-1", "--file-size"), UsageError);
  CHECK_THROWS_AS(parse_size("4XB", "--file-size"), UsageError);
  CHECK_THROWS_AS(parse_size("", "--file-size"), UsageError);
  CHECK_THROWS_AS(parse_size("1.5", "--file-size"), UsageError);
  CHECK_THROWS_AS(parse_size("99999999999TB", "--file-size"), UsageError);
  try {
    parse_size("4XB", "--file-size");
  } catch (const UsageError& e) {
    std::string m = e.what();
    CHECK(m.find("--file-size") != std::string::npos);
    CHECK(m.find("4XB") != std::string::npos);
    CHECK(e.exit_code() == 2);
  }
}

TEST_CASE("parse_duration and parse_count", "[units]") {
  CHECK(parse_duration("60", "d") == 60.0);
  CHECK(parse_duration("60s", "d") == 60.0);
  CHECK(parse_duration("500ms", "d") == Approx(0.5));
  CHECK(parse_duration("10m", "d") == 600.0);
  CHECK(parse_duration("1h", "d") == 3600.0);
  CHECK_THROWS_AS(parse_duration("-5s", "d"), UsageError);
  CHECK_THROWS_AS(parse_duration("5 parsecs", "d"), UsageError);
  CHECK(parse_count("1281167", "n") == 1281167);
  CHECK(parse_count("1_281_167", "n") == 1281167);
  CHECK(parse_count("1,281,167", "n") == 1281167);
  CHECK(parse_count("12,000", "n") == 12000);
  // A separator that does not group thousands is a list or a typo, not one number.
  for (const char* bad : {"1,2", "1,2,4", "1,00", "1,0000", ",100", "100,", "1_000,000", "1234,567"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_count(bad, "n"), UsageError);
  }
  CHECK_THROWS_AS(parse_count("-3", "n"), UsageError);
  CHECK_THROWS_AS(parse_count("3.5", "n"), UsageError);
  CHECK_THROWS_AS(parse_count("99999999999999999999999", "n"), UsageError);
}

TEST_CASE("rates print both MB/s and MiB/s", "[units]") {
  // 1,073,741,824 B in 2.000 s = 536.87 MB/s = 512.00 MiB/s.
  CHECK(format_rate(1073741824.0 / 2.0) == "536.87 MB/s (512.00 MiB/s)");
  CHECK(format_count(1281167) == "1,281,167");
  CHECK(format_bytes(1073741824ULL) == "1.00 GiB (1,073,741,824 B)");
}

TEST_CASE("escape_bytes is reversible for invalid UTF-8", "[text]") {
  std::string latin1 = "V\xED"
                       "ctor.bin";
  CHECK(escape_bytes(latin1) == "V\\xEDctor.bin");
  CHECK(unescape_bytes(escape_bytes(latin1)) == latin1);
  std::string cyr = "Комерція.bin";
  CHECK(escape_bytes(cyr) == cyr);
  std::string tricky = "a\\xEDb";  // a literal backslash-x sequence must survive the round trip
  CHECK(unescape_bytes(escape_bytes(tricky)) == tricky);
  std::string controls = "a\rb\x1B[2Jc\nd\x7F";  // CR, ESC, newline, DEL never reach a terminal raw
  CHECK(escape_bytes(controls) == "a\\x0Db\\x1B[2Jc\\x0Ad\\x7F");
  CHECK(unescape_bytes(escape_bytes(controls)) == controls);
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("plain") == "plain");
}

TEST_CASE("parent_directory: the directory part of a path, '.' for a bare name", "[units]") {
  CHECK(parent_directory("a/b.json") == "a");
  CHECK(parent_directory("/x") == "/");
  CHECK(parent_directory("b.json") == ".");
  CHECK(parent_directory("/mnt/ck/out.json") == "/mnt/ck");
}

TEST_CASE("absurd exponents give the out-of-range message, not 'unknown unit'", "[units]") {
  auto message = [](auto f) {
    try {
      f();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  std::string m = message([] { parse_duration("1e400s", "--duration"); });
  CHECK(m == "--duration: '1e400s' is out of range (at most 365 days)");
  m = message([] { parse_duration("1e400", "--duration"); });
  CHECK(m.find("out of range") != std::string::npos);
  m = message([] { parse_duration("1e9h", "--duration"); });
  CHECK(m == "--duration: '1e9h' is out of range (at most 365 days)");
  m = message([] { parse_size("99999999999999999999999PiB", "--size"); });
  CHECK(m == "--size: '99999999999999999999999PiB' is too large");
  // Exponents within range are numbers like any other in a duration; a lone 'e' is still refused.
  CHECK(parse_duration("1.5e2s", "d") == Approx(150.0));
  CHECK(message([] { parse_duration("1es", "d"); }).find("unknown time unit in '1es'; use us, ms, s, m or h") !=
        std::string::npos);
  CHECK(message([] { parse_duration("e5s", "d"); }).find("is not a duration") != std::string::npos);
}

TEST_CASE("parse_size: an exponent is refused, naming the value and the accepted forms", "[units]") {
  auto message = [](const char* text) {
    try {
      parse_size(text, "--file-size");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  for (const char* text : {"1e3", "1E3", "1e3KB", "2.5e-1MiB", "1e+3", "1e400GiB"}) {
    const std::string m = message(text);
    INFO(m);
    CHECK_THAT(m, Catch::StartsWith(fmt::format("--file-size: '{}' has an exponent", text)));
    CHECK_THAT(m, Catch::Contains("4k, 115KB, 1MiB"));
  }
  // A fraction of a byte names the accepted forms too; a fraction with a unit giving whole bytes is a size.
  CHECK_THAT(message("1.5"), Catch::Contains("not a whole number of bytes; a size is a whole number"));
  CHECK(parse_size("1.5KB", "x") == 1500);
  // A unit starting with 'e' is not an exponent: unknown unit, as before.
  CHECK_THAT(message("4eb"), Catch::Contains("unknown size unit"));
}

TEST_CASE("numbers are decimal only: another base, inf, nan or a sign is refused naming the option", "[units]") {
  CHECK(parse_decimal("12", "--x") == 12.0);
  CHECK(parse_decimal("0.5", "--x") == 0.5);
  CHECK(parse_decimal(".5", "--x") == 0.5);
  CHECK(parse_decimal("70e9", "--x") == 70e9);
  CHECK(parse_decimal(" 7 ", "--x") == 7.0);
  CHECK(parse_decimal("010", "--x") == 10.0);  // a leading zero is still decimal, not octal
  for (const char* bad : {"0x10", "0X1p3", "0x10B", "inf", "nan", "infinity", "+1", "-1", "1e", "1.2.3", "", "1 2",
                          "0b101", "0o17", "1,5"}) {
    INFO(bad);
    try {
      parse_decimal(bad, "--params");
      FAIL("accepted '" << bad << "'");
    } catch (const UsageError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("--params") && Catch::Contains(std::string("'") + bad + "'"));
      CHECK(e.exit_code() == 2);
    }
  }
  // Sizes, durations and counts: a hexadecimal value is named as such, not read as "0" with the unit "x10".
  for (const char* hex : {"0x10", "0x10B", "0X400k"}) {
    INFO(hex);
    try {
      parse_size(hex, "--file-size");
      FAIL("accepted");
    } catch (const UsageError& e) {
      CHECK_THAT(std::string(e.what()),
                 Catch::Contains("--file-size") && Catch::Contains("base 16") && Catch::Contains("decimal"));
    }
  }
  CHECK_THROWS_WITH(parse_duration("0x10s", "--duration"), Catch::Contains("--duration") && Catch::Contains("base 16"));
  CHECK_THROWS_WITH(parse_count("0x10", "--files"), Catch::Contains("--files") && Catch::Contains("base 16"));
  CHECK_THROWS_WITH(parse_count("0b11", "--files"), Catch::Contains("base 2"));
  CHECK(parse_size("0B", "x") == 0);  // zero bytes, not a binary literal
  CHECK(parse_size("0b", "x") == 0);
}
