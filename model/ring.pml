/*
 * ring.pml - Promela model of tracebuf's per-CPU write/read protocol
 * (docs/design.md; src/ring.c, src/publish.[ch], src/reader.c).
 * model/README.md says what is modelled, what is not, and why.
 *
 * One CPU buffer: N ring pages plus the reader's spare, pages of CAPU
 * units.  NW writers on that CPU, each writing K records; writer w's
 * records take SZ(w) units (1 or 2), so pages also close before they are
 * full (padding, len < CAPU, entries != len).  One consuming reader.
 *
 *   - A write: snapshot (tail word, tail_hist, re-check), then either an
 *     append section or claim_next (slot CAS; an overwrite marks the slot
 *     lapped) followed by a switch section, which stores the page's
 *     overrun_cum: the previous page's plus the lapped claim's entries.  Every load and CAS is its own step, so
 *     writers interleave (are preempted) anywhere between the snapshot and
 *     the section.
 *   - The publish section is rseq: the CPU check, the tail-word check and
 *     the stores run with no other section on the CPU in between.  With
 *     ABORTS (default) a section may also be abandoned after its check,
 *     between groups of its stores (preemption, signal, migration): the
 *     stores done stay in memory, the tail word is not stored, the write
 *     restarts.  Stores go in publish.c's order (st64 list, st32 list,
 *     payload, tail word).
 *   - The reader: tail_now, take_next (slot CAS {P,seq,0} -> {spare,seq,1}),
 *     peek_held/page_limit, gap accounting from cum_before.
 *
 * Memory is sequentially consistent: every global access is one step.
 * The acquire/release pairings of design.md section 6 are what makes the
 * C code's accesses behave like this on x86-64 (TSO); they are not modelled.
 *
 * Build switches (cpp, spin -D...):
 *   N CAPU NW K      sizes (defaults 2 2 2 2)
 *   ABORTS=0         publish sections never abandoned half way
 *   OVERWRITE=0      producer/consumer mode: a full ring refuses (dropped)
 *   INTERNAL=0       drop the ghost invariant checks (I1, I3, I4, I6), keep
 *                    only what a user sees: the records the reader returns
 *                    and the final books
 *   MUTANT_X         a protocol step removed (README.md, "Mutants")
 *   PROBE=n          reachability probe n must fail (README.md)
 *   ITER=1           the iterator instead of the consuming reader;
 *                    ITER_FIX=1 with the proposed fix of its end count
 *   KILL=1           writer 0 may die for good at any point between its
 *                    claim and its commit (SIGKILL: TB_CP_CLAIMED and every
 *                    abandoned-section point); nobody restarts its write
 *   RKILL=1          the consuming reader may die once inside its commit of
 *                    a record (TB_CP_READ_JOURNALED, _MOVED, _COUNTED:
 *                    reader.c R1-R3); the next consumer takes over its
 *                    state and finishes the commit from the journal
 */

#ifndef N
#define N 2
#endif
#ifndef CAPU
#define CAPU 2
#endif
#ifndef NW
#define NW 2
#endif
#ifndef K
#define K 2
#endif
#ifndef ABORTS
#define ABORTS 1
#endif
#ifndef OVERWRITE
#define OVERWRITE 1
#endif
#ifndef INTERNAL
#define INTERNAL 1
#endif
#ifndef ITER
#define ITER 0
#endif
#ifndef KILL
#define KILL 0
#endif
#ifndef RKILL
#define RKILL 0
#endif

#define NP1 (N + 1)
#define NR (NW * K)

/* ---------------------------------------------------------------- words */

/* tail word {seq (gen, not truncated), phys, off (units), count} */
#define TW(s, p, o, c) (((((s) * NP1 + (p)) * (CAPU + 1)) + (o)) * (CAPU + 1) + (c))
#define TCNT(t) ((t) % (CAPU + 1))
#define TOFF(t) (((t) / (CAPU + 1)) % (CAPU + 1))
#define TPHYS(t) (((t) / ((CAPU + 1) * (CAPU + 1))) % NP1)
#define TSEQ(t) ((t) / ((CAPU + 1) * (CAPU + 1) * NP1))

