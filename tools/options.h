/* nbd-libev-examples: the command-line options the tools share.
 *
 * Both tools take the same ring options (--requests, --request-size),
 * the same connection and progress options, and report a mistake on
 * the command line the way they report every other error: one line on
 * stderr, exit status 1.  Each option_* function parses one option's
 * value and dies with a message naming the option and the value if it
 * is wrong; option_shared parses all the options both tools take.
 */

#ifndef NBD_LIBEV_EXAMPLES_OPTIONS_H
#define NBD_LIBEV_EXAMPLES_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "image.h"

/* nbd-evcopy's requests in flight to start with.  About 16 keeps
 * servers that answer at once busy, as reported on the libnbd list
 * (libnbd's copy-libev uses 16); against servers that answer late,
 * nbd-evcopy adds more as it measures (tools/depth.h).
 */
#define DEFAULT_REQUESTS 16

/* Bytes per request: 256 KiB, measured.  On qemu-nbd serving raw
 * files from this project's machine's disk with O_DIRECT, 1 MiB
 * requests were much slower for the extent-reading copy and the
 * checksum: that disk takes at most 254 pages per I/O, so the kernel
 * splits every 1 MiB direct write in two.  Over NBD to nbdkit null,
 * 256 KiB to 1 MiB are level.  Far larger requests leave the pipeline
 * empty while each is read whole; much smaller ones cost a command and
 * a callback per few pages.  docs/techniques.md has the figures; make
 * bench (comparisons 2 and 8) measures it again.
 */
#define DEFAULT_REQUEST_SIZE (256 * 1024)

/* Unless --requests or --request-size fix them, the tools adapt both
 * while they run (tools/depth.h): requests grow up to ADAPT_MAX_SIZE
 * (libnbd's copy-libev uses 1 MiB, and larger ones only delay the
 * first write), and their number up to what ADAPT_MEMORY of buffers
 * hold, which bounds the memory at any delay.
 */
#define ADAPT_MAX_SIZE (1024 * 1024)
#define ADAPT_MEMORY (256 * 1024 * 1024)

/* Requests in flight: at most 256.  256 x 32 MiB is already 8 GiB of
 * buffers, far past the point where more requests help.
 */
#define MAX_REQUESTS 256

/* The smallest request: one traditional sector. */
#define MIN_REQUEST_SIZE 512

/* --socket-buffer bounds; the kernel caps the size lower anyway unless
 * the program runs as root (see tools/handle.c).  The messages name
 * them in the units of these definitions.
 */
#define MIN_SOCKET_BUFFER 4096
#define MAX_SOCKET_BUFFER (1024 * 1024 * 1024)

/* The most the depth may grow to (tools/depth.h) before the servers'
 * own limits: a value given explicitly is its own maximum.
 */
uint64_t adapt_max_size (uint64_t request_size, bool given);
unsigned adapt_max_requests (unsigned requests, bool given,
                             uint64_t max_size);

/* --requests=N: 1 to MAX_REQUESTS. */
unsigned option_requests (const char *arg);

/* --request-size=SIZE: MIN_REQUEST_SIZE to MAX_REQUEST_SIZE. */
uint64_t option_request_size (const char *arg);

/* --block-size=SIZE: a block hash's block size, a power of two up to
 * MAX_REQUEST_SIZE, so that a request can always hold a whole block.
 */
uint64_t option_block_size (const char *arg);

/* --socket-buffer=SIZE: MIN_SOCKET_BUFFER to MAX_SOCKET_BUFFER. */
uint64_t option_socket_buffer (const char *arg);

/* -C N, --connections=N: 1 to max. */
unsigned option_connections (const char *arg, unsigned max);

/* --timeout=SECONDS: whole seconds, 0 (no timeout) to a day; a server
 * silent for a day is not coming back, and the bound keeps the value
 * far from overflowing anything it is added to.
 */
unsigned option_timeout (const char *arg);

/* --cache=MODE: how the suite's own servers use the page cache for a
 * local file (tools/image.h): "default" or "none".
 */
enum image_cache option_cache (const char *arg);

/* -p, --progress[=FD]: PROGRESS_BAR without a value, else FD, which
 * must be an open file descriptor (tools/util.h has the formats).
 */
int option_progress (const char *arg);

/* Call when getopt_long returns ':' or '?', with main's argv.  The
 * option string must start with ':' so that getopt prints nothing itself.
 */
void option_error (int c, char *const argv[],
                   const struct option *long_options)
  __attribute__ ((noreturn));

/* --version: print "progname VERSION" on stdout and exit 0. */
void option_version (void) __attribute__ ((noreturn));

/* The options both tools take: getopt_long's codes for those without
 * a short name (above any code a tool gives its own), the short ones,
 * and the long ones, to put in each tool's table.
 */
enum { OPT_SOCKET_BUFFER = 1024, OPT_TIMEOUT, OPT_CACHE };
#define SHARED_SHORT_OPTIONS "C:pvV"
#define SHARED_LONG_OPTIONS \
  { "connections",   required_argument, NULL, 'C' }, \
  { "progress",      optional_argument, NULL, 'p' }, \
  { "verbose",       no_argument,       NULL, 'v' }, \
  { "version",       no_argument,       NULL, 'V' }, \
  { "socket-buffer", required_argument, NULL, OPT_SOCKET_BUFFER }, \
  { "timeout",       required_argument, NULL, OPT_TIMEOUT }, \
  { "cache",         required_argument, NULL, OPT_CACHE }

/* What they set; the caller fills in the defaults first. */
struct shared_options {
  unsigned connections;         /* -C; 0: decided by multi-conn */
  int progress_mode;            /* -p: PROGRESS_NONE, PROGRESS_BAR or FD */
  uint64_t socket_buffer;       /* 0: the system's */
  unsigned timeout;             /* seconds; 0: none */
  enum image_cache cache;
};

/* If c is one of the shared options, parse it into o (-v sets verbose,
 * -V prints the version and exits, -C allows up to max_connections) and
 * return true; else return false.
 */
bool option_shared (int c, const char *arg, struct shared_options *o,
                    unsigned max_connections);

#endif /* NBD_LIBEV_EXAMPLES_OPTIONS_H */
