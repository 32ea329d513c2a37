/* nbd-libev-examples: the request ring.
 *
 * A fixed array of request slots, each with a buffer allocated once and
 * an explicit state.  A program takes an idle slot, starts a step of
 * work with it (a command, or a buffer handed to a thread), marks the
 * slot when the step completes, then starts the next step or gives the
 * slot back, in one of two ways:
 *
 *  - ring_release, any order: a copier reuses whichever slot finished
 *    first, so one slow request never holds up the others.
 *
 *  - ring_retire_head, issue order: a checksum consumes data in offset
 *    order, so it gives back the oldest slot only once that one is done
 *    (the in-order consumer of liburing's examples).  Slots then come
 *    back strictly in turn, and slot seq is slots[seq % nr_slots].
 *
 * The states are generic; slot->kind says which step (read, write,
 * hash) is running.  No I/O, no libnbd, no libev: tests/test-ring.c
 * tests it alone.
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
extern const char *const slot_state_names[]; /* in enum order, for -v */

struct slot {
  struct ring *ring;    /* back pointer, for completion callbacks */
  unsigned index;       /* position in the ring */
  enum slot_state state;
  int kind;             /* the program's: which step is running */
  unsigned flags;       /* the program's own */
  uint64_t seq;         /* issue number, counted from 0 */
  uint64_t offset;
  uint64_t length;      /* may exceed buf_size for work without a buffer */
  uint64_t start_ns;    /* when taken, if ring->verbose */
  int error;            /* errno of the failed step, with SLOT_FAILED */
  void *buf;            /* buf_size bytes, page-aligned */
};

struct ring {
  unsigned nr_slots;
  size_t buf_size;
  bool verbose;         /* slot_debug prints */
  unsigned in_use;      /* slots not SLOT_IDLE */
  uint64_t next_seq;    /* seq of the next slot taken */
  uint64_t head_seq;    /* seq of the oldest slot not retired */
  struct slot *slots;
};

/* nr_slots slots with a buf_size buffer each; NULL with errno set. */
struct ring *ring_new (unsigned nr_slots, size_t buf_size);
void ring_free (struct ring *ring);

/* An idle slot, now SLOT_BUSY with this range, or NULL if none is. */
struct slot *ring_take (struct ring *ring, uint64_t offset, uint64_t length);

/* The step is over: SLOT_DONE, or SLOT_FAILED keeping a non-zero error.
 * Safe in a libnbd completion callback: it only writes the slot.
 */
void ring_complete (struct slot *slot, int error);

/* ring_complete as a libnbd completion callback, the slot as user_data.
 * It returns 1, so that libnbd retires the command itself.
 */
int ring_command_done (void *slot, int *error);

/* The failed slot with the lowest offset, or NULL: when several fail,
 * the first in the image is the one to report.
 */
struct slot *ring_first_failed (struct ring *ring);

/* Give a slot back at once, whatever its age. */
void ring_release (struct slot *slot);

/* If no slot goes back by ring_release: the oldest in use, or NULL. */
struct slot *ring_head (struct ring *ring);
void ring_retire_head (struct ring *ring);

/* If ring->verbose: a line on stderr about the slot and its timing. */
void slot_debug (const struct slot *slot, const char *event);

static inline bool
ring_full (const struct ring *ring)
{
  return ring->in_use == ring->nr_slots;
}

#endif /* NBD_LIBEV_EXAMPLES_RING_H */
