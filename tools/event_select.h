/* SPDX-License-Identifier: MIT */
/*
 * event_select.h - turning `-e` specs into enabled events of an instance.
 *
 * A spec is a comma-separated list of items:
 *   SYSTEM          every event of the system ("irq", "syscalls")
 *   SYSTEM:EVENT    one event ("sched:sched_switch"); either part may be a
 *                   glob ("irq:*", "sched:sched_wak*", "*:*_exit")
 *   EVENT           an event of that name in any system, as set_event takes
 *                   it ("sched_switch"), when no system has that name
 * Events are enabled through each event's (or system's) own enable file, so
 * globs work on every kernel and an item that matches nothing is an error,
 * not a silent no-op.
 */
#ifndef TRACEBUF_TOOLS_EVENT_SELECT_H
#define TRACEBUF_TOOLS_EVENT_SELECT_H

#include <stddef.h>

/* What `tracebuf capture` enables without -e: scheduling, process life, interrupts, signals. */
#define DEFAULT_EVENTS                                                                                       \
	"sched:sched_switch,sched:sched_waking,sched:sched_wakeup,sched:sched_wakeup_new,"                   \
	"sched:sched_migrate_task,sched:sched_process_fork,sched:sched_process_exec,"                        \
	"sched:sched_process_exit,irq,signal"

/*
 * Enable in the instance directory inst every event spec names.  Returns
 * the number of events enabled, or a negative errno with a message in err:
 * -ENOENT when an item matches no event, -EINVAL for an empty item, or the
 * error of an enable file that refused.
 */
int enable_events(const char *inst, const char *spec, char *err, size_t err_size);

/* Append spec to the comma-joined *joined (malloc'ed; NULL to start): 0 or -ENOMEM. */
int join_events(char **joined, const char *spec);

#endif
