/*
 * A shared library with events of its own, loaded and unloaded with
 * dlopen/dlclose by test_tp_dlopen and test_tp_enable.  Built without
 * libtracebuf: the program it is loaded into provides it.
 */
#include "plugins/tp_shared.h"
#include "tracebuf/tracepoint.h"

TB_EVENT(tpd, plugin_only, TB_PROTO(const char *what, unsigned n),
	 TB_FIELDS(tb_string(what, what), tb_field(unsigned int, n, n)),
	 TB_PRINTK("what=%s n=%u", __get_str(what), REC->n))

void plugin_fire(unsigned n);

void plugin_fire(unsigned n)
{
	tb_trace(tpd, shared, 2, (int)n);
	tb_trace(tpd, plugin_only, "from the plugin", n);
	tb_printf("plugin printf n=%u s=%s\n", n, "unloaded later");
}
