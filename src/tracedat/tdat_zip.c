// SPDX-License-Identifier: MIT
/*
 * tdat_zip.c - zlib and zstd behind one small interface, as version 7
 * trace.dat files use them: each block is one zlib stream (compress2's
 * format) or one zstd frame, compressed and decompressed independently.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "tdat_zip.h"

/*
 * A zstd frame may ask for a window of up to 2 GiB.  trace.dat blocks are a
 * few sub-buffers, so a window beyond 16 MiB only ever comes from a file
 * built to make the reader allocate.
 */
#define ZSTD_MAX_WINDOW_LOG 24

int tdat_codec_by_name(const char *name)
{
	if (!strcmp(name, "none"))
		return TDAT_CODEC_NONE;
	if (!strcmp(name, "zlib"))
		return TDAT_CODEC_ZLIB;
	if (!strcmp(name, "zstd"))
		return TDAT_CODEC_ZSTD;
	return -1;
}

const char *tdat_codec_name(enum tdat_codec codec)
{
	return codec == TDAT_CODEC_ZLIB ? "zlib" : codec == TDAT_CODEC_ZSTD ? "zstd" : "none";
}

const char *tdat_codec_version(enum tdat_codec codec)
{
	if (codec == TDAT_CODEC_ZLIB)
		return zlibVersion();
	return codec == TDAT_CODEC_ZSTD ? ZSTD_versionString() : "";
}

/* ---------------------------------------------------------- decompress */

struct tdat_unzip {
	enum tdat_codec codec;
	z_stream z;
	bool z_ready; /* inflateInit done */
	ZSTD_DStream *zs;
};

int tdat_unzip_new(enum tdat_codec codec, struct tdat_unzip **out)
{
	struct tdat_unzip *u;

	*out = NULL;
	if (codec == TDAT_CODEC_NONE)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->codec = codec;
	if (codec == TDAT_CODEC_ZLIB) {
		if (inflateInit(&u->z) != Z_OK) {
			free(u);
			return -ENOMEM;
		}
		u->z_ready = true;
	} else {
		u->zs = ZSTD_createDStream();
		if (!u->zs ||
		    ZSTD_isError(ZSTD_DCtx_setParameter(u->zs, ZSTD_d_windowLogMax, ZSTD_MAX_WINDOW_LOG))) {
			tdat_unzip_free(u);
			return -ENOMEM;
		}
	}
	*out = u;
	return 0;
}

void tdat_unzip_free(struct tdat_unzip *u)
{
	if (!u)
		return;
	if (u->z_ready)
		inflateEnd(&u->z);
	ZSTD_freeDStream(u->zs);
	free(u);
}

int tdat_unzip_reset(struct tdat_unzip *u)
{
	if (u->codec == TDAT_CODEC_ZLIB)
		return inflateReset(&u->z) == Z_OK ? 0 : -EINVAL;
	return ZSTD_isError(ZSTD_DCtx_reset(u->zs, ZSTD_reset_session_only)) ? -EINVAL : 0;
}

static int inflate_step(struct tdat_unzip *u, const uint8_t *in, size_t in_len, size_t *in_pos, uint8_t *out,
			size_t out_cap, size_t *out_pos, const char **why)
{
	size_t in_left = in_len - *in_pos, out_left = out_cap - *out_pos;
	int rc;

	/* zlib counts in uInt: feed it at most 1 GiB a call. */
	u->z.next_in = (Bytef *)(uintptr_t)(in + *in_pos);
	u->z.avail_in = (uInt)(in_left < (1u << 30) ? in_left : (1u << 30));
	u->z.next_out = out + *out_pos;
	u->z.avail_out = (uInt)(out_left < (1u << 30) ? out_left : (1u << 30));
	rc = inflate(&u->z, Z_NO_FLUSH);
	*in_pos = (size_t)((const uint8_t *)u->z.next_in - in);
	*out_pos = (size_t)(u->z.next_out - out);
	if (rc == Z_STREAM_END)
		return 1;
	if (rc == Z_OK || rc == Z_BUF_ERROR)
		return 0;
	*why = rc == Z_MEM_ERROR ? "out of memory in zlib" : "corrupt zlib data";
	return -EINVAL;
}

static int zstd_step(struct tdat_unzip *u, const uint8_t *in, size_t in_len, size_t *in_pos, uint8_t *out,
		     size_t out_cap, size_t *out_pos, const char **why)
{
	ZSTD_inBuffer ib = {in, in_len, *in_pos};
	ZSTD_outBuffer ob = {out, out_cap, *out_pos};
	size_t rc = ZSTD_decompressStream(u->zs, &ob, &ib);

	*in_pos = ib.pos;
	*out_pos = ob.pos;
	if (ZSTD_isError(rc)) {
		*why = ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge
			   ? "zstd frame asks for a window above 16 MiB"
			   : "corrupt zstd data";
		return -EINVAL;
	}
	return rc == 0 ? 1 : 0;
}

