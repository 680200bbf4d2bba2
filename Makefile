# fdl: libfdl (shared and static) + the fdl CLI, C17, warnings as errors.
#   make setup    install dependencies (scripts/setup.sh) and build
#   make          build build/fdl, build/libfdl.so, the page and the manual pages
#   make test     unit tests (ASan + UBSan), the ABI and docs checks, the install
#                 test, and interop tests (pytest, stock DuckDB), after installing
#                 what only the tests need (scripts/setup.sh --tests); what CI runs
#   make check    the inner loop, about half a minute once built: unit tests and the interop
#                 tests marked quick (one per behaviour family), at once
#   make demo     set up, build, and run the example in examples/
#   make wheel    build/wheel/pyfdl-VERSION-py3-none-manylinux_2_35_x86_64.whl
#   make dist     build/dist/fdl-VERSION-linux-x86_64.tar.gz, runs wherever unpacked
#   make install PREFIX=/usr/local   (make uninstall removes exactly that)
CC      ?= cc
DEPS    := $(CURDIR)/deps
EXTDIR  ?= $(DEPS)/extensions
WARN    := -std=c17 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2
CPPFLAGS:= -D_GNU_SOURCE -Iinclude -isystem $(DEPS)/include -isystem /usr/include/libxml2 \
           -DFDL_DEFAULT_EXTENSION_DIR='"$(EXTDIR)"' -DFDL_DEFAULT_DUCKDB_LIBRARY='"$(DEPS)/lib/libduckdb.so"' -DFDL_DEFAULT_WEB_DIR='"$(CURDIR)/build/web"'
CFLAGS  ?= -O2 -g
# libduckdb is not linked: src/catalog/duckapi.c loads it when a command
# first opens DuckDB, found on this run path.
# libcurl, libxml2 and libmicrohttpd are not linked either: src/util/dynlib.h
# loads each when a command first needs it. The unit tests link libcurl to
# ask it whether it is thread safe.
LDLIBS  := -Wl,-rpath,$(DEPS)/lib -ljansson -lyaml -lcrypto -lpthread -ldl
VERSION := $(shell sed -n 's/^\#define FDL_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' include/fdl.h | paste -sd.)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME  := libfdl.so.$(SOMAJOR)
SAN     := -DFDL_CRASH_POINTS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC := $(wildcard src/util/*.c src/store/*.c src/layout/*.c src/catalog/*.c src/iceberg/*.c src/site/*.c src/serve/*.c src/ops/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
UNIT_SRC:= $(wildcard tests/unit/*.c)
HDRS    := $(wildcard include/*.h src/*/*.h)


.PHONY: test-repeat test-races quick
.PHONY: all setup test check unit interop snippets corpus fuzz demo clean web install uninstall man abi-check docs-check bench bench-quick \
	readme install-check bindings-test
all: build/fdl build/libfdl.so build/libfdl.a web man

# --- the repository page (web/): esbuild bundles it with DuckDB-Wasm ---------
WEB_OUT  := build/web
WASM_DIST:= web/node_modules/@duckdb/duckdb-wasm/dist
WASM_FILES := duckdb-mvp.wasm duckdb-eh.wasm duckdb-browser-mvp.worker.js duckdb-browser-eh.worker.js
web: $(WEB_OUT)/index.html $(WEB_OUT)/_fdl/app.js $(WEB_OUT)/_fdl/style.css $(WEB_OUT)/_fdl/duckdb/duckdb.js \
  $(WASM_FILES:%=$(WEB_OUT)/_fdl/duckdb/%)

$(WEB_OUT)/index.html: web/index.html
	@mkdir -p $(dir $@) && cp $< $@
$(WEB_OUT)/_fdl/style.css: web/style.css
	@mkdir -p $(dir $@) && cp $< $@
# app.js paints a version from its files and preview; DuckDB-Wasm's module
# (with the reading of its answers) is a second bundle, imported on the
# first query (web/src/duckdb.js)
$(WEB_OUT)/_fdl/app.js: web/src/app.js web/src/reading.js | web-deps-check
	@mkdir -p $(dir $@)
	@echo "  ESBUILD $<"
	@web/node_modules/.bin/esbuild $< --bundle --format=esm --minify --sourcemap --target=es2020 \
	  --external:./duckdb/duckdb.js --log-level=warning --outfile=$@
