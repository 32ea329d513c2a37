/* nbd-libev-examples: the bounds of the tools' requests and
 * connections.
 *
 * One header for the numbers that bound what the tools send and how:
 * requests in flight, bytes per request, the adaptive depth's limits
 * (tools/lib/depth.h), connections per server (tools/lib/server.h), how
 * long a server may be silent (tools/lib/conn.h), and the sockets'
 * buffers.  The options check the user's values against them
 * (tools/lib/options.c), the tools start from the defaults, and the
 * help texts (each tool's usage and option_help_shared) print the
 * options' bounds and defaults from these names, never as numbers of
 * their own.  It includes nothing, so any module may use it.
 */

#ifndef NBD_LIBEV_EXAMPLES_BOUNDS_H
#define NBD_LIBEV_EXAMPLES_BOUNDS_H

/* nbd-evcopy's requests in flight to start with: 16, the lessons'
 * number, of the largest size the depth may reach (ADAPT_MAX_SIZE,
 * below), and more or fewer as it measures (tools/lib/depth.h).  As a
 * fixed setting, 16 of 1 MiB keeps servers a few milliseconds away
 * busy, and against farther ones a deep start leaves the climb a few
 * round trips shorter.  Against a near server it costs little: the
 * buffers are on huge pages (tools/lib/buffers.h), so a brief deep
 * start faults in few pages, and the estimates soon bring the depth
 * down (docs/techniques.md, section 13).
 */
#define DEFAULT_REQUESTS 16

/* nbd-evsum's reads in flight to start with, the same and for the same
 * reasons.  Against a server that answers at once the hashing, not the
 * server, sets the pace, and 16 reads of 1 MiB keep the hash threads
 * (tools/lib/ordered-hash.h) busy.
 */
#define CHECKSUM_REQUESTS 16

/* The least bytes per request while the size adapts (it starts at the
 * most, ADAPT_MAX_SIZE).  Smaller requests cost a command and a
 * callback per few pages; a disk that splits larger direct I/O is
 * cheapest per byte here.  docs/techniques.md, section 4, has the
 * figures (make bench, comparisons 2 and 8).
 */
#define DEFAULT_REQUEST_SIZE (256 * 1024)

/* Unless --requests or --request-size fix them, the tools adapt both
 * while they run (tools/lib/depth.h): requests grow up to ADAPT_MAX_SIZE
 * (libnbd's copy-libev uses 1 MiB, and larger ones only delay the
 * first write), and their number up to what ADAPT_MEMORY of buffers
 * hold, which bounds the memory at any delay, and no further than the
 * servers serve at once (SERVED_AT_ONCE, below).
 */
#define ADAPT_MAX_SIZE (1024 * 1024)
#define ADAPT_MEMORY (256 * 1024 * 1024)

/* A copy from one local file to another (tools/lib/file.h), unless
 * --requests or --request-size say otherwise: a fixed depth.  There is
 * no round trip to cover, and more in flight, or larger requests, make
 * the copy slower (docs/techniques.md, section 14).
 */
#define FILE_COPY_REQUESTS 4
#define FILE_COPY_REQUEST_SIZE (1024 * 1024)

/* How many requests an NBD server works on at once for one connection:
 * nbdkit runs 16 threads per connection unless told otherwise (its -t),
 * and its delay filter sleeps in them; qemu-nbd reads no more requests
 * from a client while 16 are being served.  Requests past that wait in
 * the server, so the adapting depth keeps no more in flight than this
 * many per connection to each server (tools/lib/engine.c).
 */
#define SERVED_AT_ONCE 16

/* Requests in flight: at most 256.  256 x 32 MiB is already 8 GiB of
 * buffers, far past the point where more requests help.
 */
#define MAX_REQUESTS 256

/* The smallest request: one traditional sector. */
#define MIN_REQUEST_SIZE 512

/* Largest request the tools send.  The NBD protocol says a client
 * should not send more than 32 MiB unless the server advertised a larger
 * maximum block size; staying below it works with every server.
 */
#define MAX_REQUEST_SIZE (32 * 1024 * 1024)

/* Connections per server when it advertises multi-conn and the user did
 * not say: DEFAULT_CONNECTIONS to start with, up to ADAPT_CONNECTIONS
 * while each doubling brings more rate, and LONG_CONNECTIONS for a
 * long pass from far servers (spread.h).  Servers that share the
 * client's CPUs gain nothing past two; servers that serve a few
 * requests per connection at once, each slowly, gain from more, and
 * the last doubling pays only over a long pass: its buffers and the
 * servers' threads cost before they bring anything (docs/techniques.md,
 * "Several connections per server").  MAX_CONNECTIONS is the most -C
 * takes.
 */
#define DEFAULT_CONNECTIONS 2
#define ADAPT_CONNECTIONS 4
#define LONG_CONNECTIONS 8
#define MAX_CONNECTIONS 16

/* The default for --timeout, in seconds.  Long enough for storage that
 * pauses: Linux gives a SCSI command 30 seconds before it aborts and
 * retries it, and a server behind such a disk may be silent for a retry
 * or two; short enough that an unattended job with a server that has
 * stopped fails within minutes instead of hanging forever.
 */
#define DEFAULT_TIMEOUT 120

/* The most --timeout takes, in seconds: a day.  A server silent for a
 * day is not coming back, and the bound keeps the value far from
 * overflowing anything it is added to.
 */
#define MAX_TIMEOUT 86400

/* --socket-buffer bounds; the kernel caps the size lower anyway unless
 * the program runs as root (see tools/lib/handle.c).  The messages name
 * them in the units of these definitions.  0 leaves the kernel's.
 */
#define MIN_SOCKET_BUFFER 4096
#define MAX_SOCKET_BUFFER (1024 * 1024 * 1024)

/* The sockets' buffers unless --socket-buffer says otherwise: a whole
 * 1 MiB request fits, so the sender wakes once per request, not about
 * five times as with Linux's 208 KiB, and the server reads it in fewer
 * pieces (docs/techniques.md, section 8).
 */
#define DEFAULT_SOCKET_BUFFER (1024 * 1024)

#endif /* NBD_LIBEV_EXAMPLES_BOUNDS_H */
