// relgraphd's log lines: both formats byte for byte, JSON escaping of every awkward byte,
// structured fields, and the level filter.
#include "tools/relgraphd/daemon_log.h"

#include <doctest.h>

namespace relgraph {
namespace {

// 2026-11-28T01:02:03.456Z
const auto kTs = std::chrono::system_clock::time_point(std::chrono::milliseconds(1795827723456));

TEST_CASE("daemon log: a text line and a JSON line of the same message") {
  CHECK(FormatLogLine(LogFormat::kText, LogLevel::kInfo, kTs, "listening on 127.0.0.1:7707") ==
        "relgraphd: listening on 127.0.0.1:7707\n");
  CHECK(FormatLogLine(LogFormat::kJson, LogLevel::kInfo, kTs, "listening on 127.0.0.1:7707") ==
        "{\"ts\":\"2026-11-28T01:02:03.456Z\",\"level\":\"info\","
        "\"msg\":\"listening on 127.0.0.1:7707\"}\n");
  CHECK(FormatLogLine(LogFormat::kJson, LogLevel::kError, kTs, "x").find("\"level\":\"error\"") !=
        std::string::npos);
}

TEST_CASE("daemon log: structured fields, numbers bare, strings escaped and quoted") {
  const std::initializer_list<LogField> fields = {{"command", "follow"},
                                                  {"duration_us", "12345", true},
                                                  {"client", "127.0.0.1:50000"},
                                                  {"args", "1 2 -"}};
  CHECK(FormatLogLine(LogFormat::kJson, LogLevel::kInfo, kTs, "slow command", fields) ==
        "{\"ts\":\"2026-11-28T01:02:03.456Z\",\"level\":\"info\",\"msg\":\"slow command\","
        "\"command\":\"follow\",\"duration_us\":12345,\"client\":\"127.0.0.1:50000\","
        "\"args\":\"1 2 -\"}\n");
  CHECK(FormatLogLine(LogFormat::kText, LogLevel::kInfo, kTs, "slow command", fields) ==
        "relgraphd: slow command command=follow duration_us=12345 client=127.0.0.1:50000 "
        "args=\"1 2 -\"\n");
}

TEST_CASE("daemon log: JSON escaping of quotes, backslashes, controls and bytes not UTF-8") {
  CHECK(JsonEscape("a\"b\\c") == "a\\\"b\\\\c");
  CHECK(JsonEscape("l1\nl2\r\t") == "l1\\nl2\\r\\t");
  CHECK(JsonEscape(std::string("\x01\x1f\x7f", 3)) == "\\u0001\\u001f\\u007f");
  CHECK(JsonEscape(std::string("nul\0x", 5)) == "nul\\u0000x");
  CHECK(JsonEscape("caf\xc3\xa9 \xe2\x86\x92") == "caf\xc3\xa9 \xe2\x86\x92");  // UTF-8 kept
  CHECK(JsonEscape("bad \xff\xc3") == "bad \\u00ff\\u00c3");  // not UTF-8: each byte escaped
  CHECK(JsonEscape("\xe2\x86") == "\\u00e2\\u0086");          // a cut sequence too
  // A message with everything still makes one line.
  const std::string line =
      FormatLogLine(LogFormat::kJson, LogLevel::kInfo, kTs, "x\ny\"z\\", {{"k\"", "v\n"}});
  CHECK(line ==
        "{\"ts\":\"2026-11-28T01:02:03.456Z\",\"level\":\"info\",\"msg\":\"x\\ny\\\"z\\\\\","
        "\"k\\\"\":\"v\\n\"}\n");
  CHECK(line.find('\n') == line.size() - 1);
}

TEST_CASE("daemon log: the level filter and live settings") {
  SetLog(LogLevel::kError, LogFormat::kJson);
  CHECK(LogOn(LogLevel::kError));
  CHECK_FALSE(LogOn(LogLevel::kInfo));
  CHECK(CurrentLogFormat() == LogFormat::kJson);
  SetLog(LogLevel::kDebug, LogFormat::kText);
  CHECK(LogOn(LogLevel::kDebug));
  CHECK(CurrentLogLevel() == LogLevel::kDebug);
  CHECK(LogFormatName(CurrentLogFormat()) == "text");
  CHECK(LogLevelName(LogLevel::kInfo) == "info");
}

}  // namespace
}  // namespace relgraph
