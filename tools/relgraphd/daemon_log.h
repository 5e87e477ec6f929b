// relgraphd's log: every line the server writes to stderr, as text ("relgraphd: message
// key=value ...") or as JSON, one object per line:
//
//   {"ts":"2026-11-28T01:02:03.456Z","level":"info","msg":"...","key":"value","n":12}
//
// `ts` is UTC with milliseconds; `level` is error, info or debug; a line's structured fields
// follow `msg` (the slow-command line: command, duration_us, client, args). Strings are JSON
// escaped (\" \\ \n \r \t, other control bytes as \u00XX; bytes that are not UTF-8 as \u00XX of
// the byte, so every line parses).
//
// Thread-safety: FormatLogLine is pure. The process's log (SetLog, LogOn, LogLine, Log) may be
// used from any thread; each line is one write; the level and format change live (SIGHUP).
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace relgraph {

enum class LogLevel { kError = 0, kInfo = 1, kDebug = 2 };
enum class LogFormat { kText = 0, kJson = 1 };

std::string_view LogLevelName(LogLevel level);     // "error", "info", "debug"
std::string_view LogFormatName(LogFormat format);  // "text", "json"

// A structured field of a line: a string, or a number written bare in JSON.
struct LogField {
  std::string_view key;
  std::string value;
  bool number = false;
};

// `s` as the inside of a JSON string.
std::string JsonEscape(std::string_view s);

// One line, ending in '\n'.
std::string FormatLogLine(LogFormat format, LogLevel level,
                          std::chrono::system_clock::time_point ts, std::string_view msg,
                          std::initializer_list<LogField> fields = {});

// The process's log settings (error and info, text, until set).
void SetLog(LogLevel level, LogFormat format);
LogLevel CurrentLogLevel();
LogFormat CurrentLogFormat();
bool LogOn(LogLevel level);
// Writes one line to stderr now, when `level` is on.
void LogLine(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});

// printf-style: Log(LogLevel::kInfo, "listening on %s", addr).
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void Log(LogLevel level, const char* format, ...);

}  // namespace relgraph
