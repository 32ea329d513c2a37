/* extents-dump URI [AHEAD]: print the merged extent map of an export,
 * one "OFFSET LENGTH zero|data" line per extent, then the number of
 * block-status commands sent.  Drives common/extents.c without libev
 * (nbd_poll waits for each reply), so the shell tests can check the map
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

  set_progname (argv[0]);
  if (argc != 2)
    die ("usage: extents-dump URI");
  nbd = connect_uri (argv[1], "source", &opts);
  extents_init (&map, nbd, "source");

  while (offset < map.size) {
    extents_pump (&map, offset, 1);
    if (extents_next (&map, offset, UINT64_MAX, &e)) {
      /* Print whole merged extents: advance only once the map reaches
       * past this one or the export ends.
       */
      if (e.offset + e.length < map.end || map.end == map.size) {
        printf ("%" PRIu64 " %" PRIu64 " %s\n",
                e.offset, e.length, e.zero ? "zero" : "data");
        offset += e.length;
        continue;
      }
      extents_pump (&map, offset, e.length + 1);
    }
    if (map.in_flight && nbd_poll (nbd, -1) == -1)
      die ("%s", nbd_get_error ());
  }
  printf ("commands %" PRIu64 "\n", map.commands);
  extents_free (&map);
  nbd_close (nbd);
  return EXIT_SUCCESS;
}
