/* nbd-libev-examples: fuzz target for common/extents.c.
 *
 * The input is a session: an export (its size, from a few bytes up to
 * near 2^63, its minimum block size, whether it has base:allocation),
 * then pumps, block-status replies from a server that may misbehave
 * (more extents than asked for, extents of 0 bytes, a second reply for
 * one command, another offset or context, no extents at all, errors),
 * commands libnbd refuses, and a reader that moves forward with
 * extents_next.  libnbd is played by tests/fuzz/fake-nbd.c.
 *
 * The model is what the map must say about each byte: a list of the
 * ranges in the order they became known, each with the kind the
 * server (or a fallback to data) gave it, never merged.  After every
 * step:
 *
 *  - the map is sorted, contiguous, coalesced (neighbours differ in
 *    kind), has no empty extent, ends at its end and not past the
 *    export;
 *  - every byte from the first extent kept to the end has the model's
 *    kind: zero only where a reply the map accepted said zero;
 *  - extents_next returns the model's kind and run at the reader's
 *    offset, or false past the end;
 *  - a pump that returns leaves a command in flight, or the map
 *    reaching offset + ahead (as numbers, without wrapping) or the end
 *    of the export, so a reader never waits for nothing.
 *
 * At the end a well-behaved server answers until the map reaches the
 * end of the export, which it must within a few commands per window.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <libnbd.h>

#include "extents.h"
#include "fake-nbd.h"
#include "fuzz.h"

/* Enough for any input libFuzzer makes by default (4 KiB). */
#define MAX_FACTS 65536

/* A range the map learnt, from the model's point of view. */
struct fact {
  uint64_t offset, length;
  bool zero;
};

/* What extents.c should have done, step by step, without merging. */
struct model {
  struct fact v[MAX_FACTS];
  size_t len;
  uint64_t end, size, block, window;
  bool supported;
  bool pending;                 /* a command is in flight */
  int error;                    /* of the last command, until pumped */
  uint64_t req_offset, req_length;
};

static struct model m;

