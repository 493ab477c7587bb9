/* SPDX-License-Identifier: MIT */
/*
 * tdat_zip.h - the compression codecs a version 7 trace.dat may use
 * ("none", "zlib", "zstd"), with one interface for both directions.
 *
 * Decompression is incremental: a stream is fed compressed bytes and asked
 * for as much output as the caller has room for, so a reader can take a
 * huge chunk one page at a time and never holds more than it asked for.
 * That is also the defence against decompression bombs: nothing is ever
 * produced beyond the size the caller expects, and the caller checks that
 * the size a chunk declares is plausible before it starts.
 *
 * Ownership: tdat_unzip_new() / tdat_zipper_new() return objects the
 * caller frees with tdat_unzip_free() / tdat_zipper_free(); compression is
 * one block at a time into the caller's buffer.
 */
#ifndef TRACEBUF_TDAT_ZIP_H
#define TRACEBUF_TDAT_ZIP_H

#include <stddef.h>
#include <stdint.h>

enum tdat_codec { TDAT_CODEC_NONE = 0, TDAT_CODEC_ZLIB, TDAT_CODEC_ZSTD };

/* The codec named name ("none", "zlib", "zstd"); -1 if tracebuf has none of that name. */
int tdat_codec_by_name(const char *name);
const char *tdat_codec_name(enum tdat_codec codec);
/* The library version trace-cmd stores next to the name ("1.5.4"; "" for none). */
const char *tdat_codec_version(enum tdat_codec codec);

/*
 * The most a compressed block can be no larger than for a given input:
 * trace.dat declares the ratio as it is.  Anything claiming more output per
 * input byte than this is refused as a decompression bomb; real trace
 * data (mostly zero tails of sub-buffers) stays far below it.
 */
#define TDAT_MAX_RATIO 1024u

struct tdat_unzip;

/* 0 or -ENOMEM / -EINVAL (codec none). */
int tdat_unzip_new(enum tdat_codec codec, struct tdat_unzip **out);
void tdat_unzip_free(struct tdat_unzip *u);
/* Start a new compressed block (one zlib stream or zstd frame). */
int tdat_unzip_reset(struct tdat_unzip *u);

/*
 * Decompress in[*in_pos..in_len) into out[*out_pos..out_cap), advancing both
 * positions.  Returns 1 when the block ended, 0 when it needs more input or
 * more room, -EINVAL when the data is corrupt (*why says how, static).
 */
int tdat_unzip_step(struct tdat_unzip *u, const uint8_t *in, size_t in_len, size_t *in_pos, uint8_t *out,
		    size_t out_cap, size_t *out_pos, const char **why);

/*
 * A whole block at the start of in[0..in_len) into out[0..out_len) in one
 * call, when the codec gains by it (zstd decodes straight into out rather
 * than into its window and copies out): 0 when the block made exactly
 * out_len bytes (*in_used its compressed bytes), -ENOTSUP when the codec
 * does not do this (step instead), -EINVAL when the block is anything else
 * - corrupt, another size, a window too large: step through it instead to
 * find out what and where, as nothing said so here.  Starts a new block.
 */
int tdat_unzip_whole(struct tdat_unzip *u, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
		     size_t *in_used);

/* A compressor, kept from one block to the next (zstd's context is costly to make). */
struct tdat_zipper;

int tdat_zipper_new(enum tdat_codec codec, struct tdat_zipper **out);
void tdat_zipper_free(struct tdat_zipper *z);
/* Upper bound of the compressed size of len bytes. */
size_t tdat_zip_bound(const struct tdat_zipper *z, size_t len);
/*
 * Compress in into out (room for tdat_zip_bound() bytes), as one block:
 * the size written, or a negative errno.  Each codec at its default level.
 */
long tdat_zip(struct tdat_zipper *z, const void *in, size_t len, void *out, size_t cap);

#endif