/* slot word {phys, free, lapped, seq} */
#define SWL(p, s, f, l) ((s) * (4 * NP1) + (p) * 4 + (l) * 2 + (f))
#define SW(p, s, f) SWL(p, s, f, 0)
#define SSEQ(x) ((x) / (4 * NP1))
#define SPHYS(x) (((x) / 4) % NP1)
#define SFREE(x) ((x) % 2)
#define SLAP(x) (((x) / 2) % 2)
/* the slot holds unread page p of lap s (claimed or entered; lapped or not) */
#define SHOLDS(x, p, s) (SSEQ(x) == (s) && SPHYS(x) == (p) && !SFREE(x))

/* tail_hist entry {seq, phys} */
#define HW(s, p) ((s) * NP1 + (p))
#define HSEQ(h) ((h) / NP1)
#define HPHYS(h) ((h) % NP1)

/* page units: a record r (1..NR) is its header unit r, then BODY(r) if it
 * takes 2 units.  TORN: header stored, payload not yet.  PAD: padding. */
#define EMPTY 0
#define BODY(r) ((r) + NR)
#define TORN (2 * NR + 1)
#define PAD (2 * NR + 2)
#define WID(r) (((r) - 1) / K)
#define WSEQ(r) (((r) - 1) % K + 1)
#define SZ(r) (WID(r) % 2 + 1)
#define UNC 255 /* gidx of a record not committed */

#define PG(p, u) page[(p) * CAPU + (u)]

/* ---------------------------------------------------------------- state */

/* written only by publish sections */
short tail;
short tail_hist[2];
byte m_cum[NP1]; /* meta[phys].cum_before */
byte m_ent[NP1]; /* meta[phys].entries */
byte m_len[NP1]; /* meta[phys].len */
byte m_ovr[NP1]; /* meta[phys].overrun_cum: events overwritten when the tail entered it */
byte page[NP1 * CAPU];
/* compare-and-swap only: writers' claims, the reader's take */
short slot[N];
/* counters (atomic adds); overrun only in the add-after-CAS mutant: the
 * library's overrun is the stats' reading of meta and the slots (final check) */
byte overrun, dropped, nread, lost;
/* reader state (the consuming reader only; global so invariants can see it) */
bool rd_held;
byte rd_phys, rd_seq, rd_off, rd_next_seq, rd_next_cum;
/* the reader's commit journal (reader.c R1-R3): targets, and RJ_PENDING */
bool rj_pending;
byte rj_off, rj_cum, rj_read;
bool rkilled; /* the reader died in a commit (RKILL) */

/* ghosts: not in the C code */
byte committed;  /* records committed so far = the next event number */
byte gidx[NR + 1]; /* the event number record r was committed as, or UNC */
byte lastread[NW]; /* per writer: sequence of the last record read */
byte gver;       /* successful steps: commits, claims, takes */
byte done;       /* writers finished */
byte refused;    /* writes refused (producer/consumer mode) */
byte abandoned;  /* records a killed writer never wrote (KILL) */
bool killed;     /* writer 0 is dead (KILL) */
hidden byte ci_i, ci_p, ci_mask, ci_s;

/* ---------------------------------------------------------------- checks */

/*
 * Reachability probes (make check runs each with -DPROBE=n and requires the
 * assertion to fail): they show the interesting interleavings do happen in
 * this model, so the properties above are not satisfied vacuously.
 */
#ifdef PROBE
#define REACH(n, c) assert(!((PROBE == n || PROBE == 99) && (c)))
#else
#define REACH(n, c) skip
#endif

#if INTERNAL
/* I6: the N + 1 pages are a permutation over the N slots and the reader.
 * The tail: tail_hist resolves it, its page is in its slot (unread) or held
 * by the reader, and I4: its numbering counts every committed record. */
inline check_inv()
{
	ci_mask = 1 << rd_phys;
	ci_i = 0;
	do
	:: ci_i < N ->
		ci_p = SPHYS(slot[ci_i]);
		assert((ci_mask & (1 << ci_p)) == 0);
		ci_mask = ci_mask | (1 << ci_p);
		ci_i++
	:: else -> break
	od;
	ci_s = TSEQ(tail);
	assert(HSEQ(tail_hist[ci_s % 2]) == ci_s);
	ci_p = HPHYS(tail_hist[ci_s % 2]);
	assert(ci_p == TPHYS(tail));
	assert(SHOLDS(slot[ci_s % N], ci_p, ci_s) ||
	       (rd_held && rd_seq == ci_s && rd_phys == ci_p && SSEQ(slot[ci_s % N]) == ci_s));
	assert(committed == m_cum[ci_p] + TCNT(tail));
	ci_i = 0; ci_p = 0; ci_mask = 0; ci_s = 0
}

