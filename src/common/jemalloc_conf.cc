// jemalloc's built-in options, compiled into the binaries that link jemalloc
// (`sluice_use_jemalloc`) and nowhere else. `MALLOC_CONF` in the environment
// still overrides them (e.g. `MALLOC_CONF=thp:always`).
//
// thp:never keeps jemalloc's memory on 4 KiB pages even where the kernel's
// transparent huge pages are set to `always`. A changefeed's catch-up moves
// its whole volume through fresh memory (scan batches, stream buffers, the
// event store's memtables), and each first touch of a huge page zeroes 2 MiB
// in the fault. On a virtual machine that cost swings with the host: the
// binaries once asked for huge pages (thp:always) and a 500 k-row catch-up
// went from 1.9 s to 1.5 s, and later on the same machine the same setting
// made it 3.0 s against 1.1 s, with page zeroing half of the CDC threads'
// samples. 4 KiB faults cost more often but predictably (bench/README.md,
// runs 35 and 43).
#include <jemalloc/jemalloc.h>

// NOLINTNEXTLINE(readability-identifier-naming): jemalloc's name.
const char* malloc_conf = "thp:never,metadata_thp:disabled";
