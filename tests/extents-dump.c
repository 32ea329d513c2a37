/* extents-dump URI: print the merged extent map of an export, one
 * "OFFSET LENGTH zero|data" line per extent, then the number of
 * block-status commands that took.  Drives common/extents.c without
 * libev (nbd_poll waits for each reply), so the shell tests can check
 * the map against what a server is known to hold.
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

/* The extent at offset, waiting with nbd_poll for as many replies as
 * it takes for the map to reach offset + ahead (or the export's end).
 */
static void
next_sync (struct extent_map *map, uint64_t offset, uint64_t ahead,
           struct extent *e)
{
  for (;;) {
    extents_pump (map, offset, ahead);
    if (!map->in_flight && extents_next (map, offset, UINT64_MAX, e))
      return;
    if (nbd_poll (map->nbd, -1) == -1)
      die ("%s: %s", map->name, nbd_get_error ());
  }
}

int
main (int argc, char *argv[])
{
  struct connect_options opts = { .want_extents = true };
  struct nbd_handle *nbd;
  struct extent_map map;
  struct extent e;
  uint64_t offset = 0;

  set_progname (argv[0]);
  if (argc != 2)
    die ("usage: extents-dump URI");
  nbd = connect_uri (argv[1], "source", &opts);
  extents_init (&map, nbd, "source");

  while (offset < map.size) {
    next_sync (&map, offset, 1, &e);
    /* Print whole merged extents: while the map ends inside this one,
     * fetch past its end, which merges the next reply into it.
     */
    while (offset + e.length == map.end && map.end < map.size)
      next_sync (&map, offset, e.length + 1, &e);
    printf ("%" PRIu64 " %" PRIu64 " %s\n",
            e.offset, e.length, e.zero ? "zero" : "data");
    offset += e.length;
  }
  printf ("commands %" PRIu64 "\n", map.commands);
  extents_free (&map);
  nbd_close (nbd);
  return EXIT_SUCCESS;
}
