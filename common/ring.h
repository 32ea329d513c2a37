/* nbd-libev-examples: the request ring.
 *
 * A fixed array of request slots, each with a buffer allocated once and
 * an explicit state.  A program takes an idle slot, starts a step of
 * work with it (a command, or a buffer handed to a thread), marks the
 * slot when the step completes, starts the next step or gives the slot
 * back.  Two ways to give it back:
 *
 *  - ring_release, any order: a copier reuses whichever slot finished
 *    first, so one slow request never holds up the others.  Idle slots
 *    wait on a stack.
 *
 *  - ring_retire_head, issue order: a checksum consumes data in offset
 *    order, so it gives back the oldest slot only once that one is done
 *    (the in-order consumer of liburing's examples).  Slots are then
 *    taken and given back strictly in turn, and the slot of sequence
 *    number seq is always slots[seq % nr_slots].
 *
 * The states are generic: the ring knows whether a step is running,
 * has finished or has failed, and the program keeps in slot->kind which
 * step it is (a read, a write, a hash).  The ring does no I/O and knows
 * nothing of libnbd or libev (tests/test-ring.c tests it alone).
 */

#ifndef NBD_LIBEV_EXAMPLES_RING_H
#define NBD_LIBEV_EXAMPLES_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum slot_state {
  SLOT_IDLE,            /* free: ring_take may hand it out */
  SLOT_BUSY,            /* a step is running (slot->kind says which) */
  SLOT_DONE,            /* the step finished: the program's turn */
  SLOT_FAILED,          /* the step failed; slot->error says why */
};
#define SLOT_NR_STATES (SLOT_FAILED + 1)

/* Names for debug output, indexed by enum slot_state. */
extern const char *const slot_state_names[SLOT_NR_STATES];

enum ring_order { RING_ANY_ORDER, RING_IN_ORDER };

struct slot {
  struct ring *ring;    /* back pointer, for completion callbacks */
  unsigned index;       /* position in the ring */
  enum slot_state state;
  int kind;             /* the program's: which step is running */
  unsigned flags;       /* the program's own */
  void *conn;           /* the program's: where the command went */
  uint64_t seq;         /* issue number, counted from 0 */
  uint64_t offset;
  uint64_t length;      /* may exceed buf_size for work without a buffer */
  uint64_t start_ns;    /* when taken, if ring->verbose */
  int error;            /* errno of the failed step, with SLOT_FAILED */
  void *buf;            /* buf_size bytes, page-aligned */
};

struct ring {
  enum ring_order order;
  unsigned nr_slots;
  size_t buf_size;
  bool verbose;         /* slot_debug prints */
  unsigned in_use;      /* slots not SLOT_IDLE */
  uint64_t next_seq;    /* seq of the next slot taken */
  uint64_t head_seq;    /* RING_IN_ORDER: oldest seq not retired */
  struct slot *slots;
  unsigned *free;       /* RING_ANY_ORDER: stack of idle slot indexes */
  unsigned nr_free;
};

/* nr_slots slots with a buf_size buffer each (0 for work without
 * buffers).  Returns NULL with errno set.
 */
struct ring *ring_new (unsigned nr_slots, size_t buf_size,
                       enum ring_order order);
void ring_free (struct ring *ring);

/* An idle slot, now SLOT_BUSY with the given range, or NULL if all are
 * in use.
 */
struct slot *ring_take (struct ring *ring, uint64_t offset, uint64_t length);

/* The step is over: SLOT_DONE, or SLOT_FAILED keeping error if it is
 * not 0.  Safe in a libnbd completion callback: it only writes the slot.
 */
void ring_complete (struct slot *slot, int error);

/* The failed slot with the lowest offset, or NULL: when several fail,
 * the first in the image is the one to report.
 */
struct slot *ring_first_failed (struct ring *ring);

/* RING_ANY_ORDER: give a slot back at once. */
void ring_release (struct slot *slot);

/* RING_IN_ORDER: the oldest slot in use (NULL if none), and giving it
 * back.
 */
struct slot *ring_head (struct ring *ring);
void ring_retire_head (struct ring *ring);

/* If ring->verbose: one line on stderr about the slot, with its index,
 * sequence number, state and the milliseconds since it was taken.
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
