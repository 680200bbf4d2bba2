# fdl: libfdl (static library) + the fdl CLI, C17, warnings as errors.
#   make setup    install dependencies (scripts/setup.sh) and build
#   make          build build/fdl
#   make test     unit tests (ASan + UBSan) and interop tests (pytest, stock DuckDB)
#   make demo     set up, build, and run the example in examples/
CC      ?= cc
DEPS    := $(CURDIR)/deps
EXTDIR  ?= $(DEPS)/extensions
WARN    := -std=c17 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2
CPPFLAGS:= -D_GNU_SOURCE -Iinclude -isystem $(DEPS)/include -isystem /usr/include/libxml2 \
           -DFDL_DEFAULT_EXTENSION_DIR='"$(EXTDIR)"' -DFDL_DEFAULT_WEB_DIR='"$(CURDIR)/build/web"'
CFLAGS  ?= -O2 -g
LDLIBS  := -L$(DEPS)/lib -lduckdb -Wl,-rpath,$(DEPS)/lib -ljansson -lyaml -lcurl -lxml2 -lmicrohttpd -lcrypto -lpthread
SAN     := -DFDL_CRASH_POINTS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC := $(wildcard src/util/*.c src/store/*.c src/layout/*.c src/catalog/*.c src/serve/*.c src/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
UNIT_SRC:= $(wildcard tests/unit/*.c)
HDRS    := $(wildcard include/*.h src/*.h src/*/*.h)

.PHONY: all setup test unit interop corpus fuzz demo clean web install
all: build/fdl web

# --- the repository page (web/): esbuild bundles it with DuckDB-Wasm ---------
WEB_OUT  := build/web
WASM_DIST:= web/node_modules/@duckdb/duckdb-wasm/dist
WASM_FILES := duckdb-mvp.wasm duckdb-eh.wasm duckdb-browser-mvp.worker.js duckdb-browser-eh.worker.js
web: $(WEB_OUT)/index.html $(WEB_OUT)/_fdl/app.js $(WEB_OUT)/_fdl/style.css $(WASM_FILES:%=$(WEB_OUT)/_fdl/duckdb/%)

$(WEB_OUT)/index.html: web/index.html
	@mkdir -p $(dir $@) && cp $< $@
$(WEB_OUT)/_fdl/style.css: web/style.css
	@mkdir -p $(dir $@) && cp $< $@
$(WEB_OUT)/_fdl/app.js: web/src/app.js | web-deps-check
	@mkdir -p $(dir $@)
	@echo "  ESBUILD $<"
	@web/node_modules/.bin/esbuild $< --bundle --format=esm --minify --sourcemap --target=es2020 \
	  --log-level=warning --outfile=$@
$(WEB_OUT)/_fdl/duckdb/%: | web-deps-check
	@mkdir -p $(dir $@) && cp $(WASM_DIST)/$* $@

web-deps-check:
	@test -x web/node_modules/.bin/esbuild -a -d $(WASM_DIST) || \
	  { echo "web/node_modules is missing: run 'make setup' first" >&2; exit 1; }

# `make install PREFIX=/usr/local`: the binary, and the page beside it in
# $(PREFIX)/share/fdl/web, where fdl serve looks first.
PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/fdl
	install -m 755 build/fdl $(DESTDIR)$(PREFIX)/bin/fdl
	rm -rf $(DESTDIR)$(PREFIX)/share/fdl/web && cp -r $(WEB_OUT) $(DESTDIR)$(PREFIX)/share/fdl/web

setup:
	bash scripts/setup.sh
	$(MAKE) all

# --- release build -----------------------------------------------------------
build/obj/%.o: %.c $(HDRS) | deps-check
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(WARN) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/libfdl.a: $(LIB_SRC:%.c=build/obj/%.o)
	@ar rcs $@ $^