/* I1/I3: a section may store only above t_off on the tail page, or into
 * the page claimed for the next sequence number (and its meta). */
#define TAILPHYS HPHYS(tail_hist[TSEQ(tail) % 2])
#define CLAIMED(p) SHOLDS(slot[(TSEQ(tail) + 1) % N], p, TSEQ(tail) + 1)
#define CHECK_STORE(p, u) assert(((p) == TAILPHYS && (u) >= TOFF(tail)) || CLAIMED(p))
#define CHECK_META_TAIL(p) assert((p) == TAILPHYS)
#define CHECK_META_CLAIMED(p) assert(CLAIMED(p))
#define INTERNAL_ASSERT(c) assert(c)
#else
#define INTERNAL_ASSERT(c) skip
inline check_inv() { skip }
#define CHECK_STORE(p, u) skip
#define CHECK_META_TAIL(p) skip
#define CHECK_META_CLAIMED(p) skip
#endif

/* ---------------------------------------------------------------- writer */

/*
 * A retry after a failed check.  Lock-freedom, as a safety property: since
 * this write's snapshot some other process completed a step (a commit, a
 * claim or a take; gv counts this writer's own claims), so retries are
 * bounded by others' progress and no writer ever waits for another.
 */
#define RETRY assert(gver != gv); goto again

#if KILL
/* SIGKILL of writer 0, once: it stops here for good */
#define KILLPT if :: w == 0 && !killed -> killed = 1; goto dead :: skip fi
#define KILLOPT :: w == 0 && !killed -> killed = 1; goto dead
#else
#define KILLPT skip
#define KILLOPT
#endif

#if ABORTS
/* rseq abort: preempted/signalled/migrated before the final store (or killed) */
#define ABORTPT if :: goto again KILLOPT :: skip fi
#else
#define ABORTPT if KILLOPT :: skip fi
#endif

#define COMMIT gidx[r] = committed; committed++; gver++

/* rseq: check and stores with no other section between them */
#ifdef MUTANT_SPLIT_PUBLISH
/* what happens without rseq or the lock: check, then (later) store */
#define SECTION_BEGIN if :: tail != t -> RETRY :: else fi; atomic {
#else
#define SECTION_BEGIN atomic { if :: tail != t -> RETRY :: else fi;
#endif

proctype Writer(byte w)
{
	byte s = 1, r, sz, vseq, voff, vcnt, vphys, q, lostv, cumold, ovrold, gv;
	short t, h, cur;

	do
	:: s > K -> break
	:: else ->
		d_step { r = w * K + s; sz = SZ(r) };
again:		/* take_snapshot: tail word, tail_hist, re-check (tail_resolve) */
		atomic { t = tail; gv = gver }
		atomic {
			h = tail_hist[TSEQ(t) % 2];
			/* probe 9: tail_hist entry written by an abandoned switch section */
			REACH(9, HSEQ(h) == TSEQ(t) + 2 && TSEQ(tail) == TSEQ(t) + 1)
		}
		if
		:: HSEQ(h) != TSEQ(t) -> RETRY
		:: else
		fi;
		if
		:: tail != t -> RETRY
		:: else
		fi;
		d_step {
			/* tail_view: seq and page from tail_hist (the page is also in
			 * the tail word, which the fast path uses instead) */
			vseq = TSEQ(t); voff = TOFF(t); vcnt = TCNT(t); vphys = HPHYS(h);
			INTERNAL_ASSERT(vphys == TPHYS(t));
			h = 0
		}
		if
		:: voff + sz <= CAPU ->
			/* build_append + publish */
			SECTION_BEGIN
#ifdef MUTANT_TAIL_FIRST
			tail = TW(vseq, vphys, voff + sz, vcnt + 1); COMMIT;
			ABORTPT;
#endif
			/* st32: the record header; then the payload */
			CHECK_STORE(vphys, voff);
			PG(vphys, voff) = TORN;
			ABORTPT;
			PG(vphys, voff) = r;
			if
			:: sz == 2 -> CHECK_STORE(vphys, voff + 1); PG(vphys, voff + 1) = BODY(r)
			:: else
			fi;
#ifndef MUTANT_TAIL_FIRST
			ABORTPT;
			/* the commit */
			tail = TW(vseq, vphys, voff + sz, vcnt + 1); COMMIT;
#endif
			/* probe 3: appended to the page the reader holds and has read */
			REACH(3, rd_held && rd_phys == vphys && rd_off > 0);
			check_inv()
			}
		:: else ->
			/* claim_next */
			atomic {
				cur = slot[(vseq + 1) % N];
				/* probe 4: a claim made by another writer whose section has
				 * not run (and may never run: it lost the race) is used */
				REACH(4, SSEQ(cur) == vseq + 1 && tail == t)
			}
			if
			:: SSEQ(cur) == vseq + 1 ->
				/* claimed already (maybe by a writer that then lost, or died):
				 * the old lap's entries stay in meta until the page closes again */
				q = SPHYS(cur);
				/* probe 11: a lapping claim of the killed writer, entered by another */
				REACH(11, killed && SLAP(cur));
