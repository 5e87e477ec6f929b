// The one place net/ includes Boost.Asio. Boost 1.74's awaitable.hpp uses std::exchange without
// including <utility> under C++20, so <utility> must come first.
#pragma once

#include <utility>

#include <boost/asio.hpp>
