/*
 * Every public header, included together in one translation unit (an
 * application that both traces and reads captures does this): no type is
 * defined twice, and the stats a capture hands out are the ring's stats type.
 */
#include "tracebuf/blob.h"
#include "tracebuf/capture.h"
#include "tracebuf/describe.h"
#include "tracebuf/func.h"
#include "tracebuf/funcgraph.h"
#include "tracebuf/hist.h"
#include "tracebuf/events.h"
#include "tracebuf/export.h"
#include "tracebuf/page.h"
#include "tracebuf/pmu.h"
#include "tracebuf/problem.h"
#include "tracebuf/reader.h"
#include "tracebuf/report.h"
#include "tracebuf/ring.h"
#include "tracebuf/schema.h"
#include "tracebuf/stats.h"
#include "tracebuf/usyms.h"
#include "tracebuf/tracepoint.h"

#include "lib/tap.h"

int main(void)
{
	int (*capture_stats)(const struct tb_capture *, int, struct tb_cpu_stats *) = tb_capture_cpu_stats;
	int (*ring_stats)(struct tb_ring *, unsigned, struct tb_cpu_stats *) = tb_stats_read;

	ok(capture_stats && ring_stats, "all public headers compile together; one struct tb_cpu_stats");
	/* export.h's table: every kind found again by its name */
	size_t found = 0;
	for (size_t i = 0; i < tb_export_kind_count(); i++)
		found += tb_export_find(tb_export_kind_name(tb_export_kind(i))) == tb_export_kind(i);
	ok(found == tb_export_kind_count() && found > 0 && !tb_export_kind(found),
	   "export.h: each of the %zu exporters is found by its name; none past the end", found);
	return done_testing();
}