#ifndef MUTANT_ADD_AFTER_CAS
				lostv = (SLAP(cur) -> m_ent[q] : 0)
#else
				skip
#endif
			:: SSEQ(cur) != vseq + 1 && SSEQ(cur) + N != vseq + 1 ->
				RETRY
			:: SSEQ(cur) + N == vseq + 1 && SFREE(cur) ->
#ifdef MUTANT_WRITE_BEFORE_CLAIM
				PG(SPHYS(cur), 0) = r;
#endif
				atomic {
					if
					:: slot[(vseq + 1) % N] == cur ->
						slot[(vseq + 1) % N] = SW(SPHYS(cur), vseq + 1, 0);
						q = SPHYS(cur); lostv = 0; gver++; gv++;
						check_inv()
					:: else -> REACH(5, SSEQ(slot[(vseq + 1) % N]) == SSEQ(cur)); RETRY
					fi
				};
				KILLPT
			:: SSEQ(cur) + N == vseq + 1 && !SFREE(cur) ->
#if OVERWRITE
#ifdef MUTANT_WRITE_BEFORE_CLAIM
				PG(SPHYS(cur), 0) = r;
#endif
				lostv = m_ent[SPHYS(cur)]; /* final: the page is closed */
				atomic {
					if
					:: slot[(vseq + 1) % N] == cur ->
#ifdef MUTANT_ADD_AFTER_CAS
						slot[(vseq + 1) % N] = SW(SPHYS(cur), vseq + 1, 0);
#else
						slot[(vseq + 1) % N] = SWL(SPHYS(cur), vseq + 1, 0, 1);
#endif
						q = SPHYS(cur); gver++; gv++;
						check_inv()
					/* probe 5: the reader's take beat this claim */
					:: else -> REACH(5, SSEQ(slot[(vseq + 1) % N]) == SSEQ(cur)); RETRY
					fi
				};
				/* TB_CP_CLAIMED: the page claimed over unread data, no section run */
				KILLPT;
				/* probe 1: unread records overwritten */
				REACH(1, lostv > 0);
#ifdef MUTANT_ADD_AFTER_CAS
				/* the old protocol: an atomic add after the CAS, a step of its own */
				d_step { overrun = overrun + lostv; lostv = 0 }
#else
				skip
#endif
#else
				/* producer/consumer: refused, counted in dropped */
				d_step { dropped++; refused++; s++; t = 0; cur = 0; vseq = 0; voff = 0; vcnt = 0; vphys = 0; gv = 0 }
				goto next
#endif
			fi;
			/* build_switch reads the tail page's cum_before and overrun_cum
			 * (final since its entry; a stale snapshot fails the section's check) */
			cumold = m_cum[vphys];
			ovrold = m_ovr[vphys];
			cur = 0;
			SECTION_BEGIN
#ifdef MUTANT_TAIL_FIRST
			tail = TW(vseq + 1, q, sz, 1); COMMIT;
			ABORTPT;
#endif
			/* st64: padding of the old page, meta[new].cum_before, tail_hist */
			if
			:: voff < CAPU -> CHECK_STORE(vphys, voff); PG(vphys, voff) = PAD
			:: else
			fi;
			CHECK_META_CLAIMED(q);
			m_cum[q] = cumold + vcnt;
			m_ovr[q] = ovrold + lostv;
			tail_hist[(vseq + 1) % 2] = HW(vseq + 1, q);
			ABORTPT;
			/* st32: meta[old].entries, .len, the record header; the payload */
			CHECK_META_TAIL(vphys);
			m_ent[vphys] = vcnt;
			m_len[vphys] = voff;
			ABORTPT;
			CHECK_STORE(q, 0);
			PG(q, 0) = TORN;
			ABORTPT;
			PG(q, 0) = r;
			if
			:: sz == 2 -> CHECK_STORE(q, 1); PG(q, 1) = BODY(r)
			:: else
			fi;
