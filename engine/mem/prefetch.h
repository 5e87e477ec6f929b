// RELGRAPH_PREFETCH_HELPER marks a function whose only effect is a prefetch hint.
//
// Why: GCC (12, at -O2) deems a function whose only effect is __builtin_prefetch free of side
// effects and deletes calls to it, inlined or not, so the hint never runs (a four-line test
// shows it: the loop that calls such a helper has no prefetch instruction). Forced inline
// before that analysis runs, the builtin lands at the call site, where GCC keeps it.
// tests/engine/mem/prefetch_test.sh checks the compiled fan-out keeps its hints.
#pragma once

#define RELGRAPH_PREFETCH_HELPER [[gnu::always_inline]] inline
