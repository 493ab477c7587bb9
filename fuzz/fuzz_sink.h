/* SPDX-License-Identifier: MIT */
/*
 * fuzz_sink.h - where the targets print: /dev/null, opened once per
 * process with a large buffer.  An fopen() and fclose() per input was two
 * system calls and a FILE made and freed per run, and a 4 KiB buffer one
 * write per 4 KiB of report.  A descriptor is kept (not a stream in memory
 * with no file under it) because the report's batched writer
 * (src/print/gather.c) writes to the stream's descriptor with writev():
 * without one it takes its fwrite() path instead, and that writev() path
 * would go unfuzzed.
 */
#ifndef TB_FUZZ_SINK_H
#define TB_FUZZ_SINK_H

#include <stdio.h>
#include <stdlib.h>

static inline FILE *fuzz_sink(void)
{
	static FILE *sink;
	static char buf[1 << 16];

	if (!sink) {
		sink = fopen("/dev/null", "w");
		if (!sink || setvbuf(sink, buf, _IOFBF, sizeof(buf)) != 0)
			abort();
	}
	clearerr(sink); /* a run starts with no error of the last one's */
	return sink;
}

#endif