#ifndef MUTANT_TAIL_FIRST
			ABORTPT;
			tail = TW(vseq + 1, q, sz, 1); COMMIT;
#endif
			check_inv()
			}
		fi;
		d_step { s++; t = 0; vseq = 0; voff = 0; vcnt = 0; vphys = 0; q = 0; cumold = 0; ovrold = 0; lostv = 0; gv = 0 };
next:
		skip
	od;
	atomic { r = 0; sz = 0; done++ }; /* break may not jump into a d_step */
	goto out;
dead:
	/* killed: this record and the rest are never written; nobody restarts them
	 * (atomic, not d_step: a goto may not jump into a d_step) */
	atomic {
		abandoned = abandoned + K + 1 - s;
		s = 0; r = 0; sz = 0; t = 0; h = 0; cur = 0; vseq = 0; voff = 0; vcnt = 0; vphys = 0;
		q = 0; lostv = 0; cumold = 0; ovrold = 0; gv = 0; done++
	};
out:
	skip
}

/* ---------------------------------------------------------------- reader */

#if RKILL
/* SIGKILL of the consumer inside its commit, once: the next one takes over */
#define RKILLPT if :: !rkilled -> rkilled = 1; goto restart :: skip fi
#else
#define RKILLPT skip
#endif

proctype Reader()
{
	bool fin, won;
	byte ts, limit, v, ovr;
	short lt, cur;

again:
	do
	:: true ->
		/* (J) outside a commit, read counts exactly what the position passed */
		assert(rj_pending || rd_next_cum == nread + lost);
		/*
		 * tail_now.  The reader uses only the tail word (its seq and
		 * offset), never tail_hist's page, and the model's tail word
		 * carries the whole seq, so tail_resolve's loads of tail_hist and
		 * of the tail again return a value the tail word had at one
		 * instant: one load.  fin (a ghost: all writers finished) is
		 * read first, so when it is set this tail word is the last one.
		 */
		atomic { fin = (done == NW); lt = tail; ts = TSEQ(lt) }
		if
		:: rd_held ->
			/* peek_held: page_limit */
			won = (ts == rd_seq);
			if
			:: won -> limit = TOFF(lt)
			:: else -> limit = m_len[rd_phys]
			fi;
			lt = 0;
			if
			:: rd_off < limit ->
				/* the record at read_off, and advance */
				d_step {
					v = PG(rd_phys, rd_off);
					/* probe 8: reading the tail page, above the limit an abandoned section left a torn record */
					REACH(8, won && limit < CAPU && PG(rd_phys, limit) == TORN);
					/* a complete record, not torn, padding or stale bytes */
					assert(v >= 1 && v <= NR);
					assert(v >= 1 && v <= NR && rd_off + SZ(v) <= limit &&
					       (SZ(v) == 1 || PG(rd_phys, rd_off + 1) == BODY(v)));
					/* committed, as event number next_cum: never uncommitted,
					 * never a second copy, numbering exact (I4) */
					assert(v >= 1 && v <= NR && gidx[v] == rd_next_cum);
					/* per writer, in order, each at most once */
					assert(v >= 1 && v <= NR && WSEQ(v) > lastread[WID(v)]);
					lastread[WID(v)] = WSEQ(v);
#ifdef MUTANT_READ_TWO_STORES
					/* the old advance: the position, then the count, no journal */
					rd_off = rd_off + SZ(v);
					rd_next_cum++;
					v = 0
				}
				RKILLPT;
				nread++
#else
					/* R1: the targets, then the word (one step: the word is the store that counts) */
					rj_off = rd_off + SZ(v);
					rj_cum = rd_next_cum + 1;
					rj_read = nread + 1;
					rj_pending = 1;
					v = 0
				}
				RKILLPT;
				/* R2: the position */
				atomic { rd_off = rj_off; rd_next_cum = rj_cum }
				RKILLPT;
				/* R2: the count, stored */
				nread = rj_read;
				RKILLPT;
				/* R3 */
				rj_pending = 0
