# tracebuf - plain GNU Makefile.
#
#   make              library (static + shared), CLI
#   make run          the main job (see README)
#   make test         every test, normal + ASan/UBSan + TSan (beside two CPU hogs), fuzz replay, model check
#   make soak RUNS=n  the normal, ASan and TSan suites n times beside two CPU hogs
#   make stress SECONDS=n   the accounting torture test, longer
#   make fuzz         run each fuzz target for FUZZ_SECONDS
#   make fuzz-long FUZZ_SECONDS=n   the same, keeping what grows the corpora (fuzz/README.md)
#   make bench        benchmarks with their peers
#   make install      PREFIX, DESTDIR honoured
#
# V=1 shows the commands.  VARIANT=asan|tsan builds into build/VARIANT.

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

# The ABI rules (docs/design.md §0): SOMAJOR, VERSION's major and the version node of
# src/ring/libtracebuf.map change together, when an exported name is removed, renamed or
# changes meaning.  1: issue 22's pass over the public names.
VERSION := 1.0.0
SOMAJOR := 1

CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif

VARIANT ?=
ifeq ($(VARIANT),)
B := build
SANFLAGS :=
OPT ?= -O2
else ifeq ($(VARIANT),asan)
B := build/asan
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT ?= -O1
else ifeq ($(VARIANT),tsan)
B := build/tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT ?= -O1
else
$(error unknown VARIANT $(VARIANT))
endif

ifneq ($(V),1)
Q := @
endif

TEV_CFLAGS := $(shell pkg-config --cflags libtraceevent 2>/dev/null)
TEV_LIBS := $(shell pkg-config --libs libtraceevent 2>/dev/null || echo -ltraceevent)

# One -I src: an include names the stage its header lives in ("decode/format.h");
# a bare name is a header beside the file.  -MMD: each object depends on the headers it reads.
CPPFLAGS += -D_GNU_SOURCE -Iinclude -Isrc
# NO_USDT=1: no USDT probe notes in libtracebuf and what is built here (tracepoint.h's
# TB_NO_USDT; an application sets it for itself).  Objects are not rebuilt by the switch: make clean.
ifeq ($(NO_USDT),1)
CPPFLAGS += -DTB_NO_USDT
endif
DEPFLAGS = -MMD -MP
# a program compiled and linked in one step from one source: its .d beside it
LINKDEP = $(DEPFLAGS) -MF $@.d -MT $@
CFLAGS_BASE := -std=c17 -Wall -Wextra -Werror -g $(OPT) $(SANFLAGS)
# TB_BUILDING_LIBTRACEBUF: tracepoint.h keeps the general TLS model inside the libraries.
CFLAGS_LIB := $(CFLAGS_BASE) -fPIC -fno-semantic-interposition -DTB_BUILDING_LIBTRACEBUF
# trace.dat files may be compressed (v7): zlib and zstd, on the reading side only.
ZIP_LIBS := -lzstd -lz
# SQLite: the SQL exporter (src/export/export_sqlite.c) and `tracebuf sql`; reading side only.
SQL_LIBS := -lsqlite3
LDLIBS_READ := $(TEV_LIBS) $(ZIP_LIBS) $(SQL_LIBS) -lpthread -ldl -lm

