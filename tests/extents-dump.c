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

#include "extents.h"

/* The tool's one way to fail: a message and exit status 1. */
static void __attribute__ ((noreturn))
die (const char *msg, const char *why)
{
  fprintf (stderr, "extents-dump: %s: %s\n", msg, why);
  exit (EXIT_FAILURE);
}

/* The extent at offset, waiting with nbd_poll for as many replies as
 * it takes for the map to reach offset + ahead (or the export's end).
 */
static void
next_sync (struct extent_map *map, uint64_t offset, uint64_t ahead,
           struct extent *e)
{
  for (;;) {
    if (extents_pump (map, offset, ahead) == -1)
      die ("extents_pump", "out of memory");
    if (!map->in_flight && extents_next (map, offset, UINT64_MAX, e))
      return;
    if (nbd_poll (map->nbd, -1) == -1)
      die (map->name, nbd_get_error ());
  }
}

int
main (int argc, char *argv[])
{
  struct nbd_handle *nbd;
  struct extent_map map;
  struct extent e;
  uint64_t offset = 0;

  if (argc != 2)
    die ("usage", "extents-dump URI");
  nbd = nbd_create ();
  if (nbd == NULL ||
      nbd_add_meta_context (nbd, LIBNBD_CONTEXT_BASE_ALLOCATION) == -1 ||
      nbd_connect_uri (nbd, argv[1]) == -1 ||
      extents_init (&map, nbd, "source") == -1)
    die ("source", nbd_get_error ());

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
