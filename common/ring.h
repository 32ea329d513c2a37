/* nbd-libev-examples: the request ring.
 *
 * A fixed array of request slots, each with a buffer allocated once and
 * an explicit state.  A program takes an idle slot, starts a command
 * with the slot's buffer, marks the slot when the command completes, and
 * gives the slot back in one of two ways:
 *
 *  - ring_release: any order.  A copier reuses whichever slot finished
 *    first, so one slow request never holds up the others.  Idle slots
 *    wait on a stack.
 *
 *  - ring_retire_head: issue order.  A checksum must consume data in
 *    offset order; it gives back the oldest slot only when that slot is
 *    done, the in-order consumer of liburing's examples.  Slots are then
 *    taken and given back strictly in turn, so the slot of sequence
 *    number seq is always slots[seq % nr_slots] and no bookkeeping is
 *    needed to find it.
 *
 * A ring is created for one of the two disciplines and checks that the
 * program keeps to it.  The ring does no I/O and knows nothing of libnbd
 * or libev, which is what makes it easy to unit-test (tests/test-ring.c).
 */

#ifndef NBD_LIBEV_EXAMPLES_RING_H
#define NBD_LIBEV_EXAMPLES_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The steps a slot goes through.  A copier's slot goes READING ->
 * READ_DONE -> WRITING -> DONE; a checksum's goes READING -> READ_DONE
 * -> HASHING -> DONE.  Work that needs no I/O (a checksum's run of zero
 * blocks) may start at any step the program likes.
 */
enum slot_state {
  SLOT_IDLE,            /* free: ring_take may hand it out */
  SLOT_READING,         /* a read is in flight */
  SLOT_READ_DONE,       /* the data is in the buffer, waiting for the program */
  SLOT_WRITING,         /* a write or zero command is in flight */
  SLOT_HASHING,         /* a hash thread is digesting the buffer */
  SLOT_DONE,            /* all work finished; waiting to be given back */
  SLOT_FAILED,          /* a command failed; slot->error says why */
};
#define SLOT_NR_STATES (SLOT_FAILED + 1)

/* Names for debug output, indexed by enum slot_state. */
extern const char *const slot_state_names[SLOT_NR_STATES];

enum ring_order {
  RING_ANY_ORDER,       /* slots come back with ring_release */
  RING_IN_ORDER,        /* slots come back with ring_retire_head */
};

struct ring;

struct slot {
  struct ring *ring;    /* back pointer, for completion callbacks */
  unsigned index;       /* position in the ring, for debug output */
  enum slot_state state;
  int kind;             /* the program's own tag (e.g. data or zero) */
  void *conn;           /* the program's: where the command went */
  unsigned flags;       /* the program's own, e.g. what a read is for */
  uint64_t seq;         /* issue number, counted from 0 */
  uint64_t offset;
  uint64_t length;      /* may exceed buf_size for work without a buffer */
  uint64_t start_ns;    /* with -v: when ring_take handed the slot out */
  int error;            /* errno of the failed command, with SLOT_FAILED */
  void *buf;            /* buf_size bytes, page-aligned */
};

struct ring {
  enum ring_order order;
  unsigned nr_slots;
  size_t buf_size;
  unsigned in_use;      /* slots not SLOT_IDLE */
  uint64_t next_seq;    /* seq of the next slot taken */
  uint64_t head_seq;    /* with RING_IN_ORDER: oldest seq not retired */
  struct slot *slots;
  unsigned *free;       /* with RING_ANY_ORDER: stack of idle slot indexes */
  unsigned nr_free;
};

/* Allocate nr_slots slots with a buf_size buffer each (buf_size may be 0
 * for a ring whose work needs no buffers).  Returns NULL with errno set.
 */
struct ring *ring_new (unsigned nr_slots, size_t buf_size,
                       enum ring_order order);
void ring_free (struct ring *ring);

/* Take an idle slot, or NULL if all are in use.  The slot is set to
 * SLOT_READING with the given offset and length; a program whose first
 * step is not a read sets slot->state itself.
 */
struct slot *ring_take (struct ring *ring, uint64_t offset, uint64_t length);

/* Record the completion of a command on the slot.  A zero error moves
 * the slot to next_state; otherwise it becomes SLOT_FAILED and keeps the
 * error.  Safe to call from a libnbd completion callback, as it only
 * changes the slot.
 */
void ring_complete (struct slot *slot, int error, enum slot_state next_state);

/* The failed slot with the lowest offset, or NULL if none has failed:
 * when several commands fail, the first in the image is the one to
 * report.
 */
struct slot *ring_first_failed (struct ring *ring);

/* The slot in the given state that was taken first, or NULL: the oldest
 * command of one kind still in flight.  With conn not NULL, only slots
 * whose conn is that one count.
 */
struct slot *ring_oldest (struct ring *ring, enum slot_state state,
                          const void *conn);

/* The lowest offset of a slot in use, or next if none is: when slots go
 * back to the ring as their work completes, everything below it is
 * done.
 */
uint64_t ring_low_water (const struct ring *ring, uint64_t next);

/* RING_ANY_ORDER: give a slot back at once, whatever its age. */
void ring_release (struct slot *slot);

/* RING_IN_ORDER: the oldest slot in use, or NULL if none is. */
struct slot *ring_head (struct ring *ring);

/* RING_IN_ORDER: the slot in use with sequence number seq, which must
 * be at least the head's and less than ring->next_seq.  Lets an
 * in-order consumer look past the head at slots issued after it.
 */
struct slot *ring_at (struct ring *ring, uint64_t seq);

/* RING_IN_ORDER: give back the oldest slot; it must be ring_head. */
void ring_retire_head (struct ring *ring);

/* With -v: one line about the slot, tagged with its index, sequence
 * number and state, and the time since it was taken.
 */
void slot_debug (const struct slot *slot, const char *event);

static inline bool
ring_idle (const struct ring *ring)
{
  return ring->in_use == 0;
}

static inline bool
ring_full (const struct ring *ring)
{
  return ring->in_use == ring->nr_slots;
}

#endif /* NBD_LIBEV_EXAMPLES_RING_H */
