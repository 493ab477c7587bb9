/*
 * Events of a shared library loaded with dlopen: they register when it
 * loads (an event declared in both the program and the library keeps one
 * ID, and the library's copy follows the program's on/off state), write
 * while it is loaded, and when it is unloaded their formats and printf
 * format strings stay in the registry, so what the library wrote is still
 * printed with names and text.  Loaded again, the library's events get
 * their old IDs back.
 */
#include <dlfcn.h>
#include <unistd.h>

#include "lib/evtext.h"
#include "lib/tap.h"
#include "plugins/tp_shared.h"
#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"

struct find {
	const char *system, *name;
	struct tb_events_info info;
	int found;
};

static int find_cb(void *ctx, const struct tb_events_info *ev)
{
	struct find *f = ctx;

	if (!strcmp(ev->system, f->system) && !strcmp(ev->name, f->name)) {
		f->info = *ev;
		f->found++;
	}
	return 0;
}

static struct find find_event(const char *system, const char *name)
{
	struct find f = {system, name, {0}, 0};

	tb_events_foreach(find_cb, &f);
	return f;
}

struct site {
	struct tb_events_printf_info info;
	int found;
};

static int site_cb(void *ctx, const struct tb_events_printf_info *si)
{
	struct site *s = ctx;

	if (strstr(si->fmt, "plugin printf")) {
		s->info = *si;
		s->found++;
	}
	return 0;
}

/* Every record in the ring, rendered with a schema made now; the text after the context columns, joined by '|'. */
static char *drain(struct tb_ring *ring)
{
	struct tb_schema *s = tb_schema_new();
	struct tb_read_event ev;
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);

	tb_schema_load_events(s, tb_ring_subbuf_size(ring));
	while (tb_consume_merged(ring, &ev) == 1) {
		char *line;
		if (ev.kind != TB_READ_RECORD)
			continue;
		line = evtext_render_line(s, &ev);
		fprintf(f, "%s|", evtext_after_context(line) ? evtext_after_context(line) : "?");
		free(line);
	}
	fclose(f);
	tb_schema_free(s);
	return out;
}

static void *load(const char *path, void (**fire)(unsigned))
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	*fire = h ? (void (*)(unsigned))dlsym(h, "plugin_fire") : NULL;
	if (!h)
		diag("dlopen: %s", dlerror());
	return h;
}

/* A library whose declarations conflict: refused with messages, left disabled. */
static void conflicts(const char *build, struct tb_ring *ring)
{
	char path[512], err[2048] = "", *text;
	void (*fire)(void);
	unsigned long before = tb_events_problems();
	FILE *tmp = tmpfile();
	int saved = dup(2);
	size_t n;
	void *h;

	snprintf(path, sizeof(path), "%s/tests/tp_conflict.so", build);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, sizeof(err) - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	if (!h) {
		skip(5, "the conflicting plugin could not be loaded");
		return;
	}
	fire = (void (*)(void))dlsym(h, "conflict_fire");
	is_int(tb_events_problems() - before, 2, "two problems reported when the library loads");
	ok(strstr(err, "tp_conflict.c:") && strstr(err, "event tpd:shared differs from its declaration at ") &&
		   strstr(err, "tp_shared.h:"),
	   "a conflicting declaration is named with both places");
	ok(strstr(err, "tb_printf(\"addr %pI4\\n\"): the kernel's printf cannot record \"%pI4\"; call left disabled"),
	   "a %%pI4 format is refused, the conversion named");
	for (char *line = strtok(err, "\n"); line; line = strtok(NULL, "\n"))
		diag("%s", line);
	tb_events_enable("tpd:shared,ftrace:bprint", NULL, 0);
	fire();
	text = drain(ring);
	is_str(text, "", "neither writes although tpd:shared and ftrace:bprint are enabled");
	free(text);
	tb_trace(tpd, shared, 1, 5);
	text = drain(ring);
	is_str(text, "shared: who=1 n=5|", "the program's own tpd:shared is untouched");
	free(text);
	dlclose(h);
}

