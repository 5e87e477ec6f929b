// Why this design: the formatter is a pure function, so tests check both formats byte for
// byte; the settings are two atomics, so SIGHUP can change them while other threads log; a
// line is built whole and written with one fwrite, so lines from threads never interleave.
#include "tools/relgraphd/daemon_log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <vector>

namespace relgraph {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_format{static_cast<int>(LogFormat::kText)};

std::string Timestamp(std::chrono::system_clock::time_point ts) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(ts.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char buf[96];  // GCC's -Wformat-truncation assumes each %d may take 11 chars; real ones take 24
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

// The length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "info";
}

std::string_view LogFormatName(LogFormat format) {
  return format == LogFormat::kJson ? "json" : "text";
}

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (const size_t n = c >= 0x80 ? Utf8Length(s, i) : 0; n > 0) {
      out.append(s.substr(i, n));
      i += n - 1;
    } else {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    }
  }
  return out;
}

std::string FormatLogLine(LogFormat format, LogLevel level,
                          std::chrono::system_clock::time_point ts, std::string_view msg,
                          std::initializer_list<LogField> fields) {
  std::string line;
  if (format == LogFormat::kJson) {
    line = "{\"ts\":\"" + Timestamp(ts) + "\",\"level\":\"" + std::string(LogLevelName(level)) +
           "\",\"msg\":\"" + JsonEscape(msg) + "\"";
    for (const LogField& f : fields) {
      line += ",\"" + JsonEscape(f.key) + "\":";
      line += f.number ? f.value : "\"" + JsonEscape(f.value) + "\"";
    }
    line += "}\n";
    return line;
  }
  line = "relgraphd: ";
  line.append(msg);
  for (const LogField& f : fields) {
    line += " ";
    line.append(f.key);
    line += "=";
    const bool quote =
        !f.number && (f.value.empty() || f.value.find_first_of(" \"") != std::string::npos);
    line += quote ? "\"" + JsonEscape(f.value) + "\"" : f.value;
  }
  line += "\n";
  return line;
}

void SetLog(LogLevel level, LogFormat format) {
  g_level.store(static_cast<int>(level), std::memory_order_relaxed);
  g_format.store(static_cast<int>(format), std::memory_order_relaxed);
}

LogLevel CurrentLogLevel() {
  return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed));
}

LogFormat CurrentLogFormat() {
  return static_cast<LogFormat>(g_format.load(std::memory_order_relaxed));
}

bool LogOn(LogLevel level) {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void LogLine(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!LogOn(level)) return;
  const std::string line =
      FormatLogLine(CurrentLogFormat(), level, std::chrono::system_clock::now(), msg, fields);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void Log(LogLevel level, const char* format, ...) {
  if (!LogOn(level)) return;
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::vector<char> buf(n > 0 ? static_cast<size_t>(n) + 1 : 1);
  std::vsnprintf(buf.data(), buf.size(), format, again);
  va_end(again);
  LogLine(level, std::string_view(buf.data(), n > 0 ? static_cast<size_t>(n) : 0));
}

}  // namespace relgraph
