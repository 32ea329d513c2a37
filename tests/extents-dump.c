/* extents-dump URI: print the merged extent map of an export, one
 * "OFFSET LENGTH zero|data" line per extent, then the number of
 * block-status commands that took, then whether the whole export reads
 * as zeroes.  Drives common/extents.c without libev (nbd_poll waits for
 * each reply), so the shell tests can check the map and the zero scan
 * against what a server is known to hold.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <libnbd.h>

#include "connect.h"
#include "extents.h"
#include "util.h"

int
main (int argc, char *argv[])
{
  struct connect_options opts = { .want_extents = true };
  struct nbd_handle *nbd;
  struct extent_map map;
  struct extent e;
  uint64_t offset = 0;
  bool zero;

  set_progname (argv[0]);
  if (argc != 2)
    die ("usage: extents-dump URI");
  nbd = connect_uri (argv[1], "source", &opts);
  extents_init (&map, nbd, "source");

  while (offset < map.size) {
    extents_next_sync (&map, offset, 1, 0, &e);
    /* Print whole merged extents: while the map ends inside this one,
     * fetch past its end, which merges the next reply into it.
     */
    while (offset + e.length == map.end && map.end < map.size)
      extents_next_sync (&map, offset, e.length + 1, 0, &e);
    printf ("%" PRIu64 " %" PRIu64 " %s\n",
            e.offset, e.length, e.zero ? "zero" : "data");
    offset += e.length;
  }
  printf ("commands %" PRIu64 "\n", map.commands);
  extents_free (&map);

  zero = extents_reads_as_zero (nbd, "source", map.size, 0);
  printf ("reads as zero: %s\n", zero ? "yes" : "no");
  nbd_close (nbd);
  return EXIT_SUCCESS;
}
