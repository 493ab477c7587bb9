/*
 * blob.pml - Promela model of tracebuf's blob area (docs/design.md §9;
 * src/ring/blob.c).  model/README.md says what is modelled and why.
 *
 * One blob area: NCH chunks of UNITS data units, one chunk word each
 * {first: allocation number of the owning blob's first chunk, state}, and
 * the allocation cursor.  NW writers write K blobs each; writer w's blobs
 * take SZ(w) chunks (1, or the whole area), so blobs lap each other.
 *
 *   - A writer: area_take (cursor load, a look at the chunks as one step,
 *     the cursor CAS; in overwrite mode a skip past a chunk being filled,
 *     SKIPS times at most), one CAS per
 *     chunk to claim it, the fill one unit at a time, a store per chunk to
 *     commit, then the reference published (a channel: the ring is
 *     ring.pml's business; here it is a queue the reader takes in order).
 *     With REFUSEPUB the publish may fail: the writer gives the chunks back
 *     (CAS COMMITTED -> FREE), as tb_blob_commit does on -ENOSPC.
 *   - The consuming reader: for each reference, the check (a load per
 *     chunk), the copy (a load per unit), the re-check, then the release
 *     (CAS COMMITTED -> READ).
 *   - With PEEK the iterator too: a non-consuming reader that resolves
 *     published references at any time, without releasing.
 *
 * Every shared access is one step; memory is sequentially consistent (the
 * pairings of design.md §9 make the C accesses behave so).
 *
 * Build switches (spin -D...):
 *   NCH UNITS NW K   sizes (defaults 2 1 3 1)
 *   OVERWRITE=0      producer/consumer: COMMITTED chunks are not claimable
 *   REFUSEPUB=1      the reference's publish may be refused
 *   SKIPS            skips past blobs being filled before a refusal (1)
 *   PEEK=1           add the non-consuming reader
 *   INTERNAL=0       drop the ghost checks (B1, B3); keep what a user sees
 *   MUTANT_X         a protocol step removed (README.md)
 *   PROBE=n          reachability probe n must fail
 */

#ifndef NCH
#define NCH 2
#endif
#ifndef UNITS
#define UNITS 1
#endif
#ifndef NW
#define NW 3
#endif
#ifndef K
#define K 1
#endif
#ifndef OVERWRITE
#define OVERWRITE 1
#endif
#ifndef REFUSEPUB
#define REFUSEPUB 0
#endif
#ifndef PEEK
#define PEEK 0
#endif
#ifndef INTERNAL
#define INTERNAL 1
#endif
#ifndef SKIPS
#define SKIPS 1 /* blob.c allows 4; one shows the skip */
#endif

#define NB (NW * K)
/* writer 0's blobs take one chunk, writer 1's the whole area */
#define SZ(w) ((w) % 2 == 0 -> 1 : NCH)

/* chunk word {first, state} */
#define FREE 0
#define WRITING 1
#define COMMITTED 2
#define READ 3
#define CW(f, s) ((f) * 4 + (s))
#define CWF(x) ((x) / 4)
#define CWS(x) ((x) % 4)

/* what a writer wanting a chunk for the blob starting at f finds (blob.c claim_verdict) */
#define V_OK 0
#define V_STALE 1
#define V_BUSY 2
#define VERDICT(x, f) (CWF(x) >= (f) -> V_STALE : \
	((CWS(x) == WRITING || (CWS(x) == COMMITTED && !OVERWRITE)) -> V_BUSY : V_OK))

/* the chunk still holds, complete, the blob starting at f (blob.c readable) */
#ifdef MUTANT_NO_FIRST
#define READABLE(x, f) (CWS(x) == COMMITTED || CWS(x) == READ)
#else
#define READABLE(x, f) (CWF(x) == (f) && (CWS(x) == COMMITTED || CWS(x) == READ))
#endif

#define U(c, u) data[(c) * UNITS + (u)]

short cw[NCH];          /* chunk words */
short next;             /* the allocation cursor */
byte data[NCH * UNITS]; /* the id of the blob whose bytes a unit holds (0: never written) */
chan refq = [NB] of { byte, short, byte }; /* published references: blob id, first, chunks */

/* ghosts */
byte published, refused, nread, nlost, done;
byte pub_id[NB];   /* published references, for the non-consuming reader */
short pub_first[NB];
byte pub_k[NB];

