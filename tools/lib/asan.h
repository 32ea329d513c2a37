/* nbd-libev-examples: what AddressSanitizer must be told of the
 * tools' buffers.
 *
 * AddressSanitizer (./configure --enable-sanitizers) checks every access
 * the program's code makes, and the accesses of the C library calls it
 * intercepts: read, write, recv and send check the whole range they
 * fill or empty, so a stream's or an NBD server's bytes landing past a
 * buffer are reported.  What the kernel reads or writes through io_uring
 * goes past both: an io_uring read one byte longer than its buffer
 * would overwrite the next buffer unseen.  Two rules close that gap:
 *
 *  - The request buffers are one allocation (buffers.h), which ASan
 *    sees as one object.  In a sanitizer build each buffer is followed
 *    by a poisoned redzone, and a buffer on the stack of free buffers
 *    is poisoned whole, so that a buffer used after its slot gave it
 *    back is reported as well.
 *
 *  - tools/lib/file.c checks the range of each read or write before it
 *    queues it (asan_check_range): a request longer than its buffer, or
 *    on a buffer given back, is reported there, as the program's own
 *    access to it would be.
 *
 * No false report can come of the kernel's writes: ASan tracks which
 * bytes may be touched, not which were written (valgrind's memcheck
 * does, and file.c tells it).  Without ASan every macro here is
 * nothing.
 */

#ifndef NBD_LIBEV_EXAMPLES_ASAN_H
#define NBD_LIBEV_EXAMPLES_ASAN_H

#include <stddef.h>

#if defined (__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined (__has_feature)
#if __has_feature (address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif

#ifdef HAVE_ASAN
#include <sanitizer/asan_interface.h>

/* Pages of redzone after each request buffer: whole pages, so that
 * every buffer stays page-aligned for O_DIRECT.
 */
#define ASAN_REDZONE_PAGES 1

/* Report, as AddressSanitizer reports any bad access, if a byte of
 * [p, p + n) may not be touched: the read of the first such byte is
 * that report.
 */
static inline void
asan_check_range (const void *p, size_t n)
{
  const volatile char *bad = __asan_region_is_poisoned ((void *) p, n);

  if (bad != NULL)
    (void) *bad;
}

#define asan_poison(p, n) ASAN_POISON_MEMORY_REGION ((p), (n))
#define asan_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION ((p), (n))

#else /* !HAVE_ASAN */

#define ASAN_REDZONE_PAGES 0
#define asan_check_range(p, n) ((void) (p), (void) (n))
#define asan_poison(p, n) ((void) (p), (void) (n))
#define asan_unpoison(p, n) ((void) (p), (void) (n))

#endif /* !HAVE_ASAN */

#endif /* NBD_LIBEV_EXAMPLES_ASAN_H */