int tdat_unzip_step(struct tdat_unzip *u, const uint8_t *in, size_t in_len, size_t *in_pos, uint8_t *out,
		    size_t out_cap, size_t *out_pos, const char **why)
{
	if (u->codec == TDAT_CODEC_ZLIB)
		return inflate_step(u, in, in_len, in_pos, out, out_cap, out_pos, why);
	return zstd_step(u, in, in_len, in_pos, out, out_cap, out_pos, why);
}

/*
 * The window a zstd frame starting at in asks for (RFC 8878, 3.1.1.1.2: a
 * single-segment frame's window is its content size), as the streaming
 * decoder checks it against ZSTD_MAX_WINDOW_LOG; UINT64_MAX when in does
 * not start with a whole frame header.
 */
static uint64_t zstd_window(const uint8_t *in, size_t in_len)
{
	static const uint8_t dict_id_bytes[4] = {0, 1, 2, 4}, content_bytes[4] = {1, 2, 4, 8};
	size_t at, n;
	uint64_t size = 0;
	uint8_t fhd, wd;

	if (in_len < 6 || in[0] != 0x28 || in[1] != 0xb5 || in[2] != 0x2f || in[3] != 0xfd)
		return UINT64_MAX;
	fhd = in[4];
	if (!(fhd & 0x20)) {
		wd = in[5];
		size = 1ull << (10 + (wd >> 3));
		return size + size / 8 * (wd & 7);
	}
	at = 5 + dict_id_bytes[fhd & 3];
	n = content_bytes[fhd >> 6];
	if (in_len < at + n)
		return UINT64_MAX;
	for (size_t i = 0; i < n; i++)
		size |= (uint64_t)in[at + i] << (8 * i);
	return n == 2 ? size + 256 : size;
}

/*
 * zstd straight into out, no window to copy out of: the first frame of in
 * must make exactly out_len bytes; it is refused (-EINVAL) wherever the
 * streaming decoder would say something (a window above its limit, data
 * that does not decompress, another size).
 */
static int zstd_whole(struct tdat_unzip *u, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
		      size_t *in_used)
{
	size_t frame = ZSTD_findFrameCompressedSize(in, in_len);
	size_t made;

	if (ZSTD_isError(frame) || zstd_window(in, in_len) > (1ull << ZSTD_MAX_WINDOW_LOG))
		return -EINVAL;
	made = ZSTD_decompressDCtx(u->zs, out, out_len, in, frame);
	if (ZSTD_isError(made) || made != out_len)
		return -EINVAL;
	*in_used = frame;
	return 0;
}

int tdat_unzip_whole(struct tdat_unzip *u, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
		     size_t *in_used)
{
	if (u->codec != TDAT_CODEC_ZSTD)
		return -ENOTSUP; /* zlib's inflate writes straight into out as it is */
	return zstd_whole(u, in, in_len, out, out_len, in_used);
}

/* ------------------------------------------------------------ compress */

struct tdat_zipper {
	enum tdat_codec codec;
	ZSTD_CCtx *zc;
};

int tdat_zipper_new(enum tdat_codec codec, struct tdat_zipper **out)
{
	struct tdat_zipper *z;

	*out = NULL;
	if (codec == TDAT_CODEC_NONE)
		return -EINVAL;
	z = calloc(1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->codec = codec;
	if (codec == TDAT_CODEC_ZSTD && !(z->zc = ZSTD_createCCtx())) {
		free(z);
		return -ENOMEM;
	}
	*out = z;
	return 0;
}

void tdat_zipper_free(struct tdat_zipper *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->zc);
	free(z);
}

size_t tdat_zip_bound(const struct tdat_zipper *z, size_t len)
{
	return z->codec == TDAT_CODEC_ZLIB ? compressBound((uLong)len) : ZSTD_compressBound(len);
}

long tdat_zip(struct tdat_zipper *z, const void *in, size_t len, void *out, size_t cap)
{
	if (z->codec == TDAT_CODEC_ZLIB) {
		uLongf n = (uLongf)cap;
		int rc = compress2(out, &n, in, (uLong)len, Z_DEFAULT_COMPRESSION);
		return rc == Z_OK ? (long)n : rc == Z_MEM_ERROR ? -ENOMEM : -EOVERFLOW;
	}
	size_t n = ZSTD_compress2(z->zc, out, cap, in, len);
	return ZSTD_isError(n) ? -EOVERFLOW : (long)n;
}
