#!/bin/sh
# The ring's specification with glibc's rseq registration switched off: every
# write goes through the try-lock fallback, and the fast path, which stores
# into the (unregistered) rseq area before it checks, must step aside cleanly.
B=${TB_BUILD:-build}
GLIBC_TUNABLES=glibc.pthread.rseq=0 exec "$B/tests/test_ring_basic"
