#!/usr/bin/env python3
# bad-server.py: an NBD server that breaks the protocol on purpose, for
# tests/bad-server.sh.  Real servers never misbehave like this, so the
# tools' reactions to it can be tested only against a server written
# for it, as libnbd's tests/errors-server-*.c and qemu's
# nbd-fault-injector.py do.
#
#   bad-server.py SOCKET FAULT
#   bad-server.py --image FAULT FILE
#
# The first listens on the Unix socket SOCKET and serves, on every
# connection, a read-only export of 4 MiB whose byte at offset i is
# i % 251 (the image), through
# the fixed newstyle handshake with structured replies and
# base:allocation (the whole image data), and breaks the protocol as
# FAULT says: a read's fault in its third read, once two were answered
# well; a block status fault in its first block status reply:
#
#   none             no fault: the server itself checked
#   cookie           a read answered with a cookie never sent
#   chunk-offset     a data chunk that starts before its read's offset
#   chunk-oversize   a data chunk longer than its read
#   reply-flags      a chunk with a flag the protocol does not define
#   extent-zero      block status with an extent of length 0
#   extent-past-end  block status with an extent past the image's end
#   cut-chunk        half a data chunk, then the connection closed
#   hole             the 64 KiB at 1.5 MiB read as an OFFSET_HOLE chunk
#                    (zeroes), in every read, where block status says
#                    data
#   wrong-chunk      a read answered with a block status chunk
#   handshake        the connection closed right after the greeting
#   handshake-stop   the greeting, then silence with the connection open
#   second-size      multi-conn, and every second connection says the
#                    image is 4 KiB larger
#
# The second writes to FILE the bytes a correct client reads from the
# server with FAULT when it reads at all: the image, except with hole.
#
# In the spec's block status reply each extent is a length, so extents
# follow each other by construction: the one way to make them not
# increase is a length of 0 (extent-zero).
#
# The protocol is the NBD spec's (doc/proto.md in the NBD project).
# Standard library only; one thread per connection; it runs until
# killed.

import os
import socket
import struct
import sys
import threading

SIZE = 4 * 1024 * 1024
BASE_ALLOCATION = b"base:allocation"

NBDMAGIC = 0x4e42444d41474943
IHAVEOPT = 0x49484156454F5054
REPLY_MAGIC = 0x3e889045565a9
REQUEST_MAGIC = 0x25609513
SIMPLE_MAGIC = 0x67446698
STRUCTURED_MAGIC = 0x668e33ef

OPT_ABORT, OPT_GO, OPT_STRUCTURED_REPLY, OPT_SET_META_CONTEXT = 2, 7, 8, 10
REP_ACK, REP_INFO, REP_META_CONTEXT = 1, 3, 4
REP_ERR_UNSUP = (1 << 31) + 1
INFO_EXPORT = 0
FLAG_HAS_FLAGS, FLAG_READ_ONLY, FLAG_SEND_DF, FLAG_CAN_MULTI_CONN = \
    1, 2, 128, 256
CMD_READ, CMD_DISC, CMD_BLOCK_STATUS = 0, 2, 7
CHUNK_DONE = 1
CHUNK_OFFSET_DATA, CHUNK_OFFSET_HOLE, CHUNK_BLOCK_STATUS, CHUNK_ERROR = \
    1, 2, 5, (1 << 15) + 1
