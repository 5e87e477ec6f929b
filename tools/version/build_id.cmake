# Run at every build (cmake -P): writes relgraph_build.h with the git commit the sources are
# at, rewriting it only when that changed, so that an unchanged tree rebuilds nothing.
# In:  SOURCE_DIR (the repository), OUT (the header), BUILD_ID (optional: a packager's id, used
# as is instead of asking git, e.g. from a tarball without .git).
if(NOT BUILD_ID)
  execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD
                  OUTPUT_VARIABLE BUILD_ID OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE failed ERROR_QUIET)
  if(failed)
    set(BUILD_ID "")
  endif()
endif()
if(NOT BUILD_ID MATCHES "^[0-9a-f]+$")
  set(BUILD_ID "unknown")
  set(BUILD_NUMBER 0)
else()
  # The first 16 hex digits as a number: INFO's server_build field (a u64).
  string(SUBSTRING "${BUILD_ID}" 0 16 head)
  set(BUILD_NUMBER "0x${head}")
endif()
set(text "// Generated at build time by tools/version/build_id.cmake: the build's git commit.
#pragma once

#include <cstdint>

namespace relgraph {

inline constexpr const char* kBuildId = \"${BUILD_ID}\";  // \"unknown\" outside a git checkout
inline constexpr uint64_t kBuildNumber = ${BUILD_NUMBER}ull;  // its first 16 hex digits; 0 unknown

}  // namespace relgraph
")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