#ifdef PROBE
#define REACH(n, c) assert(!((PROBE == n || PROBE == 99) && (c)))
#else
#define REACH(n, c) skip
#endif

#if INTERNAL
/* B3: a chunk word only moves forward */
#define SETCW(c, v) assert(CWF(v) >= CWF(cw[c])); cw[c] = v
/* B1: bytes are written only by the chunk's owner, while it is WRITING for it */
#define CHECK_OWNER(c, f) assert(cw[c] == CW(f, WRITING))
#else
#define SETCW(c, v) cw[c] = v
#define CHECK_OWNER(c, f) skip
#endif

/*
 * Resolve the reference (id, f, k): check, copy (into the caller's local
 * cp), re-check.  ok is 1 when the copy is intact, and then every unit
 * copied must be the blob's own.
 */
inline resolve(id, f, k, ok, j, probe)
{
	ok = 1;
	j = 0;
	do
	:: j < k ->
		if
		:: !READABLE(cw[(f + j) % NCH], f) -> ok = 0; break
		:: else -> j++
		fi
	:: else -> break
	od;
	if
	:: ok ->
		/* the copy, one unit per step */
		j = 0;
		do
		:: j < k * UNITS -> cp[j] = U((f + j / UNITS) % NCH, j % UNITS); j++
		:: else -> break
		od;
#ifndef MUTANT_VALIDATE_FIRST
		/* the re-check: the same words mean nobody claimed a chunk meanwhile */
		j = 0;
		do
		:: j < k ->
			if
			:: !READABLE(cw[(f + j) % NCH], f) ->
				/* probe 5: the first check passed, a writer claimed a chunk during the copy */
				REACH(5, probe);
				ok = 0; break
			:: else -> j++
			fi
		:: else -> break
		od
#endif
	:: else
	fi;
	if
	:: ok ->
		/* never torn, never another blob's bytes */
		j = 0;
		do
		:: j < k * UNITS -> assert(cp[j] == id); j++
		:: else -> break
		od
	:: else
	fi;
	j = 0
}

proctype Writer(byte w)
{
	byte s, id, k, j, skips, v;
	short cur, start;
	bool ok;

	do
	:: s == K -> break
	:: else ->
		d_step { id = w * K + s + 1; k = SZ(w); skips = 0 };
take:		/* area_take */
		cur = next;
		/*
		 * The look before moving the cursor, as one step: it only
		 * decides between retry, skip, refusal and going on; what a
		 * writer owns is decided by the claims below, one CAS each.
		 */
		d_step {
			/* a blob never wraps */
			if
			:: cur % NCH + k > NCH -> start = cur - cur % NCH + NCH
			:: else -> start = cur
			fi;
			j = 0; v = V_OK;
			do
			:: j < k ->
				v = VERDICT(cw[(start + j) % NCH], start);
				if
				:: v != V_OK -> break
				:: else -> j++
				fi
			:: else -> break
			od
		};
		if
		:: v == V_STALE -> goto take
		:: v == V_BUSY ->
			if
			:: OVERWRITE && skips < SKIPS ->
				/* probe 2: an overwrite-mode writer goes past a blob being filled */
				REACH(2, CWS(cw[(start + j) % NCH]) == WRITING);
				skips++;
				atomic {
					if
					:: next == cur -> next = start + j + 1
					:: else
					fi
				};
				goto take
			:: else ->
				REACH(3, true); /* probe 3: refused for want of room */
				refused++; goto next_blob
			fi
		:: else
		fi;
		atomic {
			if
			:: next == cur -> next = start + k; ok = 1
			:: else -> ok = 0
			fi
		};
		if
		:: !ok -> goto take
		:: else
		fi;
		/* claim_chunks: one compare-and-swap per chunk */
		j = 0;
		do
		:: j < k ->
#ifdef MUTANT_PLAIN_CLAIM
			/* the verdict, then (later) a plain store: no compare */
			ok = (VERDICT(cw[(start + j) % NCH], start) == V_OK);
			if
			:: ok -> SETCW((start + j) % NCH, CW(start, WRITING))
			:: else
			fi;
#else
			atomic {
				if
				:: VERDICT(cw[(start + j) % NCH], start) == V_OK ->
					SETCW((start + j) % NCH, CW(start, WRITING)); ok = 1
				:: else -> ok = 0
				fi
			};
#endif
			if
			:: ok -> j++
			:: else ->
				REACH(4, true); /* probe 4: a claim raced ours after the cursor moved */
				/* give back what was claimed */
				do
				:: j > 0 -> j--; SETCW((start + j) % NCH, CW(start, FREE))
				:: else -> break
				od;
				refused++; goto next_blob
			fi
		:: else -> break
		od;
#ifdef MUTANT_COMMIT_FIRST
		j = 0;
		do
		:: j < k -> SETCW((start + j) % NCH, CW(start, COMMITTED)); j++
		:: else -> break
		od;
#endif
		/* the fill, outside any publish step, one unit at a time */
		j = 0;
		do
		:: j < k * UNITS ->
#ifndef MUTANT_COMMIT_FIRST
			CHECK_OWNER((start + j / UNITS) % NCH, start);
#endif
			U((start + j / UNITS) % NCH, j % UNITS) = id; j++
		:: else -> break
		od;
#ifndef MUTANT_COMMIT_FIRST
		/* commit: every chunk COMMITTED before the reference (B2) */
		j = 0;
		do
		:: j < k -> SETCW((start + j) % NCH, CW(start, COMMITTED)); j++
		:: else -> break
		od;
#endif
		/* publish the reference, or (REFUSEPUB) fail and give the chunks back */
		if
		:: atomic {
			refq!id, start, k;
			pub_id[published] = id; pub_first[published] = start; pub_k[published] = k;
			published++
		   }
		:: REFUSEPUB ->
			j = 0;
			do
			:: j < k ->
				atomic {
					if
					:: cw[(start + j) % NCH] == CW(start, COMMITTED) ->
						SETCW((start + j) % NCH, CW(start, FREE))
					:: else
					fi
				};
				j++
			:: else -> break
			od;
			refused++
		fi;
next_blob:
		skip;
		d_step { s++; j = 0; cur = 0; start = 0; v = 0; ok = 0 }
	od;
	done++
}

