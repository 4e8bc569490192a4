#ifndef CHEAPUSAGE_H
#define CHEAPUSAGE_H
#include <stddef.h>

/// Bytes of heap memory the process has allocated and not freed, or 0 where the C library cannot
/// say (only glibc can). Used by the soak test to tell a leak from memory the allocator keeps.
size_t cheapusage_bytes_in_use(void);

#endif
