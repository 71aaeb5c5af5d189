# forst — PostgreSQL extension: disaggregated keyed state in an LSM tree on
# object storage.  Built with PGXS against PostgreSQL 15.
#
#   make                 the server module (forst.so)
#   make install         install it (as root)
#   make unit            engine unit tests, no server (ASan + UBSan build)
#   make layout-check    the folders of src/ call each other only downwards
#   make fuzz            libFuzzer targets, a short bounded run each
#   make bench-engine    the stand-alone engine benchmark (bench/engine)
#   make bench-cache     the disk cache benchmark (bench/cache)
#   make bench-s3-upload upload throughput to S3 (bench/s3_upload.sh)
#   make installcheck    pg_regress + TAP tests against a running server
#   scripts/test.sh      everything, as CI runs it (README's test command)

EXTENSION = forst
MODULE_big = forst
DATA = forst--1.0.sql forst--1.0--1.1.sql forst--1.1--1.2.sql forst--1.2--1.3.sql forst--1.3--1.4.sql forst--1.4--1.5.sql forst--1.5--1.6.sql forst--1.6--1.7.sql forst--1.7--1.8.sql
PGFILEDESC = "forst - disaggregated keyed state for PostgreSQL"

ENGINE_SRCS = $(sort $(wildcard src/lsm/*.c src/store/*.c))
SERVER_SRCS = $(sort $(wildcard src/am/*.c src/am/*/*.c))
OBJS = $(ENGINE_SRCS:.c=.o) $(SERVER_SRCS:.c=.o)

WARN_FLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
PG_CPPFLAGS = -Isrc -Isrc/lsm -Isrc/store -I$(shell $(PG_CONFIG) --includedir) $(shell xml2-config --cflags)
PG_CFLAGS = $(WARN_FLAGS) -Werror=implicit-function-declaration
SHLIB_LINK = -llz4 -lzstd -lcurl -lssl -lcrypto -lxml2 -lpq

# pg_regress tests (sql/, expected/) and TAP tests (t/*.pl).  scripts/test.sh
# runs both on a private temporary instance as an unprivileged user, taking
# the list from here (make print-regress).  "make installcheck" runs them
# against an already running server that preloads forst.
REGRESS = forst_load forst_keycodec forst_table forst_onconflict forst_triggers forst_stats forst_differential forst_counters forst_window forst_expiry forst_checkpoint forst_attach_index forst_migrate forst_rekey forst_publication forst_roles forst_upgrade forst_keyarray forst_scan_parallel forst_scan_backward forst_partition forst_partition_index forst_partman forst_secondary forst_unique_secondary forst_partial_index forst_expr_index forst_foreign_keys forst_vacuum_full forst_key_group_partition
REGRESS_OPTS = --temp-config=test/forst.conf
# Isolation tests (specs/*.spec, expected/*.out): concurrent sessions.
# scripts/test.sh runs them on their own temporary instance (make
# print-isolation); "make installcheck" runs them too.
ISOLATION = forst_update_conflict forst_unique forst_serializable forst_row_locks forst_epq forst_epq_moved \
	forst_misc forst_onconflict_iso forst_migrate_iso forst_partition_upsert forst_secondary_iso \
	forst_unique_secondary_iso forst_fkey_iso forst_vacuum_full_iso forst_cic_expr_iso
ISOLATION_OPTS = --temp-config=test/forst.conf
TAP_TESTS = 1

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# the TAP tests' own helpers (t/lib/ForstStore.pm), as scripts/test.sh has them
PG_PROVE_FLAGS += -I $(srcdir)/t/lib

# PGXS tracks no header dependencies: rebuild every object when any header
# changes (a struct layout seen differently by two objects corrupts memory).
$(OBJS): $(wildcard src/*/*.h src/am/*/*.h)