int main(void)
{
	const char *build = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char path[512], *text;
	struct tb_ring *ring;
	struct tb_ring_opts o;
	void (*fire)(unsigned);
	struct find shared, only;
	struct site s1 = {0}, s2 = {0};
	unsigned only_id;
	void *h;

	snprintf(path, sizeof(path), "%s/tests/tp_plugin.so", build);
	tb_ring_opts_default(&o);
	o.clock = TB_CLOCK_MONO;
	if (tb_ring_new(&ring, &o) < 0)
		skip_all("cannot create a ring");
	tb_events_attach(ring);
	is_int(tb_events_enable("tpd:*", NULL, 0), 1, "before the plugin is loaded tpd:* is the program's one event");
	ok(find_event("tpd", "plugin_only").found == 0, "the plugin's own event is not known yet");

	h = load(path, &fire);
	if (!h || !fire)
		skip_all("the test plugin could not be loaded");
	shared = find_event("tpd", "shared");
	only = find_event("tpd", "plugin_only");
	ok(shared.found == 1 && only.found == 1 && only.info.loaded, "dlopen registered the plugin's events");
	ok(shared.info.id == tb_event_tpd_shared.id && shared.info.id >= 1000,
	   "an event declared in both objects has one ID (%u)", shared.info.id);
	ok(!only.info.enabled, "the plugin's own event starts disabled");
	tb_events_enable("ftrace:bprint", NULL, 0);
	fire(1);
	tb_trace(tpd, shared, 1, 1);
	text = drain(ring);
	is_str(text,
	       "shared: who=2 n=1|plugin_fire: plugin printf n=1 s=unloaded later|shared: who=1 n=1|",
	       "the plugin's copy of the shared event follows its on/off state; its printf prints with its function");
	free(text);

	tb_events_enable("tpd:plugin_only", NULL, 0);
	fire(2);
	tb_events_foreach_printf(site_cb, &s1);
	ok(s1.found == 1 && s1.info.loaded, "the plugin's tb_printf site is registered");
	only_id = only.info.id;
	dlclose(h);

	only = find_event("tpd", "plugin_only");
	ok(only.found == 1 && !only.info.loaded && only.info.id == only_id && only.info.format_len > 0,
	   "after dlclose its event stays registered, marked unloaded, with its ID and format");
	s1.found = 0;
	tb_events_foreach_printf(site_cb, &s1);
	ok(s1.found == 1 && !s1.info.loaded && !strcmp(s1.info.func, "plugin_fire"),
	   "... and so does its printf format");
	text = drain(ring);
	is_str(text,
	       "shared: who=2 n=2|plugin_only: what=from the plugin n=2|plugin_fire: plugin printf n=2 s=unloaded later|",
	       "records the unloaded plugin wrote still print with names and text");
	free(text);
	tb_trace(tpd, shared, 1, 3);
	text = drain(ring);
	is_str(text, "shared: who=1 n=3|", "the program's copy of the shared event still writes");
	free(text);

	h = load(path, &fire);
	if (!h || !fire)
		return done_testing();
	only = find_event("tpd", "plugin_only");
	ok(only.found == 1 && only.info.loaded && only.info.id == only_id && only.info.enabled,
	   "loaded again, its event has its old ID back, and its on/off state");
	fire(4);
	tb_events_foreach_printf(site_cb, &s2);
	ok(s2.found == 2 && s2.info.loaded && s2.info.key != s1.info.key,
	   "its printf site has a new key (keys are never reused)");
	text = drain(ring);
	is_str(text, "shared: who=2 n=4|plugin_only: what=from the plugin n=4|plugin_fire: plugin printf n=4 s=unloaded later|",
	       "and it writes again");
	free(text);
	dlclose(h);
	is_int(tb_events_problems(), 0, "no registration problems");
	conflicts(build, ring);
	tb_events_attach(NULL);
	tb_ring_free(ring);
	return done_testing();
}