#endif
			:: else ->
				if
				:: won && fin -> break /* drained */
				:: won && !fin -> skip /* nothing now */
				:: else -> rd_held = 0 /* finished: it is the spare now */
				fi
			fi;
			atomic { limit = 0; won = 0 }
		:: else ->
			/* take_next */
			lt = 0;
			if
			:: rd_next_seq + (N - 1) < ts -> rd_next_seq = ts - (N - 1)
			:: else
			fi;
			do
			:: rd_next_seq > ts ->
				if
				:: fin -> goto drained
				:: else -> break
				fi
			:: else ->
				cur = slot[rd_next_seq % N];
				if
				:: SSEQ(cur) != rd_next_seq || SFREE(cur) ->
					rd_next_seq++ /* overwritten: the gap shows in cum_before */
				:: else ->
#ifdef MUTANT_PLAIN_TAKE
					/* load, then a plain store: no compare */
					d_step {
						slot[rd_next_seq % N] = SW(rd_phys, rd_next_seq, 1);
						rd_held = 1; rd_phys = SPHYS(cur); rd_seq = rd_next_seq;
						rd_off = 0; rd_next_seq++; gver++
					}
#else
					atomic {
						if
						:: slot[rd_next_seq % N] == cur ->
							slot[rd_next_seq % N] = SW(rd_phys, rd_next_seq, 1);
							rd_held = 1; rd_phys = SPHYS(cur); rd_seq = rd_next_seq;
							rd_off = 0; rd_next_seq++; gver++;
							check_inv()
						:: else -> REACH(6, true) /* probe 6: a claim beat the take; look again */
						fi
					}
#endif
					cur = 0;
					if
					:: rd_held ->
						/* gap accounting: exact, from the numbering */
						d_step {
							assert(m_cum[rd_phys] >= rd_next_cum);
							REACH(2, m_cum[rd_phys] > rd_next_cum); /* probe 2: a gap */
							lost = lost + m_cum[rd_phys] - rd_next_cum;
							rd_next_cum = m_cum[rd_phys]
						}
						break
					:: else
					fi
				fi
			od
		fi;
		atomic { ts = 0; fin = 0 } /* a break target: not a d_step */
	od;
	goto drained;
restart:
	/*
	 * The next consumer: the dead one's locals are gone, its lock taken over
	 * (reader_lock), and a commit it left under way finished from the
	 * journal (journal_finish), before anything else.  (atomic, not
	 * d_step: a goto may not jump into a d_step)
	 */
	atomic {
		REACH(12, rj_pending && rd_next_cum == rj_cum && nread != rj_read); /* probe 12: died between position and count */
#ifndef MUTANT_READ_TWO_STORES
		if
		:: rj_pending -> rd_off = rj_off; rd_next_cum = rj_cum; nread = rj_read; rj_pending = 0
		:: else
		fi;
#endif
		fin = 0; won = 0; ts = 0; limit = 0; v = 0; ovr = 0; lt = 0; cur = 0
	}
	goto again;
drained:
	REACH(7, lost > 0 && rd_seq > N); /* probe 7: drained after losses */
	/* writers done, everything taken and read: the books balance (I3, I4) */
	assert(nread + lost == committed);
#ifdef MUTANT_ADD_AFTER_CAS
	ovr = overrun;
#else
	/* tb_stats_read' overwritten(): the tail page's overrun_cum, plus a
	 * lapped claim of the next page that no section entered (its writer
	 * died, or is about to enter) */
	d_step {
		ts = TSEQ(tail);
		lt = slot[(ts + 1) % N];
#ifdef MUTANT_STATS_TAIL_ONLY
		ovr = m_ovr[TPHYS(tail)];
#else
		ovr = m_ovr[TPHYS(tail)] + (SSEQ(lt) == ts + 1 && SLAP(lt) -> m_ent[SPHYS(lt)] : 0);
#endif
		/* probe 10: a lapping claim no section ever entered, counted from its slot */
		REACH(10, SSEQ(lt) == ts + 1 && SLAP(lt));
		lt = 0; ts = 0
	}
#endif
	assert(lost == ovr);
	assert(committed + refused + abandoned == NW * K);
#if !OVERWRITE
	assert(lost == 0 && ovr == 0);
#endif
}

/* ---------------------------------------------------------------- iterator */

#if ITER
byte it_ret, it_lost; /* records the iterator returned, events it reported lost */
byte it_end;          /* ghost: events committed before its end point */

