// What simumax-sim asks of its allocator: Debian's jemalloc (linked in for the large SimGrid runs, docs/simgrid.md)
// keeps freed pages for ~10 s per arena, which a long-lived server with a pool of request threads need not do.
#pragma once

namespace simumax::tools {

// Makes the arenas created from now on, and the calling thread's, hand freed pages back to the system at once
// (jemalloc's dirty and muzzy decay 0). For `serve`, whose pool of request threads would otherwise hold up to
// ~10 s of freed pages each. A no-op where jemalloc is not the allocator (the sanitizer builds use their own).
void return_freed_pages_at_once();

}  // namespace simumax::tools