static uint64_t
min_u64 (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

/* The map learnt length more bytes of one kind. */
static void
model_add (uint64_t length, bool zero)
{
  if (length == 0)
    return;
  FUZZ_CHECK (m.len < MAX_FACTS);
  m.v[m.len++] = (struct fact) { m.end, length, zero };
  m.end += length;
}

/* True if the map, known up to end, falls short of offset + ahead as a
 * number, which may be past 2^64.
 */
static bool
short_of (uint64_t end, uint64_t offset, uint64_t ahead)
{
  return end < offset || end - offset < ahead;
}

/* extents_pump's rules, in terms of the model: a failed command's
 * range is data, an export without base:allocation is data, a map that
 * ends off the block with no command in flight is padded with data to
 * the block, and a command goes out for the next window if the map is
 * short of offset + ahead; a command libnbd refuses is a failed one at
 * once.  Returns what extents_pump must return: the errno of the last
 * command that failed, or 0.
 */
static int
model_pump (uint64_t offset, uint64_t ahead, unsigned *refuse, int err)
{
  int failed;

  for (;;) {
    failed = m.error;
    m.error = 0;
    if (failed)
      model_add (m.req_offset + m.req_length - m.end, false);
    if (!m.supported)
      model_add (m.size - m.end, false);
    if (!m.pending && m.end % m.block != 0 && m.end < m.size)
      model_add (min_u64 (m.size - m.end, m.block - m.end % m.block), false);
    if (m.pending || m.end >= m.size || !short_of (m.end, offset, ahead))
      return failed;
    m.req_offset = m.end;
    m.req_length = min_u64 (m.size - m.end, m.window);
    if (*refuse == 0) {
      m.pending = true;
      return failed;
    }
    (*refuse)--;
    m.error = err ? err : EIO;
  }
}

/* One reply's extents: taken only for the first reply of the pending
 * command, in its context, without an error, clipped to the range
 * asked for.
 */
static void
model_extents (const char *context, uint64_t offset, const uint32_t *entries,
               size_t n, int error)
{
  uint64_t req_end = m.req_offset + m.req_length;
  size_t i;

  if (error || offset != m.end ||
      strcmp (context, LIBNBD_CONTEXT_BASE_ALLOCATION) != 0)
    return;
  for (i = 0; i + 1 < n && m.end < req_end; i += 2)
    model_add (min_u64 (entries[i], req_end - m.end),
               entries[i + 1] & LIBNBD_STATE_ZERO);
}

/* The command is over: an error, or a reply that said nothing (the
 * reader would wait for ever), makes its range data at the next pump.
 */
static void
model_done (int error)
{
  m.pending = false;
  m.error = error == 0 && m.end == m.req_offset ? EPROTO : error;
}

/* The fact that holds offset (below m.end). */
static size_t
model_find (uint64_t offset)
{
  size_t lo = 0, hi = m.len, mid;

  while (hi - lo > 1) {
    mid = lo + (hi - lo) / 2;
    if (m.v[mid].offset <= offset)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* The structure of the map, and its kind of every byte it still holds
 * against the model's: both are runs of one kind, so walking their
 * boundaries together compares every byte.
 */
static void
check_map (const struct extent_map *map)
{
  const struct extent *x;
  uint64_t at, next;
  size_t i, f;

  FUZZ_CHECK (map->first <= map->len && map->len <= map->alloc);
  FUZZ_CHECK (map->end == m.end && map->end <= map->size);
  FUZZ_CHECK (map->in_flight == m.pending && fake_nbd.pending == m.pending);
  if (m.pending) {
    FUZZ_CHECK (map->req_offset == m.req_offset &&
                map->req_length == m.req_length);
    FUZZ_CHECK (fake_nbd.offset == m.req_offset &&
                fake_nbd.count == m.req_length);
  }
  for (i = map->first; i < map->len; i++) {
    x = &map->v[i];
    FUZZ_CHECK (x->length > 0);
    FUZZ_CHECK (x->length <= map->end - x->offset);
    if (i > map->first) {
      FUZZ_CHECK (x->offset == map->v[i - 1].offset + map->v[i - 1].length);
      FUZZ_CHECK (x->zero != map->v[i - 1].zero);
    }
  }
  if (map->first == map->len)
    return;
  FUZZ_CHECK (map->v[map->len - 1].offset + map->v[map->len - 1].length
              == map->end);
  at = map->v[map->first].offset;
  f = model_find (at);
  for (i = map->first; at < map->end; ) {
    FUZZ_CHECK (i < map->len && f < m.len);
    x = &map->v[i];
    FUZZ_CHECK (x->zero == m.v[f].zero);
    next = min_u64 (x->offset + x->length, m.v[f].offset + m.v[f].length);
    if (next == x->offset + x->length)
      i++;
    if (next == m.v[f].offset + m.v[f].length)
      f++;
    at = next;
  }
}

/* extents_next at offset against the model: the kind there, and how
 * far it goes on (up to max_length), over every fact of that kind.
 */
static void
check_next (struct extent_map *map, uint64_t offset, uint64_t max_length)
{
  struct extent e;
  uint64_t run_end;
  size_t f;
  bool known = extents_next (map, offset, max_length, &e);

  FUZZ_CHECK (known == (offset < m.end));
  if (!known)
    return;
  f = model_find (offset);
  for (run_end = m.v[f].offset + m.v[f].length;
       f + 1 < m.len && m.v[f + 1].zero == m.v[f].zero; f++)
    run_end = m.v[f + 1].offset + m.v[f + 1].length;
  FUZZ_CHECK (e.offset == offset && e.zero == m.v[model_find (offset)].zero);
  FUZZ_CHECK (e.length == min_u64 (run_end - offset, max_length));
}

/* A pump from the reader's offset, with the model's. */
static void
pump (struct extent_map *map, uint64_t offset, uint64_t ahead,
      unsigned refuse, int err)
{
  int want, got;

  fake_nbd.refuse = refuse;
  fake_nbd.refuse_errno = err;
  want = model_pump (offset, ahead, &refuse, err);
  got = extents_pump (map, offset, ahead);
  FUZZ_CHECK (got == want);
  FUZZ_CHECK (fake_nbd.refuse == refuse);
  fake_nbd.refuse = 0;
  /* Never short of what the reader asked for with nothing in flight. */
  FUZZ_CHECK (m.pending || m.end >= m.size ||
              !short_of (m.end, offset, ahead));
}

/* The server's reply to the pending command: up to 8 extents (an odd
 * number of entries now and then), of lengths from 0 to 2^32 - 1 or
 * exactly what is left, flags with or without the zero bit.  Usually
 * from the command's offset in base:allocation, sometimes not.
 */
static void
reply (struct fuzz_input *in)
{
  uint32_t entries[17];
  size_t n = take_u8 (in) % 18, i;
  uint64_t offset = fake_nbd.offset, left;
  const char *context = LIBNBD_CONTEXT_BASE_ALLOCATION;
  int error = 0;
  uint8_t how = take_u8 (in);

  if (how % 16 == 1)
    offset = take_bytes (in, 8);
  if (how % 16 == 2)
    context = "qemu:dirty-bitmap:x";
  if (how % 16 == 3)
    error = EIO;
  left = fake_nbd.count;
  for (i = 0; i < n; i++) {
    if (i % 2 == 1) {
      entries[i] = take_u8 (in);
      continue;
    }
    switch (take_u8 (in) % 5) {
    case 0: entries[i] = take_u8 (in); break;
    case 1: entries[i] = take_bytes (in, 2); break;
    case 2: entries[i] = take_bytes (in, 4); break;
    case 3: entries[i] = left; break;
    default: entries[i] = 0; break;
    }
    left -= min_u64 (left, entries[i]);
  }
  model_extents (context, offset, entries, n, error);
  fake_nbd.extent.callback (fake_nbd.extent.user_data, context, offset,
                            entries, n, &error);
}

static void
complete (struct fuzz_input *in)
{
  static const int errors[] = { 0, 0, EIO, ENOTSUP, EINVAL };
  int error = errors[take_u8 (in) % 5];

  fake_nbd.pending = false;
  model_done (error);
  fake_nbd.done.callback (fake_nbd.done.user_data, &error);
}

/* How far ahead a pump asks: small, a window or two, the whole export,
 * or so far that offset + ahead is past 2^64.
 */
static uint64_t
take_ahead (struct fuzz_input *in, uint64_t offset)
{
  switch (take_u8 (in) % 4) {
  case 0: return take_bytes (in, 2);
  case 1: return 2 * m.window;
  case 2: return m.size - min_u64 (m.size, offset);
  default: return UINT64_MAX - take_u8 (in);
  }
}

/* Where the reader goes next: never back, as extents_next requires. */
static uint64_t
take_step (struct fuzz_input *in, uint64_t offset)
{
  uint64_t step;

  switch (take_u8 (in) % 5) {
  case 0: step = take_u8 (in); break;
  case 1: step = take_bytes (in, 4); break;
  case 2: step = m.end > offset ? m.end - offset : 0; break;
  case 3: step = m.size > offset ? m.size - offset : 0; break;
  default: step = take_bytes (in, 8); break;
  }
  return offset + min_u64 (step, UINT64_MAX - offset);
}

/* The export: tiny, small, just under 2^63 or any size libnbd could
 * report (negative is its failure).
 */
static void
take_export (struct fuzz_input *in)
{
  uint8_t how = take_u8 (in);

  memset (&fake_nbd, 0, sizeof fake_nbd);
  switch (how % 4) {
  case 0: fake_nbd.size = take_u8 (in); break;
  case 1: fake_nbd.size = take_bytes (in, 2); break;
  case 2: fake_nbd.size = INT64_MAX - take_bytes (in, 2); break;
  default: fake_nbd.size = take_bytes (in, 8); break;
  }
  if (fake_nbd.size < 0)
    fake_nbd.size = -1;
  how = take_u8 (in);
  fake_nbd.min_block = how < 32 ? -1 : how < 64 ? 0
    : INT64_C (1) << (how % 17);
  fake_nbd.can_meta = take_u8 (in) % 4 != 0;
}

/* A well-behaved server answers every command with one extent of data
 * until the map reaches the end, from where the reader is.
 */
static void
finish (struct extent_map *map, uint64_t offset)
{
  uint32_t entries[2] = { 0, 0 };
  uint64_t rounds = (m.size - m.end) / m.window + 4;
  int error;

  if (rounds > 64)
    return;                     /* too far to walk */
  while (rounds-- > 0 && m.end < m.size) {
    pump (map, offset, m.size - min_u64 (m.size, offset), 0, 0);
    if (!m.pending)
      continue;
    entries[0] = m.req_length;
    error = 0;
    model_extents (LIBNBD_CONTEXT_BASE_ALLOCATION, m.req_offset, entries, 2,
                   0);
    fake_nbd.extent.callback (fake_nbd.extent.user_data,
                              LIBNBD_CONTEXT_BASE_ALLOCATION, m.req_offset,
                              entries, 2, &error);
    fake_nbd.pending = false;
    model_done (0);
    fake_nbd.done.callback (fake_nbd.done.user_data, &error);
    check_map (map);
  }
  pump (map, offset, m.size - min_u64 (m.size, offset), 0, 0);
  FUZZ_CHECK (m.end == m.size && map->end == map->size);
  check_map (map);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size };
  struct extent_map map;
  uint64_t offset = 0, ahead, max_length;
  uint8_t op;
  unsigned refuse;

  take_export (&in);
  if (extents_init (&map, FAKE_HANDLE, "fuzz") == -1) {
    FUZZ_CHECK (fake_nbd.size == -1);
    return 0;
  }
  memset (&m, 0, sizeof m);
  m.size = fake_nbd.size;
  m.block = fake_nbd.min_block > 0 ? fake_nbd.min_block : 1;
  m.supported = fake_nbd.can_meta == 1;
  FUZZ_CHECK (map.size == m.size && map.block == m.block &&
              map.supported == m.supported);
  /* Windows of a few blocks, as well as the 4 GiB one, so that small
   * exports take several commands too.
   */
  if (take_bool (&in))
    map.window = m.block * (1 + take_u8 (&in));
  m.window = map.window;

  while (fuzz_more (&in)) {
    op = take_u8 (&in);
    switch (op % 4) {
    case 0:
      ahead = take_ahead (&in, offset);
      refuse = op / 4 % 4 == 3 ? take_u8 (&in) % 4 : 0;
      pump (&map, offset, ahead, refuse, take_bool (&in) ? EINVAL : 0);
      break;
    case 1:
      if (fake_nbd.pending)
        reply (&in);
      break;
    case 2:
      if (fake_nbd.pending)
        complete (&in);
      break;
    default:
      offset = take_step (&in, offset);
      max_length = take_bool (&in) ? UINT64_MAX : 1 + take_bytes (&in, 4);
      check_next (&map, offset, max_length);
      break;
    }
    check_map (&map);
  }
  if (fake_nbd.pending)
    complete (&in);
  finish (&map, offset);
  extents_free (&map);
  return 0;
}