/*
 * The non-consuming iterator on a buffer no consuming reader touches
 * (iter_start_cpu with nothing held, then iter_load_page / iter_peek until
 * the end point).  Its tail_now is one load of the tail word, as the
 * reader's; the page it names (tail_hist's) is the tail word's page.
 */
proctype Iter()
{
	byte next_seq, end_seq, end_off, end_cum, expect, seq, phys, limit, cum, u, v, seqno;
	bool ok;
	short lt, before;
	byte cp[CAPU];

	/* iter_start_cpu: expect = rd.next_cum - rd.pending_lost = 0 */
	next_seq = N;
	atomic { lt = tail; it_end = committed; end_seq = TSEQ(lt); end_off = TOFF(lt) }
#if ITER_FIX
	/* proposed fix: read cum_before, then re-check the tail word */
	do
	:: end_cum = m_cum[TPHYS(lt)] + TCNT(lt);
	   if
	   :: tail == lt -> break
	   :: else -> atomic { lt = tail; it_end = committed; end_seq = TSEQ(lt); end_off = TOFF(lt) }
	   fi
	od;
#else
	/* as reader.c does it: meta[v.phys].cum_before, a separate load */
	end_cum = m_cum[TPHYS(lt)] + TCNT(lt);
#endif
	do
	:: next_seq > end_seq -> break
	:: else ->
		/* iter_load_page */
		lt = tail; /* tail_now */
		d_step {
			if
			:: next_seq + (N - 1) < TSEQ(lt) -> next_seq = TSEQ(lt) - (N - 1)
			:: else
			fi;
			seq = next_seq;
			next_seq++
		}
		if
		:: seq > end_seq -> break
		:: else
		fi;
		before = slot[seq % N];
		if
		:: SSEQ(before) != seq || SFREE(before) -> skip /* overwritten */
		:: else ->
			phys = SPHYS(before);
			if
			:: seq < TSEQ(lt) -> limit = m_len[phys]
			:: else -> limit = TOFF(lt)
			fi;
			d_step {
				if
				:: seq == end_seq && limit > end_off -> limit = end_off
				:: else
				fi
			}
			cum = m_cum[phys];
			/* the copy, one unit at a time */
			u = 0;
			do
			:: u < limit -> cp[u] = PG(phys, u); u++
			:: else -> break
			od;
			/* the seqlock re-check: CAS of the slot with itself */
			atomic {
				if
				:: slot[seq % N] == before -> ok = 1
				:: else -> ok = 0
				fi
			}
			if
			:: ok ->
				/* iter_peek over the copy */
				d_step {
					u = 0;
					seqno = cum;
					do
					:: u < limit ->
						v = cp[u];
						assert(v >= 1 && v <= NR && u + SZ(v) <= limit &&
						       (SZ(v) == 1 || cp[u + 1] == BODY(v)));
						/* committed, before the end point, numbered exactly */
						assert(v >= 1 && v <= NR && gidx[v] == seqno && seqno < it_end);
						assert(seqno >= expect); /* never a record twice */
						it_lost = it_lost + seqno - expect;
						it_ret++;
						seqno++;
						expect = seqno;
						u = u + SZ(v)
					:: else -> break
					od;
					u = 0; v = 0; seqno = 0
				}
			:: else
			fi
		fi;
		d_step { lt = 0; before = 0; phys = 0; limit = 0; cum = 0; ok = 0; seq = 0 }
	od;
	/* the newest pages went while we walked */
	if
	:: expect < end_cum -> it_lost = it_lost + end_cum - expect
	:: else
	fi;
	/* every event before the end point: returned or reported lost, once */
	assert(it_ret + it_lost == it_end)
}
#endif

init
{
	byte i;

	atomic {
		/* cpu_init: lap 0 of slots 1..N-1 consumed; the tail starts at seq N */
		i = 1;
		do
		:: i < N -> slot[i] = SW(i, i, 1); i++
		:: else -> break
		od;
		slot[0] = SW(0, N, 0);
		tail_hist[N % 2] = HW(N, 0);
		tail_hist[(N + 1) % 2] = HW(N - 1, 0);
		tail = TW(N, 0, 0, 0);
		rd_phys = N;
		rd_next_seq = N;
		i = 1;
		do
		:: i <= NR -> gidx[i] = UNC; i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < NW -> run Writer(i); i++
		:: else -> break
		od;
#if ITER
		run Iter();
#else
		run Reader();
#endif
		i = 0
	}
}
