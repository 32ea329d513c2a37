/* nbd-libev-examples: the destination file the program creates.
 *
 * A destination path that does not exist is created, as nbdcopy does,
 * as a sparse raw file of the source's size, and removed again if the
 * program fails before its first write: a failed copy leaves nothing
 * behind that looks like a copy.  A name that says another format
 * (new.qcow2) is refused instead, with the qemu-img command that
 * creates it.  For nbd-evcopy's destination: a program creates one
 * file at most.
 *
 * The file is removed by an exit handler, so however the program ends
 * (die () in the main thread, or a second signal) before image_keep,
 * the file goes.
 */

#ifndef NBD_LIBEV_EXAMPLES_CREATED_H
#define NBD_LIBEV_EXAMPLES_CREATED_H

#include <stdbool.h>
#include <stdint.h>

struct image;                   /* tools/lib/image.h */

/* True if img is a local path that does not exist yet: a destination
 * that image_create will make.
 */
bool image_missing (const struct image *img);

/* Create img's path as a sparse raw file of size bytes, and remember
 * to remove it again if the program fails before image_keep.  Fatal,
 * naming the role ("destination") and the path, if it cannot.
 */
void image_create (struct image *img, const char *role, uint64_t size);

/* Keep the file the program created even if it fails from now on:
 * call it once every check has passed and the first write is next.
 */
void image_keep (void);

#endif /* NBD_LIBEV_EXAMPLES_CREATED_H */
