// RELGRAPH_PREFETCH_HELPER marks a function whose only effect is a prefetch hint.
//
// Why: GCC (12, at -O2) deems a function whose only effect is __builtin_prefetch free of side
// effects and deletes calls to it, inlined or not, so the hint never runs (a four-line test
// shows it: the loop that calls such a helper has no prefetch instruction). Forced inline
// before that analysis runs, the builtin lands at the call site, where GCC keeps it.
// tests/engine/mem/prefetch_check.sh checks that the macro keeps a hint, that the compiled
// fan-out keeps its own, and that IdMap::Prefetch keeps its (marked: the id slots of Import,
// batches of writes and relations, WAL replay; paired runs gave Import 1.20x and batches of
// relations 1.12x, deep fan pages within noise). The other helpers in engine/graph/ and
// PostStore/PostIndex are not marked, so their hints do not run: marking all of them once gave
// deep fan pages -20 to -40%, unexplained so far; they wait for that to be understood.
#pragma once

#define RELGRAPH_PREFETCH_HELPER [[gnu::always_inline]] inline
