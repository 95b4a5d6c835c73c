// jemalloc's built-in options, compiled into the binaries that link jemalloc
// (`sluice_use_jemalloc`) and nowhere else. `MALLOC_CONF` in the environment
// still overrides them (e.g. `MALLOC_CONF=thp:default`).
//
// thp:always asks the kernel (through `madvise`) to back jemalloc's memory
// with transparent huge pages. A changefeed's catch-up moves its whole volume
// through fresh memory several times over (scan batches, stream buffers, the
// event store's memtables); with 4 KiB pages each first touch is a page fault,
// and a 500 k-row catch-up took ~320 k of them. With huge pages it takes
// ~14 k. The price is resident memory rounded up to 2 MiB per region of
// jemalloc's address space in use. bench/README.md has the measurements.
#include <jemalloc/jemalloc.h>

// NOLINTNEXTLINE(readability-identifier-naming): jemalloc's name.
const char* malloc_conf = "thp:always,metadata_thp:auto";
