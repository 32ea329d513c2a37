#!/usr/bin/env python3
# blkhash-ref.py: the reference block hash that checksum-libev is tested
# against, as plainly as it can be written and with nothing but hashlib.
#
#   digest = H(H(block_0) || ... || H(block_n-1) || le64(size))
#
# Blocks are block-size bytes at absolute offsets; the last one is
# hashed at its real length, never padded.  Every block is hashed, zero
# or not: this program takes none of the shortcuts it is meant to check.
# This is the construction of blksum (blkhash 0.10 and later) and
# nbdcopy --blkhash; the published values are in tests/checksum-published.sh.
#
# Usage: blkhash-ref.py [--digest=NAME] [--block-size=BYTES] FILE
# Prints the hex digest.  FILE is a plain file; the tests fetch an NBD
# image with "nbdcopy URI FILE" first, so nothing here speaks NBD.

import argparse
import hashlib
import struct
import sys


def block_hash(f, name, block_size):
    outer = hashlib.new(name)
    size = 0
    while True:
        block = f.read(block_size)
        if not block:
            break
        outer.update(hashlib.new(name, block).digest())
        size += len(block)
        # A buffered read returns block_size bytes unless the file ends,
        # so the blocks stay at absolute offsets and only the last one
        # can be short.
        if len(block) < block_size:
            break
    outer.update(struct.pack("<Q", size))
    return outer.hexdigest()


def main():
    p = argparse.ArgumentParser(description="Reference block hash.")
    p.add_argument("--digest", default="sha256")
    p.add_argument("--block-size", type=int, default=64 * 1024)
    p.add_argument("file")
    args = p.parse_args()
    if args.block_size <= 0 or args.block_size & (args.block_size - 1):
        sys.exit("blkhash-ref.py: --block-size must be a power of two")
    with open(args.file, "rb") as f:
        print(block_hash(f, args.digest, args.block_size))


if __name__ == "__main__":
    main()
