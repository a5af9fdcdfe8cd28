// Which way bytes move between an object and its packed form: the one direction type of the
// engines (which run it) and the model (whose perf tables are measured per direction).
#pragma once

namespace strider::canon {

enum class Direction { Pack, Unpack };

}  // namespace strider::canon