proctype Reader()
{
	byte id, k, j;
	short f;
	bool ok;
	byte cp[NCH * UNITS];

	do
	:: refq?id, f, k ->
#ifdef MUTANT_RELEASE_FIRST
		/* release before the copy: a writer may claim and fill meanwhile */
		j = 0;
		do
		:: j < k ->
			atomic {
				if
				:: cw[(f + j) % NCH] == CW(f, COMMITTED) -> SETCW((f + j) % NCH, CW(f, READ))
				:: else
				fi
			};
			j++
		:: else -> break
		od;
#endif
		resolve(id, f, k, ok, j, true);
		if
		:: ok -> nread++
		:: else ->
			REACH(1, true); /* probe 1: a blob overwritten before it was read */
			nlost++
		fi;
		/* release: the chunks may be claimed again (producer/consumer needs it) */
		j = 0;
		do
		:: j < k ->
			atomic {
				if
				:: cw[(f + j) % NCH] == CW(f, COMMITTED) -> SETCW((f + j) % NCH, CW(f, READ))
				:: else
				fi
			};
			j++
		:: else -> break
		od;
		atomic { id = 0; f = 0; k = 0; j = 0; ok = 0 } /* a break target: not a d_step */
	:: done == NW && empty(refq) -> break
	od;
	/* the books: every blob published was read whole or reported overwritten */
	assert(nread + nlost == published);
	assert(published + refused == NB);
#if !OVERWRITE
	/* B4: producer/consumer never overwrites a blob before its reference is read */
	assert(nlost == 0);
#endif
}

#if PEEK
/*
 * The iterator (and tb_blob_resolve): at any moment, one published
 * reference, any of them, resolved without releasing anything.
 */
proctype Peeker()
{
	byte i, j;
	bool ok;
	byte cp[NCH * UNITS];

	do
	:: i < published -> break
	:: i + 1 < published -> i++
	:: done == NW && published == 0 -> goto out
	od;
	resolve(pub_id[i], pub_first[i], pub_k[i], ok, j, false);
out:
	skip
}
#endif

init
{
	byte i;

	atomic {
		/* blob_area_init: numbers start at one lap */
		next = NCH;
		i = 0;
		do
		:: i < NW -> run Writer(i); i++
		:: else -> break
		od;
		run Reader();
#if PEEK
		run Peeker();
#endif
		i = 0
	}
}
