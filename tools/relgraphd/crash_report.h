// A fatal signal's report in relgraphd's log: which signal, at which address, and the stack,
// before the process dies as it would have (core dump and exit status unchanged).
//
// Why: a server that vanishes under load leaves an operator, and a failing test, with only
// "connection refused". The report goes to stderr (the journal under systemd) with
// async-signal-safe calls only: write(2) and glibc's backtrace_symbols_fd, whose first call
// (which may load libgcc) is made at install time, not inside the handler.
#pragma once

namespace relgraph {

// Installs the handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT. The calling thread's
// faults run it on an alternate stack, so a stack overflow there is reported too; other
// threads run it on their own stack. Call once, early in main. Not thread-safe. A no-op under
// AddressSanitizer, whose own report is better.
void InstallCrashReport();

}  // namespace relgraph