$(WEB_OUT)/_fdl/duckdb/duckdb.js: web/src/duckdb.js web/src/text.js | web-deps-check
	@mkdir -p $(dir $@)
	@echo "  ESBUILD $<"
	@web/node_modules/.bin/esbuild $< --bundle --format=esm --minify --sourcemap --target=es2020 \
	  --log-level=warning --outfile=$@
$(WEB_OUT)/_fdl/duckdb/%: | web-deps-check
	@mkdir -p $(dir $@) && cp $(WASM_DIST)/$* $@

web-deps-check:
	@test -x web/node_modules/.bin/esbuild -a -d $(WASM_DIST) || \
	  { echo "web/node_modules is missing: run 'make setup' first" >&2; exit 1; }

# --- install ------------------------------------------------------------------
# `make install PREFIX=/usr/local`: the CLI, libfdl (shared, with its soname,
# and static), fdl.h, fdl.pc, libduckdb and the DuckDB extensions fdl loads
# (in lib/fdl/), the page, the manual pages and shell completion.
PREFIX ?= /usr/local
DEST    = $(DESTDIR)$(PREFIX)
EXT_VER := $(notdir $(wildcard $(EXTDIR)/v*))
INSTALLED = bin/fdl lib/libfdl.so.$(VERSION) lib/$(SONAME) lib/libfdl.so lib/libfdl.a include/fdl.h \
	lib/pkgconfig/fdl.pc share/bash-completion/completions/fdl share/zsh/site-functions/_fdl \
	share/man/man1/fdl.1 share/doc/fdl/format.md