HOLE = (3 * 1024 * 1024 // 2, 65536)
EINVAL = 22

fault = None
connections = 0
lock = threading.Lock()


def data(offset, length):
    return bytes((offset + i) % 251 for i in range(length))


def image(fault):
    """What a correct client reads from the server with FAULT."""
    b = bytearray(data(0, SIZE))
    if fault == "hole":
        b[HOLE[0]:HOLE[0] + HOLE[1]] = bytes(HOLE[1])
    return bytes(b)


def recv(c, n):
    b = b""
    while len(b) < n:
        more = c.recv(n - len(b))
        if not more:
            raise EOFError
        b += more
    return b


def option_reply(c, opt, rtype, payload=b""):
    c.sendall(struct.pack(">QIII", REPLY_MAGIC, opt, rtype, len(payload)) +
              payload)


def handshake(c, size, flags):
    """The fixed newstyle handshake: True once in transmission."""
    c.sendall(struct.pack(">QQH", NBDMAGIC, IHAVEOPT, 3))
    if fault == "handshake":
        return False
    if fault == "handshake-stop":
        threading.Event().wait()
    recv(c, 4)                          # the client's flags
    while True:
        magic, opt, length = struct.unpack(">QII", recv(c, 16))
        payload = recv(c, length)
        if magic != IHAVEOPT:
            return False
        if opt == OPT_STRUCTURED_REPLY:
            option_reply(c, opt, REP_ACK)
        elif opt == OPT_SET_META_CONTEXT:
            n = struct.unpack(">I", payload[:4])[0]
            p = 4 + n
            count = struct.unpack(">I", payload[p:p + 4])[0]
            p += 4
            for _ in range(count):
                n = struct.unpack(">I", payload[p:p + 4])[0]
                if payload[p + 4:p + 4 + n] == BASE_ALLOCATION:
                    option_reply(c, opt, REP_META_CONTEXT,
                                 struct.pack(">I", 1) + BASE_ALLOCATION)
                p += 4 + n
            option_reply(c, opt, REP_ACK)
        elif opt == OPT_GO:
            option_reply(c, opt, REP_INFO,
                         struct.pack(">HQH", INFO_EXPORT, size, flags))
            option_reply(c, opt, REP_ACK)
            return True
        elif opt == OPT_ABORT:
            option_reply(c, opt, REP_ACK)
            return False
        else:
            option_reply(c, opt, REP_ERR_UNSUP)


def chunk(c, flags, ctype, cookie, payload):
    c.sendall(struct.pack(">IHHQI", STRUCTURED_MAGIC, flags, ctype, cookie,
                          len(payload)) + payload)


def read_reply(c, cookie, offset, length, bad):
    if bad and fault == "cookie":
        cookie ^= 0x5a5a5a5a
    if bad and fault == "chunk-offset":
        offset -= 512
    if bad and fault == "chunk-oversize":
        length += 4096
    if fault == "hole":
        hole_reply(c, cookie, offset, length)
        return
    if bad and fault == "wrong-chunk":
        chunk(c, CHUNK_DONE, CHUNK_BLOCK_STATUS, cookie,
              struct.pack(">III", 1, length, 0))
        return
    flags = CHUNK_DONE | (0x40 if bad and fault == "reply-flags" else 0)
    payload = struct.pack(">Q", offset) + data(offset, length)
    if bad and fault == "cut-chunk":
        head = struct.pack(">IHHQI", STRUCTURED_MAGIC, flags,
                           CHUNK_OFFSET_DATA, cookie, len(payload))
        c.sendall(head + payload[:len(payload) // 2])
        raise EOFError
    chunk(c, flags, CHUNK_OFFSET_DATA, cookie, payload)


def hole_reply(c, cookie, offset, length):
    """A read's reply in chunks: data, except an OFFSET_HOLE chunk for the
    part of HOLE it covers."""
    start = max(offset, HOLE[0])
    end = min(offset + length, HOLE[0] + HOLE[1])
    if start >= end:
        start = end = offset + length
    if start > offset:
        chunk(c, 0, CHUNK_OFFSET_DATA, cookie,
              struct.pack(">Q", offset) + data(offset, start - offset))
    if end > start:
        chunk(c, 0, CHUNK_OFFSET_HOLE, cookie,
              struct.pack(">QI", start, end - start))
    if offset + length > end:
        chunk(c, 0, CHUNK_OFFSET_DATA, cookie,
              struct.pack(">Q", end) + data(end, offset + length - end))
    chunk(c, CHUNK_DONE, 0, cookie, b"")    # NBD_REPLY_TYPE_NONE


def status_reply(c, cookie, offset, length, size, bad):
    extents = [(min(length, size - offset), 0)]
    if bad and fault == "extent-zero":
        extents = [(0, 0)] + extents
    if bad and fault == "extent-past-end":
        extents = [(size - offset + 65536, 0)]
    payload = struct.pack(">I", 1) + b"".join(
        struct.pack(">II", n, f) for n, f in extents)
    chunk(c, CHUNK_DONE, CHUNK_BLOCK_STATUS, cookie, payload)


def serve(c):
    global connections
    with lock:
        connections += 1
        nth = connections
    size = SIZE
    flags = FLAG_HAS_FLAGS | FLAG_READ_ONLY | FLAG_SEND_DF
    if fault == "second-size":
        flags |= FLAG_CAN_MULTI_CONN
        if nth % 2 == 0:
            size += 4096
    try:
        if not handshake(c, size, flags):
            return
        reads = statuses = 0
        while True:
            magic, _, ctype, cookie, offset, length = \
                struct.unpack(">IHHQQI", recv(c, 28))
            if magic != REQUEST_MAGIC or ctype == CMD_DISC:
                return
            if ctype == CMD_READ:
                reads += 1
                read_reply(c, cookie, offset, length, reads == 3)
            elif ctype == CMD_BLOCK_STATUS:
                statuses += 1
                status_reply(c, cookie, offset, length, size, statuses == 1)
            else:
                msg = b"not supported here"
                chunk(c, CHUNK_DONE, CHUNK_ERROR, cookie,
                      struct.pack(">IH", EINVAL, len(msg)) + msg)
    except (EOFError, ConnectionError):
        pass
    finally:
        c.close()


def main():
    global fault
    if sys.argv[1] == "--image":
        with open(sys.argv[3], "wb") as f:
            f.write(image(sys.argv[2]))
        return
    path, fault = sys.argv[1], sys.argv[2]
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