build/fdl: $(CLI_SRC:%.c=build/obj/%.o) build/libfdl.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# --- sanitizer build (tests) -------------------------------------------------
build/san/%.o: %.c $(HDRS) | deps-check
	@mkdir -p $(dir $@)
	@echo "  CC san  $<"
	@$(CC) $(WARN) $(CPPFLAGS) -O1 -g $(SAN) -c $< -o $@

build/san/libfdl.a: $(LIB_SRC:%.c=build/san/%.o)
	@ar rcs $@ $^

build/san/fdl: $(CLI_SRC:%.c=build/san/%.o) build/san/libfdl.a
	$(CC) $(SAN) -o $@ $^ $(LDLIBS)

build/san/unit-tests: $(UNIT_SRC:%.c=build/san/%.o) build/san/libfdl.a
	$(CC) $(SAN) -o $@ $^ $(LDLIBS)

deps-check:
	@test -f $(DEPS)/include/duckdb.h -a -f $(DEPS)/lib/libduckdb.so || \
	  { echo "deps/ is missing: run 'make setup' first" >&2; exit 1; }

# --- fuzz targets ----------------------------------------------------------------
# `make corpus` replays every input kept in tests/corpus/<target>/ through the
# sanitizer build (part of `make test`); `make fuzz` runs libFuzzer (clang)
# on each target for FUZZ_SECONDS and adds what it finds to the corpus.
FUZZ_TARGETS := version config ref dataset records http ini cli
CLANG        ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer

build/san/fuzz-%: tests/fuzz/fuzz_%.c tests/fuzz/driver.c build/san/libfdl.a
	@echo "  LD san  $@"
	@$(CC) $(WARN) $(CPPFLAGS) -O1 -g $(SAN) -o $@ $^ $(LDLIBS)

# the CLI's option parser lives outside libfdl
build/san/fuzz-cli: tests/fuzz/fuzz_cli.c tests/fuzz/driver.c src/cli/options.c build/san/libfdl.a
	@echo "  LD san  $@"
	@$(CC) $(WARN) $(CPPFLAGS) -O1 -g $(SAN) -o $@ $^ $(LDLIBS)

corpus: $(FUZZ_TARGETS:%=build/san/fuzz-%)
	@for t in $(FUZZ_TARGETS); do ASAN_OPTIONS=detect_leaks=1 ./build/san/fuzz-$$t tests/corpus/$$t || exit 1; done

build/fuzz/%.o: %.c $(HDRS) | deps-check
	@mkdir -p $(dir $@)
	@echo "  CC fuzz $<"
	@$(CLANG) $(WARN) $(CPPFLAGS) -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c $< -o $@

build/fuzz/libfdl.a: $(LIB_SRC:%.c=build/fuzz/%.o)
	@ar rcs $@ $^

build/fuzz/fuzz-%: build/fuzz/tests/fuzz/fuzz_%.o build/fuzz/libfdl.a
	@$(CLANG) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)

build/fuzz/fuzz-cli: build/fuzz/tests/fuzz/fuzz_cli.o build/fuzz/src/cli/options.o build/fuzz/libfdl.a
	@$(CLANG) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)

fuzz:
	bash scripts/setup-fuzz.sh
	$(MAKE) $(FUZZ_TARGETS:%=build/fuzz/fuzz-%)
	@for t in $(FUZZ_TARGETS); do mkdir -p tests/corpus/$$t; \
	  echo "== fuzz $$t ($(FUZZ_SECONDS) s)"; \
	  ./build/fuzz/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -print_final_stats=1 \
	    tests/corpus/$$t 2>&1 | grep -E "stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY" || exit 1; done

# --- tests ---------------------------------------------------------------------
unit: build/san/unit-tests
	ASAN_OPTIONS=detect_leaks=1 ./build/san/unit-tests

interop: build/san/fdl build/fdl web
	FDL_BIN=$(CURDIR)/build/san/fdl FDL_EXTENSION_DIR=$(EXTDIR) \
	  $(DEPS)/venv/bin/python -m pytest -q tests/interop

test: unit corpus interop

demo: setup
	bash examples/demo.sh

clean:
	rm -rf build