# ---------------------------------------------------------------------------
# Stand-alone programs (no server): unit tests, fuzzers, benchmarks.
# They link the engine sources with PostgreSQL's frontend libpgcommon and
# libpgport (CRC-32C, hashing), as PostgreSQL's own client programs do.
# ---------------------------------------------------------------------------
PG_INCLUDEDIR_SERVER := $(shell $(PG_CONFIG) --includedir-server)
PG_PKGLIBDIR := $(shell $(PG_CONFIG) --pkglibdir)
BUILD = build
SA_CPPFLAGS = -DFRONTEND -Isrc/lsm -Isrc/store -Itest/unit -I$(PG_INCLUDEDIR_SERVER) $(shell xml2-config --cflags)
SA_LIBS = -L$(PG_PKGLIBDIR) -lpgcommon -lpgport -llz4 -lzstd -lcurl -lssl -lcrypto -lxml2 -lm
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
UNIT_SRCS = $(sort $(wildcard test/unit/*.c))

$(BUILD)/unit_tests: $(ENGINE_SRCS) $(UNIT_SRCS) $(wildcard src/lsm/*.h src/store/*.h test/unit/*.h)
	@mkdir -p $(BUILD)
	$(CC) -std=gnu99 -g -O1 $(WARN_FLAGS) -Werror $(SAN_FLAGS) $(SA_CPPFLAGS) \
		-o $@ $(ENGINE_SRCS) $(UNIT_SRCS) $(SA_LIBS)

# The folders of src/ call each other only downwards: no call circle.
layout-check: $(OBJS)
	python3 tools/layout_check.py

unit: $(BUILD)/unit_tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/unit_tests $(UNIT_FILTER)

FUZZ_CC = clang
FUZZ_TARGETS = $(patsubst test/fuzz/fuzz_%.c,%,$(wildcard test/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 20
# A fixed seed keeps CI's short runs repeatable; FUZZ_SEED=0 picks one.
FUZZ_SEED ?= 1

$(BUILD)/fuzz_%: test/fuzz/fuzz_%.c $(ENGINE_SRCS) $(wildcard src/lsm/*.h src/store/*.h)
	@mkdir -p $(BUILD)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -Wno-ignored-attributes $(SA_CPPFLAGS) \
		-o $@ $< $(ENGINE_SRCS) $(SA_LIBS)

# Each target runs for FUZZ_SECONDS over its checked-in corpus; new inputs
# go to a scratch directory, and a crashing input to build/fuzz-crash/<t>/,
# so that the repository stays clean.
fuzz: $(addprefix $(BUILD)/fuzz_,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(BUILD)/fuzz-new/$$t $(BUILD)/fuzz-crash/$$t; \
		echo "fuzz_$$t: $(FUZZ_SECONDS)s"; \
		$(BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/fuzz-crash/$$t/ \
			$(BUILD)/fuzz-new/$$t test/fuzz/corpus/$$t 2>$(BUILD)/fuzz_$$t.log \
			|| { tail -50 $(BUILD)/fuzz_$$t.log; exit 1; }; \
		grep -E 'stat::number_of_executed_units|stat::new_units_added' $(BUILD)/fuzz_$$t.log; \
	done

$(BUILD)/bench_engine: bench/engine.c $(ENGINE_SRCS) $(wildcard src/lsm/*.h src/store/*.h)
	@mkdir -p $(BUILD)
	$(CC) -std=gnu99 -O2 -g $(WARN_FLAGS) $(SA_CPPFLAGS) -o $@ bench/engine.c $(ENGINE_SRCS) $(SA_LIBS)

bench-engine: $(BUILD)/bench_engine

$(BUILD)/bench_cache: bench/cache.c $(ENGINE_SRCS) $(wildcard src/lsm/*.h src/store/*.h)
	@mkdir -p $(BUILD)
	$(CC) -std=gnu99 -O2 -g $(WARN_FLAGS) $(SA_CPPFLAGS) -o $@ bench/cache.c $(ENGINE_SRCS) $(SA_LIBS)

bench-cache: $(BUILD)/bench_cache

$(BUILD)/bench_s3_upload: bench/s3_upload.c $(ENGINE_SRCS) $(wildcard src/lsm/*.h src/store/*.h)
	@mkdir -p $(BUILD)
	$(CC) -std=gnu99 -O2 -g $(WARN_FLAGS) $(SA_CPPFLAGS) -o $@ bench/s3_upload.c $(ENGINE_SRCS) $(SA_LIBS)

bench-s3-upload: $(BUILD)/bench_s3_upload

# forst-sst-verify: checks a downloaded copy of forst's objects (manifests,
# SST block checksums, files named by manifests); used by the s3 test step.
$(BUILD)/forst-sst-verify: tools/sst_verify.c $(ENGINE_SRCS) $(wildcard src/lsm/*.h src/store/*.h)
	@mkdir -p $(BUILD)
	$(CC) -std=gnu99 -O1 -g $(WARN_FLAGS) -Werror $(SA_CPPFLAGS) -o $@ tools/sst_verify.c $(ENGINE_SRCS) $(SA_LIBS)
sst-verify: $(BUILD)/forst-sst-verify

# Lists for scripts/test.sh, so that the Makefile stays the one place that
# names the tests.
print-regress:
	@echo $(REGRESS)

print-regress-opts:
	@echo $(REGRESS_OPTS)

print-isolation:
	@echo $(ISOLATION)

print-isolation-opts:
	@echo $(ISOLATION_OPTS)

print-fuzz-targets:
	@echo $(FUZZ_TARGETS)

.PHONY: unit layout-check fuzz bench-engine bench-cache bench-s3-upload sst-verify print-regress print-regress-opts print-fuzz-targets \
	print-isolation print-isolation-opts
EXTRA_CLEAN = $(BUILD) results regression.diffs regression.out output_iso

# Regenerates the checked-in seed corpus of fuzz_sst.
fuzz-corpus: test/fuzz/gen_corpus.c $(ENGINE_SRCS)
	@mkdir -p $(BUILD) test/fuzz/corpus/sst
	$(CC) -std=gnu99 -O1 $(WARN_FLAGS) $(SA_CPPFLAGS) -o $(BUILD)/gen_corpus test/fuzz/gen_corpus.c $(ENGINE_SRCS) $(SA_LIBS)
	$(BUILD)/gen_corpus test/fuzz/corpus/sst
.PHONY: fuzz-corpus