install: all
	install -d $(DEST)/bin $(DEST)/lib/pkgconfig $(DEST)/lib/fdl $(DEST)/include $(DEST)/share/fdl $(DEST)/share/doc/fdl \
	  $(DEST)/share/man/man1 $(DEST)/share/bash-completion/completions $(DEST)/share/zsh/site-functions
	install -m 755 build/fdl $(DEST)/bin/fdl
	install -m 755 build/libfdl.so.$(VERSION) $(DEST)/lib/libfdl.so.$(VERSION)
	ln -sf libfdl.so.$(VERSION) $(DEST)/lib/$(SONAME)
	ln -sf $(SONAME) $(DEST)/lib/libfdl.so
	install -m 644 build/libfdl.a $(DEST)/lib/libfdl.a
	install -m 644 include/fdl.h $(DEST)/include/fdl.h
	install -m 644 docs/format.md $(DEST)/share/doc/fdl/format.md
	install -m 755 $(DEPS)/lib/libduckdb.so $(DEST)/lib/fdl/libduckdb.so
	rm -rf $(DEST)/lib/fdl/extensions && cp -r $(EXTDIR) $(DEST)/lib/fdl/extensions
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' scripts/fdl.pc.in > $(DEST)/lib/pkgconfig/fdl.pc
	install -m 644 build/man/*.1 $(DEST)/share/man/man1/
	install -m 644 scripts/completion/fdl.bash $(DEST)/share/bash-completion/completions/fdl
	install -m 644 scripts/completion/_fdl $(DEST)/share/zsh/site-functions/_fdl
	rm -rf $(DEST)/share/fdl/web && cp -r $(WEB_OUT) $(DEST)/share/fdl/web

uninstall:
	@test -x $(DEST)/bin/fdl && for c in $$($(DEST)/bin/fdl help --commands); do \
	  rm -f $(DEST)/share/man/man1/fdl-$$c.1; done; true
	rm -f $(INSTALLED:%=$(DEST)/%)
	rm -rf $(DEST)/lib/fdl $(DEST)/share/fdl
	-rmdir $(DEST)/share/doc/fdl 2>/dev/null

setup:
	bash scripts/setup.sh
	$(MAKE) all

# --- release build -----------------------------------------------------------
# The library's objects are position-independent and hide every symbol
# fdl.h does not mark FDL_EXTERN; the CLI links the shared library, so it
# can only use what fdl.h exports.
build/obj/%.o: %.c $(HDRS) Makefile | deps-check
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

build/libfdl.a: $(LIB_SRC:%.c=build/obj/%.o)
	@rm -f $@ && ar rcs $@ $^

build/libfdl.so.$(VERSION): $(LIB_SRC:%.c=build/obj/%.o)
	@echo "  LD      $@"
	@$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -o $@ $^ $(LDLIBS) \
	  -Wl,-rpath,'$$ORIGIN/fdl'

build/$(SONAME) build/libfdl.so: build/libfdl.so.$(VERSION)
	@ln -sf libfdl.so.$(VERSION) $@

build/fdl: $(CLI_SRC:%.c=build/obj/%.o) build/$(SONAME) build/libfdl.so
	$(CC) $(CFLAGS) -o $@ $(CLI_SRC:%.c=build/obj/%.o) -Lbuild -lfdl -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib'

# --- manual pages, README's command section, the ABI -------------------------
# One source: each command's cli_doc and options in src/cli/cmd_<name>.c make
# its --help, its manual page and its section of README.
man: build/man/.stamp
build/man/.stamp: build/fdl
	@rm -rf build/man && mkdir -p build/man
	@build/fdl help --man > build/man/fdl.1
	@for c in $$(build/fdl help --commands); do build/fdl $$c --help=man > build/man/fdl-$$c.1 || exit 1; done
	@touch $@

# README between the markers is made by `make readme`; docs-check fails when
# it is stale, when a manual page does not render, when libfdl's source
# (src/ outside src/cli/) names an FDL_* environment variable that neither
# include/fdl.h nor docs/ (docs/environment.md) names, and when code crosses
# a wall docs/architecture.md draws (scripts/walls-check.sh lists where).
readme: build/fdl
	bash scripts/readme-commands.sh build/fdl README.md
docs-check: build/fdl man
	bash scripts/readme-commands.sh build/fdl README.md --check
	@for p in build/man/*.1; do MANWIDTH=80 man -l $$p > /dev/null 2> build/man/.err || \
	  { echo "$$p does not render:" >&2; cat build/man/.err >&2; exit 1; }; \
	  test ! -s build/man/.err || { echo "$$p: man warns:" >&2; cat build/man/.err >&2; exit 1; }; done
	@! grep -l '`' build/man/*.1 || { echo "docs-check: literal backticks in the manual pages above" >&2; exit 1; }
	@vars=$$(grep -hoE '"FDL_[A-Z0-9_]+"' $(LIB_SRC) | tr -d '"' | sort -u); \
	  missing=$$(for v in $$vars; do grep -qw "$$v" include/fdl.h docs/*.md || echo "$$v"; done); \
	  test -z "$$missing" || { echo "docs-check: libfdl reads" $$missing "but neither include/fdl.h nor docs/ names it" \
	    "(add it to docs/environment.md)" >&2; exit 1; }; \
	  echo "docs-check: the $$(echo $$vars | wc -w) FDL_* variables libfdl reads are named in docs/"
	@echo "docs-check: README is current, $$(ls build/man/*.1 | wc -l) manual pages render, no literal backticks"
	@missing=$$(for f in tests/unit/test_*.c tests/interop/test_*.py; do \
	  grep -q "^| \`$$(basename $$f)\` |" tests/README.md || echo "$$f"; done); \
	  test -z "$$missing" || { echo "docs-check: tests/README.md has no row for" $$missing >&2; exit 1; }; \
	  echo "docs-check: tests/README.md has a row for each of the $$(ls tests/unit/test_*.c tests/interop/test_*.py | wc -l) test files"
	@$(DEPS)/venv/bin/python -m pytest -q -p no:cacheprovider tests/interop/test_snippets.py -k test_every_page_covered \
	  > build/.snippets-covered 2>&1 || { cat build/.snippets-covered >&2; exit 1; }; \
	  echo "docs-check: every fence names its language, every page with a block that runs has its test (test_snippets.py)"
	@bash scripts/walls-check.sh

# Every symbol libfdl.so exports is listed in abi/libfdl.symbols, and every
# listed one is exported: an unintended export or a removed symbol fails.
# Every global symbol of libfdl.a starts with fdl_ (internal ones fdl__,
# the loaded libraries' forwards fdl_lazy_*): a program that links it
# statically keeps its own names. Every options struct of fdl.h starts with
# its version field and has its _INIT, checked by the library
# (scripts/options-check.sh).
abi-check: build/libfdl.so.$(VERSION) build/libfdl.a
	@nm -D --defined-only $< | awk '$$2 ~ /^[TDRBWV]$$/ {print $$3}' | sort > build/abi.symbols
	@diff -u abi/libfdl.symbols build/abi.symbols || \
	  { echo "abi-check: the exports differ from abi/libfdl.symbols (- listed, + exported)" >&2; exit 1; }
	@bad=$$(nm -g --defined-only build/libfdl.a | awk 'NF == 3 && $$3 !~ /^fdl_/ {print $$3}' | sort -u); \
	  test -z "$$bad" || { echo "abi-check: global symbols of libfdl.a without the fdl_ prefix (a static link" \
	    "would collide with a program's own; name an internal one fdl__NAME):" $$bad >&2; exit 1; }
	@echo "abi-check: $$(wc -l < build/abi.symbols) exported symbols, as listed; every global symbol of libfdl.a starts with fdl_"
	@bash scripts/options-check.sh

# Install into a fresh prefix, build the examples with nothing but
# pkg-config, run them, run the Python binding's tests, uninstall.
install-check: all
	bash scripts/install-check.sh

# --- sanitizer build (tests) -------------------------------------------------
build/san/%.o: %.c $(HDRS) | deps-check
	@mkdir -p $(dir $@)
	@echo "  CC san  $<"
	@$(CC) $(WARN) $(CPPFLAGS) -O1 -g $(SAN) -c $< -o $@

build/san/libfdl.a: $(LIB_SRC:%.c=build/san/%.o)
	@rm -f $@ && ar rcs $@ $^

build/san/fdl: $(CLI_SRC:%.c=build/san/%.o) build/san/libfdl.a
	$(CC) $(SAN) -o $@ $^ $(LDLIBS)

build/san/unit-tests: $(UNIT_SRC:%.c=build/san/%.o) build/san/libfdl.a
	$(CC) $(SAN) -o $@ $^ $(LDLIBS) -lcurl

deps-check:
	@test -f $(DEPS)/include/duckdb.h -a -f $(DEPS)/lib/libduckdb.so || \
	  { echo "deps/ is missing: run 'make setup' first" >&2; exit 1; }

# --- fuzz targets ----------------------------------------------------------------
# One target per parser of bytes a user, a host or a repository hands fdl
# (tests/fuzz/fuzz_<target>.c). `make corpus` replays every input kept in
# tests/corpus/<target>/ through the sanitizer build (part of `make test`,
# which also builds each libFuzzer binary, so neither can rot unseen);
# `make fuzz` runs libFuzzer (clang, installed by scripts/setup.sh --tests)
# on each target for FUZZ_SECONDS (FUZZ_TARGETS="a b" for some only), and
# `make fuzz-long` each for FUZZ_LONG_SECONDS (an hour) in turn; both merge
# into tests/corpus/<target>/ only the inputs that reach new coverage
# (scripts/fuzz.sh), and stop at the first crash, leak or sanitizer report.
FUZZ_TARGETS := version config ref dataset records http ini cli \
	hindex_pointer hindex_pack reflist s3xml views namespaces icemeta work hashes preview
CLANG        ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_LONG_SECONDS ?= 3600
FUZZ_SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer

build/san/fuzz-%: tests/fuzz/fuzz_%.c tests/fuzz/driver.c tests/fuzz/fuzz.h build/san/libfdl.a
	@echo "  LD san  $@"
	@$(CC) $(WARN) $(CPPFLAGS) -O1 -g $(SAN) -o $@ $(filter %.c %.a,$^) $(LDLIBS)

# the CLI's option parser lives outside libfdl
build/san/fuzz-cli: tests/fuzz/fuzz_cli.c tests/fuzz/driver.c src/cli/options.c build/san/libfdl.a
	@echo "  LD san  $@"
	@$(CC) $(WARN) $(CPPFLAGS) -O1 -g $(SAN) -o $@ $^ $(LDLIBS)

corpus: $(FUZZ_TARGETS:%=build/san/fuzz-%)
	@for t in $(FUZZ_TARGETS); do ASAN_OPTIONS=detect_leaks=1 ./build/san/fuzz-$$t tests/corpus/$$t || exit 1; done

# fuzz_tree DIR OPT: clang's objects, libfdl.a and every libFuzzer binary
# under DIR, compiled with OPT: build/fuzz at -O1 for fuzzing (make fuzz);
# build/fuzz-check at -O0 for make test, which only builds them (clang's
# warnings and the fuzzers' links) and replays the corpus through the
# sanitizer build: less than half the compile time
define fuzz_tree
$(1)/%.o: %.c $$(HDRS) | deps-check setup-tests
	@mkdir -p $$(dir $$@)
	@echo "  CC fuzz $$<"
	@$$(CLANG) $$(WARN) $$(CPPFLAGS) $(2) -g -fsanitize=fuzzer-no-link $$(FUZZ_SAN) -c $$< -o $$@

$(1)/libfdl.a: $$(LIB_SRC:%.c=$(1)/%.o)
	@rm -f $$@ && ar rcs $$@ $$^

$(1)/fuzz-%: $(1)/tests/fuzz/fuzz_%.o $(1)/libfdl.a
	@echo "  LD fuzz $$@"
	@$$(CLANG) -fsanitize=fuzzer $$(FUZZ_SAN) -o $$@ $$^ $$(LDLIBS)

$(1)/fuzz-cli: $(1)/tests/fuzz/fuzz_cli.o $(1)/src/cli/options.o $(1)/libfdl.a
	@echo "  LD fuzz $$@"
	@$$(CLANG) -fsanitize=fuzzer $$(FUZZ_SAN) -o $$@ $$^ $$(LDLIBS)
endef
$(eval $(call fuzz_tree,build/fuzz,-O1))
$(eval $(call fuzz_tree,build/fuzz-check,-O0))

# every libFuzzer binary, built: for make fuzz (-O1), and for make test
# (fuzz-check, -O0: clang's warnings are not gcc's)
.PHONY: fuzz-build fuzz-check fuzz-long fuzz-min
fuzz-build: $(FUZZ_TARGETS:%=build/fuzz/fuzz-%)
fuzz-check: $(FUZZ_TARGETS:%=build/fuzz-check/fuzz-%)

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do bash scripts/fuzz.sh $$t $(FUZZ_SECONDS) || exit 1; done

fuzz-long: fuzz-build
	@for t in $(FUZZ_TARGETS); do bash scripts/fuzz.sh $$t $(FUZZ_LONG_SECONDS) || exit 1; done

# before committing what fuzz found: each corpus down to its named seeds and
# the fewest inputs that reach the same coverage
fuzz-min: fuzz-build
	@for t in $(FUZZ_TARGETS); do bash scripts/fuzz.sh $$t min || exit 1; done

# --- tests ---------------------------------------------------------------------
# UNIT_JOBS: the unit tests' worker processes (tests/unit/main.c: each
# takes the next case, output printed whole in order, each worker's leaks
# checked at its exit); 1 runs them in one process, as a debugger wants.
UNIT_JOBS ?= 2
unit: build/san/unit-tests
	ASAN_OPTIONS=detect_leaks=1 ./build/san/unit-tests -j $(UNIT_JOBS)

# WORKERS: pytest workers of make interop and make check (two, for CI's two
# cores; `make interop WORKERS=3` tries a third where the tests wait on I/O)
WORKERS ?= 2
interop: build/san/fdl build/fdl web build/bench/sqlrun
	FDL_BIN=$(CURDIR)/build/san/fdl FDL_EXTENSION_DIR=$(EXTDIR) \
	  $(DEPS)/venv/bin/python -m pytest -q -n $(WORKERS) --dist loadfile --junitxml=build/interop.xml tests/interop

# make test: first everything it runs, built JOBS at a time (two, CI's two
# cores), setup-tests among them (scripts/setup.sh --tests mostly waits on
# the disk while the sanitizer and fuzz builds compile; clang's objects wait
# for it); -Otarget prints each job's output whole, never interleaved. Then
# the checks, JOBS at a time, the longest first (install-check, about a
# minute and a half on one core, beside the unit tests' two workers, then
# the corpus, the ABI and the docs checks); a failure stops the run before
# the interop suite, which runs last, alone.
JOBS ?= 2
TEST_BUILDS := setup-tests build/san/unit-tests build/san/fdl $(FUZZ_TARGETS:%=build/san/fuzz-%) \
	$(FUZZ_TARGETS:%=build/fuzz-check/fuzz-%) all build/bench/sqlrun
TEST_CHECKS := install-check unit corpus fuzz-check abi-check docs-check
test:
	@$(MAKE) --no-print-directory -j$(JOBS) -Otarget $(TEST_BUILDS)
	@$(MAKE) --no-print-directory -j$(JOBS) -Otarget $(TEST_CHECKS)
	@$(MAKE) --no-print-directory interop

# `make check`: the inner loop, about half a minute on two cores once built: the unit
# tests and the interop tests marked quick, one per behaviour family
# (reader, writer, refs, clone, page, Iceberg, rebase, lifecycle, crash;
# `make quick` alone). What they run is built first, JOBS at a time; then
# the two run at once (the unit tests' two workers beside two pytest
# workers, which mostly wait on the processes they start), each one's
# output printed whole when it ends. `make test` stays what CI runs,
# before a merge.
CHECK_BUILDS := build/san/unit-tests build/san/fdl build/fdl web
check:
	@$(MAKE) --no-print-directory -j$(JOBS) -Otarget $(CHECK_BUILDS)
	@$(MAKE) --no-print-directory -j2 -Otarget unit quick
quick: build/san/fdl build/fdl web
	FDL_BIN=$(CURDIR)/build/san/fdl FDL_EXTENSION_DIR=$(EXTDIR) \
	  $(DEPS)/venv/bin/python -m pytest -q -n $(WORKERS) --dist loadfile -m quick tests/interop

# `make snippets`: tests/interop/test_snippets.py alone, every block of README,
# docs/ and bindings/python/README.md that a user runs, run as written, and
# what fdl prints for a user to paste (part of interop; -k NAME narrows it).
snippets: build/san/fdl build/fdl build/libfdl.so web
	FDL_BIN=$(CURDIR)/build/san/fdl FDL_EXTENSION_DIR=$(EXTDIR) \
	  $(DEPS)/venv/bin/python -m pytest -q -n 2 --dist load tests/interop/test_snippets.py $(if $(K),-k "$(K)")

# `make test-repeat N=5`: make test's suites N times in a row, stopping at
# the first red run (a test that passes only on a fast machine shows here).
# `make test-races N=3`: the tests that race processes (concurrency, crash
# points, locks, the history index, PostgreSQL teams, the server, rebase) N times in
# a row on one core.
N ?= 5
RACE_TESTS := tests/interop/test_concurrency.py tests/interop/test_crash.py tests/interop/test_locks.py tests/interop/test_hindex.py \
	tests/interop/test_postgres.py tests/interop/test_reader.py tests/interop/test_clone.py tests/interop/test_refs.py \
	tests/interop/test_rebase.py
test-repeat:
	@for i in $$(seq 1 $(N)); do echo "== test-repeat: run $$i of $(N)"; \
	  $(MAKE) --no-print-directory test || { echo "test-repeat: run $$i of $(N) failed" >&2; exit 1; }; \
	done; echo "test-repeat: $(N) of $(N) runs passed"
test-races: build/san/fdl build/fdl
	@for i in $$(seq 1 $(N)); do echo "== test-races: run $$i of $(N), one core (taskset -c 0)"; \
	  FDL_BIN=$(CURDIR)/build/san/fdl FDL_EXTENSION_DIR=$(EXTDIR) taskset -c 0 \
	    $(DEPS)/venv/bin/python -m pytest -q -p no:xdist $(RACE_TESTS) || \
	    { echo "test-races: run $$i of $(N) failed" >&2; exit 1; }; \
	done; echo "test-races: $(N) of $(N) runs passed on one core"

demo: setup
	bash examples/demo.sh

# --- the benchmark (bench/run.py): fdl against its peers, same run ----------
build/bench/sqlrun: bench/sqlrun.c | deps-check
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -O2 -Wall -Wextra -Wno-deprecated-declarations -isystem $(DEPS)/include -o $@ $< \
	  -L$(DEPS)/lib -lduckdb -Wl,-rpath,$(DEPS)/lib
bench: build/fdl build/bench/sqlrun
	bash scripts/setup-bench.sh
	$(DEPS)/venv/bin/python bench/run.py
bench-quick: build/fdl build/bench/sqlrun
	bash scripts/setup-bench.sh
	$(DEPS)/venv/bin/python bench/run.py --quick

clean:
	rm -rf build

# --- packages: the relocatable tarball (make dist) and the wheel (make wheel) --
# One tree for both, build/dist/fdl-VERSION-linux-x86_64/ (scripts/package.py
# stage): bin/fdl, lib/libfdl.so.2, lib/fdl/ (libduckdb, the extensions, the
# libraries libfdl opens with dlopen and every C library they need beyond the
# C runtime), share/ (the page, manual pages, licences), each found through
# $ORIGIN. libfdl and the CLI are linked again for it from the release
# objects, but for the three files that name a path of this clone
# (DIST_PATHS), compiled without it. `make dist` tars the tree;
# `make wheel` puts it in pyfdl's wheel (build/wheel/), tagged with the
# manylinux policy auditwheel finds. docs/packaging.md says why.
DIST_NAME  := fdl-$(VERSION)-linux-x86_64
DIST       := build/dist/$(DIST_NAME)
DIST_PATHS := src/catalog/duck.c src/catalog/duckapi.c src/cli/cmd_serve.c
DIST_OBJ    = $(foreach s,$(1),$(if $(filter $(s),$(DIST_PATHS)),build/dist/obj/$(s:.c=.o),build/obj/$(s:.c=.o)))
DIST_WEB   := $(WEB_OUT)/index.html $(WEB_OUT)/_fdl/app.js $(WEB_OUT)/_fdl/style.css $(WEB_OUT)/_fdl/duckdb/duckdb.js \
  $(WASM_FILES:%=$(WEB_OUT)/_fdl/duckdb/%)
LAZY_LIBS  := $(shell grep -ho 'FDL_DYNLIB."[^"]*"' $(LIB_SRC) | cut -d'"' -f2)
DUCKDB_PIN := duckdb==$(patsubst v%,%,$(EXT_VER))
WHEEL_TOOLS ?= $(DEPS)/venv/bin
# glibc 2.35 and GCC 12's libstdc++ (GLIBCXX_3.4.30, for ICU under libxml2):
# Debian 12, Ubuntu 22.04, Fedora 37, RHEL 10 and later. auditwheel must agree.
WHEEL_POLICY := manylinux_2_35_x86_64
.PHONY: dist wheel

build/dist/obj/%.o: %.c $(HDRS) Makefile | deps-check
	@mkdir -p $(dir $@)
	@echo "  CC dist $<"
	@$(CC) $(WARN) $(filter-out -DFDL_DEFAULT_%,$(CPPFLAGS)) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

build/dist/libfdl.so.$(VERSION): $(call DIST_OBJ,$(LIB_SRC))
	@echo "  LD dist $@"
	@$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -o $@ $^ $(filter -l%,$(LDLIBS))

build/dist/fdl: $(call DIST_OBJ,$(CLI_SRC)) build/dist/libfdl.so.$(VERSION)
	@echo "  LD dist $@"
	@$(CC) $(CFLAGS) -o $@ $^ -Wl,-rpath,'$$ORIGIN/../lib'

build/dist/.staged: build/dist/fdl build/dist/libfdl.so.$(VERSION) $(DIST_WEB) build/man/.stamp scripts/package.py \
		include/fdl.h docs/format.md
	@echo "  STAGE   $(DIST)"
	@PATH="$(WHEEL_TOOLS):$$PATH" $(WHEEL_TOOLS)/python scripts/package.py stage $(DIST) \
	  --cli build/dist/fdl --lib build/dist/libfdl.so.$(VERSION) --duckdb $(DEPS)/lib/libduckdb.so \
	  --extensions $(EXTDIR) --lazy "$(LAZY_LIBS)" --web $(WEB_OUT) --man build/man --header include/fdl.h \
	  --doc docs/format.md --doc README.md $(if $(wildcard $(DEPS)/lib/LICENSE.duckdb),--duckdb-license $(DEPS)/lib/LICENSE.duckdb)
	@touch $@

dist: build/dist/$(DIST_NAME).tar.gz
build/dist/$(DIST_NAME).tar.gz: build/dist/.staged
	@$(WHEEL_TOOLS)/python scripts/package.py tarball $(DIST) $@

wheel: build/wheel/.made
build/wheel/.made: build/dist/.staged $(wildcard bindings/python/pyfdl/*) bindings/python/pyproject.toml bindings/python/README.md
	@PATH="$(WHEEL_TOOLS):$$PATH" $(WHEEL_TOOLS)/python scripts/package.py wheel $(DIST) build/wheel \
	  --binding bindings/python --requires "$(DUCKDB_PIN)" --auditwheel $(WHEEL_TOOLS)/auditwheel --policy $(WHEEL_POLICY)
	@touch $@

# What only the tests need (scripts/setup.sh --tests: PostgreSQL, Chromium,
# the JDK, Spark's jars, the Iceberg readers, pytest, moto, dbt, dlt; at once
# when it is in place), before the targets that use it.
.PHONY: setup-tests
setup-tests:
	@bash scripts/setup.sh --tests
docs-check install-check interop check quick snippets test-races: | setup-tests
