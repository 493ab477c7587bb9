/*
 * The JSON export stays valid JSON whatever the trace's strings hold:
 * comms with quotes, backslashes, control bytes and bytes that are not
 * UTF-8 (a made-up capture), checked by parsing the output with Python's
 * json module (skipped without python3) and by the escapes themselves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/synth.h"
#include "lib/tap.h"
#include "tracebuf/capture.h"
#include "tracebuf/chrome.h"

#define ID_SWITCH 372

static void add_switch(struct synth *s, uint64_t ts, const char *prev, int32_t prev_pid, const char *next,
		       int32_t next_pid)
{
	uint8_t r[64] = {0};
	uint16_t id = ID_SWITCH;

	memcpy(r, &id, 2);
	memcpy(r + 4, &prev_pid, 4);
	memcpy(r + 8, prev, strlen(prev) < 16 ? strlen(prev) : 16);
	memcpy(r + 24, &prev_pid, 4);
	memcpy(r + 40, next, strlen(next) < 16 ? strlen(next) : 16);
	memcpy(r + 56, &next_pid, 4);
	synth_add(s, 0, ts, r, sizeof(r));
}

int main(void)
{
	static const char weird[] = "q\"b\\s\x01\xff\xc3";
	struct synth s;
	struct tb_capture *c;
	struct tb_chrome_totals t;
	char path[128], cmd[512], *text = NULL;
	size_t len = 0;

	if (synth_open(&s, 1, NULL) < 0 ||
	    synth_format(&s, "sched", "tests/data/kernel/formats/sched/sched_switch.format") < 0) {
		ok(0, "made a capture");
		return done_testing();
	}
	add_switch(&s, 1000, "a", 10, weird, 20);
	add_switch(&s, 3500, weird, 20, "a", 10);
	add_switch(&s, 9000, "a", 10, weird, 20);
	synth_close(&s);
	if (!ok(tb_capture_open(s.dir, NULL, &c) == 0, "the capture opens"))
		return done_testing();
	FILE *f = open_memstream(&text, &len);
	ok(tb_chrome_json_write(c, f, NULL, &t) == 0, "JSON written");
	fclose(f);
	tb_capture_close(c);
	is_int(t.cpu_slices, 2, "two CPU slices (the third switch's run has no end)");
	ok(strstr(text, "\"name\":\"q\\\"b\\\\s\\u0001\\u00ff\\u00c3 20\",\"pid\":10000000,\"tid\":0,\"ts\":1.000,"
			"\"dur\":2.500") != NULL,
	   "the odd comm escaped, its slice 1.000 us + 2.500 us on CPU 0");
	ok(strstr(text, "\"name\":\"a 10\",\"pid\":10000000,\"tid\":0,\"ts\":3.500,\"dur\":5.500") != NULL,
	   "a's slice 3.500 us + 5.500 us");
	snprintf(path, sizeof(path), "%s/out.json", s.dir);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	if (system("command -v python3 >/dev/null 2>&1") != 0) {
		skip(1, "python3 is not installed");
	} else {
		snprintf(cmd, sizeof(cmd),
			 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
			 "n=[e[\"args\"][\"name\"] for e in d[\"traceEvents\"] if e[\"ph\"]==\"M\" and e[\"pid\"]==20]; "
			 "sys.exit(0 if n and n[0]==\"q\\\"b\\\\s\\x01\\xff\\xc3 20\" else 1)' %s",
			 path);
		ok(system(cmd) == 0, "Python parses it and reads the comm back byte for byte (as code points)");
	}
	free(text);
	synth_remove(&s);
	return done_testing();
}
