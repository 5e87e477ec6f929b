// A fatal signal's report: see crash_report.h.
#include "tools/relgraphd/crash_report.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace relgraph {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int kMaxFrames = 64;
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

void WriteText(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

// `value` in base 10 or 16 (with 0x), without a heap or stdio.
void WriteNumber(uintptr_t value, unsigned base) {
  char digits[2 + 2 * sizeof value + 1 + 8];
  int i = sizeof digits - 1;
  digits[i] = '\0';
  do {
    digits[--i] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value != 0);
  if (base == 16) {
    digits[--i] = 'x';
    digits[--i] = '0';
  }
  WriteText(digits + i);
}

void OnFatalSignal(int signal, siginfo_t* info, void*) {
  WriteText("relgraphd: fatal signal ");
  WriteText(sigdescr_np(signal) != nullptr ? sigdescr_np(signal) : "?");
  if (info != nullptr && info->si_code <= 0) {  // kill(2), raise(3), abort(3): not a fault
    WriteText(" sent by process ");
    WriteNumber(static_cast<uintptr_t>(info->si_pid), 10);
  } else if (info != nullptr) {
    WriteText(" at address ");
    WriteNumber(reinterpret_cast<uintptr_t>(info->si_addr), 16);
  }
  WriteText("; stack:\n");
  void* frames[kMaxFrames];
  const int depth = ::backtrace(frames, kMaxFrames);
  ::backtrace_symbols_fd(frames, depth, STDERR_FILENO);
  WriteText("relgraphd: resolve a frame with addr2line -f -C -e PROGRAM OFFSET (its +0x...)\n");
  // Die of the same signal, as if no handler were installed (SA_RESETHAND restored it).
  ::raise(signal);
}

}  // namespace

void InstallCrashReport() {
  if (kUnderAddressSanitizer) return;
  void* warm[1];
  ::backtrace(warm, 1);  // loads the unwinder now, not inside the handler
  static char alternate_stack[64 * 1024];
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof alternate_stack;
  ::sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_sigaction = OnFatalSignal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  for (int signal : kFatalSignals) ::sigaction(signal, &action, nullptr);
}

}  // namespace relgraph