# Sources are listed one way: by the stage folders they live in (docs/design.md §0),
# with the few exceptions named.
# The core: what an application links to trace itself.  libc only.
CORE_DIRS := ring filter source
# Function entry/exit (-finstrument-functions hooks): libtracebuf-func.a, which
# a program opts into; libc only (elfsyms.c turns exclusion patterns into addresses).
FUNC_SRCS := src/source/func.c src/source/func_exclude.c src/util/elfsyms.c
# in a core folder, but the reading side's: filters compiled against schemas, and
# `report -F`'s filter sets
READ_IN_CORE := src/filter/filter_format.c src/filter/filter_set.c
# only in test_shm_crash's and test_shm_pidns's build of the core (CRASH_OBJS)
CRASH_ONLY := src/ring/crash_point.c
CORE_SRCS := $(filter-out $(FUNC_SRCS) $(READ_IN_CORE) $(CRASH_ONLY),$(sort $(wildcard $(CORE_DIRS:%=src/%/*.c))))
# The reading side: formats, text, captures, report, exporters.  Uses libtraceevent.
READ_DIRS := util decode print tracedat input analyze export
READ_SRCS := $(sort $(wildcard $(READ_DIRS:%=src/%/*.c)) $(READ_IN_CORE))

CORE_OBJS := $(CORE_SRCS:src/%.c=$(B)/obj/%.o)
# tb_write's fast path, by hand where there is one (write_x86_64.S).
ARCH := $(shell $(CC) -dumpmachine | cut -d- -f1)
CORE_ASM := $(wildcard src/ring/write_$(ARCH).S)
READ_OBJS := $(READ_SRCS:src/%.c=$(B)/obj/%.o)
CORE_OBJS += $(CORE_ASM:src/%.S=$(B)/obj/%.o)
FUNC_OBJS := $(FUNC_SRCS:src/%.c=$(B)/obj/%.o)
# The public headers: what a program built against an installed tracebuf sees.
HEADERS := $(wildcard include/tracebuf/*.h)

TEST_SRCS := $(wildcard tests/test_*.c)
TESTS := $(TEST_SRCS:tests/%.c=$(B)/tests/%)
TEST_SCRIPTS := $(wildcard tests/t_*.sh)
TSAN_TESTS := test_usdt_gate test_hist_attach test_thread_names test_ring_torture test_ring_basic test_report_threads test_pagework_warmup test_pagework_count test_tp_threads test_tp_filter test_tp_filter_torture test_hist test_shm test_shm_crash test_shm_pidns test_tracedat_ksyms test_ksyms test_export test_sql_pipe

BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_CFLAGS :=
BENCH_LIBS :=
BENCHES := $(BENCH_SRCS:bench/%.c=$(B)/bench/%)
# a program bench_record.sh runs under `tracebuf record` (not a bench itself)
BENCHES += $(B)/bench/paced_app
# the trace_marker writer bench_report_kinds.sh records (not a bench itself)
BENCHES += $(B)/bench/marker_app
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))

.PHONY: all lib cli tests run test test-normal test-asan test-tsan test-fuzz test-model test-install \
	soak stress fuzz fuzz-long bench install clean deps format check-symbols check-layout

all: lib cli $(B)/examples/demo $(B)/examples/fourways

lib: $(B)/libtracebuf.a $(B)/libtracebuf.so $(B)/libtracebuf-read.a $(B)/libtracebuf-func.a
cli: $(B)/tracebuf $(B)/man/.stamp

# The man pages and the bash completion, printed by the binary from its option tables
# (tools/cli_opts.h), with the prose of docs/man/NAME.roff: tracebuf(1), tracebuf-CMD(1)
# each, completion/tracebuf.
$(B)/man/.stamp: $(B)/tracebuf $(wildcard docs/man/*.roff)
	$(Q)mkdir -p $(B)/man $(B)/completion
	$(Q)$(B)/tracebuf __man tracebuf docs/man/tracebuf.roff > $(B)/man/tracebuf.1
	$(Q)for c in $$($(B)/tracebuf --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do \
	  d=docs/man/$$c.roff; [ -f $$d ] || d=; \
	  $(B)/tracebuf __man $$c $$d > $(B)/man/tracebuf-$$c.1 || exit 1; done
	$(Q)$(B)/tracebuf __complete > $(B)/completion/tracebuf
	$(Q)touch $@

$(B)/obj/%.o: src/%.c Makefile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS_LIB) $(if $(filter $(READ_OBJS),$@),$(TEV_CFLAGS)) -c -o $@ $<

$(B)/obj/%.o: src/%.S src/ring/write_fast.h src/ring/crash_point.h Makefile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AS      $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS_LIB) -c -o $@ $<

$(B)/libtracebuf.a: $(CORE_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/libtracebuf-read.a: $(READ_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/libtracebuf-func.a: $(FUNC_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/libtracebuf.so: $(CORE_OBJS) src/ring/libtracebuf.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(SANFLAGS) -Wl,-soname,libtracebuf.so.$(SOMAJOR) -Wl,-z,nodelete \
		-Wl,--version-script=src/ring/libtracebuf.map -o $@ $(CORE_OBJS) -lpthread
	$(Q)ln -sf libtracebuf.so $(B)/libtracebuf.so.$(SOMAJOR)

TOOL_SRCS := $(wildcard tools/*.c)
TOOL_OBJS := $(TOOL_SRCS:tools/%.c=$(B)/obj-cli/%.o)
$(B)/obj-cli/%.o: tools/%.c Makefile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS_BASE) $(TEV_CFLAGS) -c -o $@ $<
$(B)/tracebuf: $(TOOL_OBJS) $(B)/libtracebuf-read.a $(B)/libtracebuf.a
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CFLAGS_BASE) -o $@ $(TOOL_OBJS) $(B)/libtracebuf-read.a $(B)/libtracebuf.a $(LDLIBS_READ)

$(B)/tests/%: tests/%.c $(B)/libtracebuf-read.a $(B)/libtracebuf.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) -Itests $(CFLAGS_BASE) $(TEV_CFLAGS) $(TEST_LDFLAGS) -o $@ $< $(TEST_EXTRA) \
		$(B)/libtracebuf-read.a $(B)/libtracebuf.a $(LDLIBS_READ)

# test_func: a call tree built with -finstrument-functions (tests/func/), one
# function left out by name and one file by path, part of it in a shared library.
INSTR := -finstrument-functions
FUNC_TREE := $(B)/tests/func/tree.o $(B)/tests/func/nt_file.o $(B)/tests/func/libtree.so
$(B)/tests/func/tree.o: INSTR_FLAGS := $(INSTR) -finstrument-functions-exclude-function-list=excluded_by_compiler
$(B)/tests/func/nt_file.o: INSTR_FLAGS := $(INSTR) -finstrument-functions-exclude-file-list=func/nt_file.c
$(B)/tests/func/%.o: tests/func/%.c tests/func/tree.h Makefile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS_BASE) $(INSTR_FLAGS) -c -o $@ $<
$(B)/tests/func/libtree.so: tests/func/tree_lib.c tests/func/tree.h Makefile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) $(CFLAGS_BASE) $(INSTR) -fPIC -shared -Wl,-soname,libtree.so -o $@ $<
$(B)/tests/test_func: $(FUNC_TREE) $(B)/libtracebuf-func.a
$(B)/tests/test_func: TEST_EXTRA = $(FUNC_TREE) -Wl,-rpath,'$$ORIGIN/func' $(B)/libtracebuf-func.a

# test_func_self: the ring and the tracer themselves built with -finstrument-functions.
SELF_SRCS := $(filter %.c,$(CORE_SRCS) $(FUNC_SRCS))
SELF_OBJS := $(patsubst src/%.c,$(B)/obj-instr/%.o,$(wildcard $(SELF_SRCS)))
$(B)/obj-instr/%.o: src/%.c Makefile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@ (instrumented)")
	$(Q)$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS_BASE) $(INSTR) -c -o $@ $<
$(B)/tests/test_func_self: tests/test_func_self.c $(SELF_OBJS) $(CORE_ASM:src/%.S=$(B)/obj/%.o) tests/lib/tap.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) -Itests $(CFLAGS_BASE) $(INSTR) -finstrument-functions-exclude-file-list=lib/tap.h \
		-o $@ $< $(SELF_OBJS) $(CORE_ASM:src/%.S=$(B)/obj/%.o) -lpthread

# test_shm_crash, test_shm_pidns: the library with its write path's crash points compiled in
# (src/ring/crash_point.h; a normal build has none), linked in place of libtracebuf.a.
CRASH_OBJS := $(patsubst src/%.c,$(B)/obj-crash/%.o,$(wildcard $(CORE_SRCS)) src/ring/crash_point.c) \
	$(CORE_ASM:src/%.S=$(B)/obj-crash/%.o)
$(B)/obj-crash/%.o: src/%.c Makefile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@ (crash points)")
	$(Q)$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS_LIB) -DTB_CRASH_POINTS -c -o $@ $<
$(B)/obj-crash/%.o: src/%.S src/ring/write_fast.h src/ring/crash_point.h Makefile
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS_LIB) -DTB_CRASH_POINTS -c -o $@ $<
$(B)/tests/test_shm_crash $(B)/tests/test_shm_pidns: $(CRASH_OBJS)
# (not a target-specific -D: prerequisites would inherit it; the tests define TB_CRASH_POINTS themselves)
$(B)/tests/test_shm_crash $(B)/tests/test_shm_pidns: TEST_EXTRA = $(CRASH_OBJS)

# A shared library with events, for the dlopen tests.  It is built without
# libtracebuf: the test programs export theirs (-rdynamic), as a program
# linked with libtracebuf.so would provide it.
TEST_PLUGIN := $(B)/tests/tp_plugin.so $(B)/tests/tp_conflict.so
$(B)/tests/tp_%.so: tests/plugins/tp_%.c tests/plugins/tp_shared.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) -Itests $(CFLAGS_BASE) -fPIC -shared -o $@ $<
$(B)/tests/test_tp_dlopen $(B)/tests/test_tp_enable: TEST_LDFLAGS := -rdynamic
$(B)/tests/test_tp_dlopen $(B)/tests/test_tp_enable: $(TEST_PLUGIN)

# t_usdt.sh: a program whose events bpftrace attaches to, the library it
# dlopens (its probes live there), and the program built with -DTB_NO_USDT.
USDT_APP := $(B)/tests/usdt/usdt_app $(B)/tests/usdt/usdt_lib.so $(B)/tests/usdt/usdt_app_nosdt
$(B)/tests/usdt/usdt_lib.so: tests/usdt/usdt_lib.c tests/usdt/usdt_events.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) -Itests $(CFLAGS_BASE) -fPIC -shared -o $@ $<
$(B)/tests/usdt/usdt_app: tests/usdt/usdt_app.c tests/usdt/usdt_events.h $(B)/libtracebuf.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) -Itests $(CFLAGS_BASE) -rdynamic -o $@ $< $(B)/libtracebuf.a -ldl -lpthread
$(B)/tests/usdt/usdt_app_nosdt: tests/usdt/usdt_app.c tests/usdt/usdt_events.h $(B)/libtracebuf.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) -Itests $(CFLAGS_BASE) -DTB_NO_USDT -rdynamic -o $@ $< $(B)/libtracebuf.a -ldl -lpthread

# test_so_dlopen: a program not linked with libtracebuf dlopens libtracebuf.so.
$(B)/tests/test_so_dlopen: tests/test_so_dlopen.c $(B)/libtracebuf.so
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) -Itests $(CFLAGS_BASE) -o $@ $< -ldl -lpthread

$(B)/bench/%: bench/%.c $(B)/libtracebuf.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) $(CFLAGS_BASE) $(BENCH_CFLAGS) -o $@ $< $(B)/libtracebuf.a \
		-lpthread $(BENCH_LIBS)

# bench_tracedat writes and reads trace.dat files: it links the reading side too.
$(B)/bench/bench_tracedat: bench/bench_tracedat.c $(B)/libtracebuf-read.a $(B)/libtracebuf.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) $(CFLAGS_BASE) $(TEV_CFLAGS) -o $@ $< $(B)/libtracebuf-read.a \
		$(B)/libtracebuf.a $(LDLIBS_READ)

# bench_zstd_floor times zstd alone on a trace.dat's chunks (bench_report.sh runs it).
$(B)/bench/bench_zstd_floor: BENCH_LIBS += $(B)/libtracebuf-read.a $(B)/libtracebuf.a $(LDLIBS_READ)
$(B)/bench/bench_zstd_floor: $(B)/libtracebuf-read.a

# bench_hist_attach attaches hists (tracebuf/hist.h: the reading side).
$(B)/bench/bench_hist_attach: BENCH_LIBS += $(B)/libtracebuf-read.a $(B)/libtracebuf.a $(LDLIBS_READ)
$(B)/bench/bench_hist_attach: $(B)/libtracebuf-read.a

# bench_offcpu makes a trace.dat (tests/lib/synth.h) and times tracebuf offcpu on it.
$(B)/bench/bench_offcpu: bench/bench_offcpu.c tests/lib/synth.h $(B)/libtracebuf-read.a $(B)/libtracebuf.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) -Itests $(CFLAGS_BASE) $(TEV_CFLAGS) -o $@ $< $(B)/libtracebuf-read.a \
		$(B)/libtracebuf.a $(LDLIBS_READ)

# scripts/soak.sh's writer and reader (not in make test): what an application links, libc only.
$(B)/tests/soak/soak: tests/soak/soak.c $(B)/libtracebuf.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) $(CFLAGS_BASE) -o $@ $< $(B)/libtracebuf.a -lpthread

$(B)/examples/%: examples/%.c $(B)/libtracebuf.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) $(CFLAGS_BASE) -o $@ $< $(B)/libtracebuf.a -lpthread

# examples/fourways attaches a hist (tracebuf/hist.h: the reading side).
$(B)/examples/fourways: examples/fourways.c $(B)/libtracebuf-read.a $(B)/libtracebuf.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) $(CFLAGS_BASE) -o $@ $< $(B)/libtracebuf-read.a $(B)/libtracebuf.a $(LDLIBS_READ)

# examples/demo: the driver (plain) and its "application", examples/demo/app.c, the
# only file built with -finstrument-functions; the hooks come from libtracebuf-func.a,
# and the demo reads its own capture back with the reading side.  GCC instruments
# inline functions too, even inlined: the headers' (tracepoint.h's, libc's) are left
# out by path, and the emitters TB_EVENT defines (tb_trace_*, in demo.h) by name, so
# only app.c's own functions are traced.
DEMO_APP := $(B)/examples/demo-app.o
DEMO_INSTR_EXCLUDE := -finstrument-functions-exclude-file-list=include/tracebuf/,/usr/include/ \
	-finstrument-functions-exclude-function-list=tb_trace_
$(DEMO_APP): examples/demo/app.c examples/demo/demo.h Makefile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@ (instrumented)")
	$(Q)$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS_BASE) $(INSTR) $(DEMO_INSTR_EXCLUDE) -c -o $@ $<
# (two sources: their headers named here, not in a .d)
$(B)/examples/demo: examples/demo.c examples/demo/demo.h examples/demo/crash.c $(DEMO_APP) $(B)/libtracebuf-func.a \
		$(B)/libtracebuf-read.a $(B)/libtracebuf.a $(HEADERS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS_BASE) $(TEV_CFLAGS) -o $@ $< examples/demo/crash.c $(DEMO_APP) $(B)/libtracebuf-func.a \
		$(B)/libtracebuf-read.a $(B)/libtracebuf.a $(LDLIBS_READ)

tests: lib cli $(TESTS) $(TEST_PLUGIN) $(USDT_APP) $(EXAMPLES) $(B)/bench/merge_results

# What -MMD wrote: each target's headers, as the compiler read them; only this
# variant's (build/ holds build/asan and build/tsan too).
-include $(wildcard $(B)/obj*/*.d $(B)/obj*/*/*.d $(B)/tests/*.d $(B)/tests/*/*.d \
	$(B)/bench/*.d $(B)/examples/*.d)

deps:
	$(Q)scripts/deps.sh

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/run.sh

# ---------------------------------------------------------------- tests
# Tests run as many at a time as there are CPUs: each test makes its own
# scratch directories, tracefs instances and shm files (named by pid or
# mktemp), so two never share state, and the load they put on each other is
# the busy machine every test must pass on anyway.
NPROC := $(shell nproc 2>/dev/null || echo 2)
TEST_JOBS ?= $(NPROC)
PROVE := prove --exec '' -f --timer -j$(TEST_JOBS)

# The normal, ASan and TSan suites run once beside two CPU hogs (scripts/soak-tests.sh,
# tests/README.md): a test that depends on the machine's speed or load fails here.
# Everything is built first, on every CPU and without the hogs: the suites
# then only run.
test: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) test-build
	$(Q)scripts/soak-tests.sh 1
	$(Q)$(MAKE) --no-print-directory test-fuzz
	$(Q)$(MAKE) --no-print-directory test-model
	$(Q)$(MAKE) --no-print-directory test-install
	@echo "make test: all suites passed"

test-normal: tests check-symbols check-layout
	@echo "== tests (normal build)"
	$(Q)TB_BUILD=$(B) $(PROVE) $(TESTS) $(TEST_SCRIPTS)

# The three builds the suites run, each one make at -jN (make test runs this first).
test-build:
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) all tests
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) VARIANT=asan tests
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) VARIANT=tsan $(addprefix build/tsan/tests/,$(TSAN_TESTS))
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) -C fuzz all

test-asan:
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) VARIANT=asan tests
	@echo "== tests (AddressSanitizer + UBSan)"
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		TB_BUILD=build/asan $(PROVE) $(patsubst build/%,build/asan/%,$(TESTS)) $(TEST_SCRIPTS)

test-tsan:
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) VARIANT=tsan $(addprefix build/tsan/tests/,$(TSAN_TESTS))
	@echo "== concurrency tests (ThreadSanitizer)"
	$(Q)TSAN_OPTIONS=halt_on_error=1 TB_TORTURE_SIGNALS=0 \
		$(PROVE) $(addprefix build/tsan/tests/,$(TSAN_TESTS))

test-fuzz:
	$(Q)$(MAKE) --no-print-directory -C fuzz replay

test-model:
	$(Q)$(MAKE) --no-print-directory -C model check

# Install into a scratch DESTDIR and build the quickstart against it with pkg-config.
test-install: all
	@echo "== install (DESTDIR, pkg-config, shared library)"
	$(Q)rm -rf build/destdir && $(MAKE) --no-print-directory -s install DESTDIR=$(CURDIR)/build/destdir PREFIX=/usr >/dev/null
	$(Q)d=$(CURDIR)/build/destdir; \
	  PKG_CONFIG_SYSROOT_DIR=$$d PKG_CONFIG_LIBDIR=$$d/usr/lib/pkgconfig \
	  $(CC) -std=c17 -Wall -Werror -o build/quickstart-installed examples/quickstart.c \
	    $$(PKG_CONFIG_SYSROOT_DIR=$$d PKG_CONFIG_LIBDIR=$$d/usr/lib/pkgconfig pkg-config --cflags --libs tracebuf) -lpthread && \
	  LD_LIBRARY_PATH=$$d/usr/lib build/quickstart-installed >/dev/null && \
	  readelf -d $$d/usr/lib/libtracebuf.so.$(VERSION) | grep -q 'SONAME.*\[libtracebuf\.so\.$(SOMAJOR)\]' && \
	  test -f $$d/usr/share/man/man1/tracebuf.1 && test -x $$d/usr/bin/tracebuf && \
	  for c in $$($$d/usr/bin/tracebuf --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do \
	    test -s $$d/usr/share/man/man1/tracebuf-$$c.1 || { echo "install: no tracebuf-$$c.1"; exit 1; }; done && \
	  bash -n $$d/usr/share/bash-completion/completions/tracebuf && \
	  echo "install: headers, libtracebuf.so.$(SOMAJOR) (soname ok), pkg-config, CLI, man pages and bash completion; quickstart linked and ran"

# The suites RUNS times beside the hogs; each failure logged (build/soak/failures).
RUNS ?= 20
soak:
	$(Q)scripts/soak-tests.sh $(RUNS)

SECONDS ?= 60
stress: tests
	$(Q)TB_TORTURE_SECONDS=$(SECONDS) $(B)/tests/test_ring_torture

FUZZ_SECONDS ?= 60
fuzz:
	$(Q)$(MAKE) --no-print-directory -C fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS)

# FUZZ_SECONDS, FUZZ_RUNS and FUZZ_TARGETS as given reach fuzz/Makefile (through MAKEFLAGS),
# whose defaults apply otherwise: FUZZ_RUNS alone then bounds each target by executions only.
fuzz-long:
	$(Q)$(MAKE) --no-print-directory -C fuzz long

# The printer's bench runs the reading side beside libtraceevent.
$(B)/bench/bench_printfmt: BENCH_CFLAGS += $(TEV_CFLAGS) -Itests
$(B)/bench/bench_printfmt: BENCH_LIBS += $(B)/libtracebuf-read.a $(B)/libtracebuf.a $(LDLIBS_READ)
$(B)/bench/bench_printfmt: $(B)/libtracebuf-read.a tests/lib/records.h

# The LTTng-UST peer is linked in when its headers are installed.
HAVE_LTTNG := $(shell test -f /usr/include/x86_64-linux-gnu/lttng/tracepoint.h && echo 1)
ifeq ($(HAVE_LTTNG),1)
$(B)/bench/bench_write: BENCH_CFLAGS += -DHAVE_LTTNG -Ibench
$(B)/bench/bench_write: BENCH_LIBS += $(B)/bench/lttng_peer.o -llttng-ust -ldl
$(B)/bench/bench_write: $(B)/bench/lttng_peer.o
$(B)/bench/lttng_peer.o: bench/lttng_peer.c bench/tb_lttng_tp.h
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Ibench -c -o $@ $<
$(B)/bench/bench_sources: BENCH_CFLAGS += -DHAVE_LTTNG -Ibench
SOURCES_PEERS := $(B)/bench/sources_lttng_peer.o $(B)/bench/sources_lttng_tracef.o
$(B)/bench/bench_sources: BENCH_LIBS += $(SOURCES_PEERS) -llttng-ust -ldl
$(B)/bench/bench_sources: $(SOURCES_PEERS)
$(B)/bench/sources_lttng_%.o: bench/sources_lttng_%.c bench/tb_src_lttng_tp.h
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Ibench -c -o $@ $<
endif

# bench_sources' function entry/exit case: its traced function is instrumented.
$(B)/bench/bench_sources: BENCH_LIBS += $(B)/bench/sources_func.o $(B)/libtracebuf-func.a $(B)/libtracebuf.a
$(B)/bench/bench_sources: $(B)/bench/sources_func.o $(B)/libtracebuf-func.a
$(B)/bench/sources_func.o: bench/sources_func.c include/tracebuf/func.h Makefile
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS_BASE) $(INSTR) -c -o $@ $<

# bench_func: the measured functions are instrumented (the rest of the file is not).
$(B)/bench/bench_func: BENCH_CFLAGS += $(INSTR)
$(B)/bench/bench_func: BENCH_LIBS += $(B)/libtracebuf-func.a $(B)/libtracebuf.a
$(B)/bench/bench_func: $(B)/libtracebuf-func.a

# The benches' results-*.json as one checked list (scripts/bench.sh); libc only.
$(B)/bench/merge_results: bench/merge_results.c Makefile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(LINKDEP) $(CFLAGS_BASE) -o $@ $< -lm

bench: deps lib cli
	$(Q)scripts/bench-deps.sh
	$(Q)$(MAKE) --no-print-directory $(BENCHES) $(B)/bench/merge_results $(B)/examples/recorded $(USDT_APP)
	$(Q)scripts/bench.sh $(B)

# ---------------------------------------------------------------- install
install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/tracebuf \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 644 include/tracebuf/*.h $(DESTDIR)$(INCLUDEDIR)/tracebuf/
	install -m 644 $(B)/libtracebuf.a $(B)/libtracebuf-func.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(B)/libtracebuf.so $(DESTDIR)$(LIBDIR)/libtracebuf.so.$(VERSION)
	ln -sf libtracebuf.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtracebuf.so.$(SOMAJOR)
	ln -sf libtracebuf.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libtracebuf.so
	install -m 755 $(B)/tracebuf $(DESTDIR)$(BINDIR)/
	install -m 644 $(B)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 $(B)/completion/tracebuf $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tracebuf
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' tracebuf.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/tracebuf.pc

# Calls between src/ folders only run down the stages (scripts/check-layout.sh says which).
check-layout: $(B)/libtracebuf.a $(B)/libtracebuf-read.a $(B)/libtracebuf-func.a
	$(Q)scripts/check-layout.sh $(B)/obj

# Only tb_ symbols may leave the shared library.
check-symbols: $(B)/libtracebuf.so
	$(Q)if nm -D --defined-only $< | awk '$$2 ~ /[TDBRW]/ {print $$3}' | grep -v -E '^tb_[a-z]'; then \
		echo "check-symbols: the symbols above leak from libtracebuf.so"; exit 1; fi
	$(Q)if ldd $< | grep '=>' | grep -v -E 'libc[.]so|ld-linux'; then \
		echo "check-symbols: libtracebuf.so must depend on libc alone"; exit 1; fi
	$(Q)for f in tb_write tb_reserve tb_commit tb_ring_new tb_consume tb_read_page tb_iter_next tb_page_next \
		tb_blob_write tb_blob_reserve tb_blob_commit tb_blob_resolve; do \
		nm -D --defined-only $< | grep -q " T $$f@@" || { echo "check-symbols: $$f is not exported"; exit 1; }; done
	@echo "check-symbols: the tb_ API is exported and nothing else; libc is the only dependency"

format:
	clang-format -i src/*/*.c src/*.h src/*/*.h include/tracebuf/*.h tools/*.c tests/*.c bench/*.c

clean:
	rm -rf build
	$(MAKE) -C fuzz clean
