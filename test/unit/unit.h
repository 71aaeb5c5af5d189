/*-------------------------------------------------------------------------
 *
 * unit.h
 *	  A tiny unit-test harness for the engine: tests register themselves
 *	  (FST_TEST), assertions record a failure and return from the test.
 *
 * The runner (runner.c) runs every registered test, or those whose name
 * contains argv[1], and ends with the line "N passed, N failed".
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_UNIT_H
#define FST_UNIT_H

#include "fst_common.h"

#include <stdio.h>
#include <stdlib.h>

typedef void (*FstTestFn) (void);

extern void fst_test_register(const char *name, FstTestFn fn);
extern void fst_test_fail(const char *file, int line, const char *fmt,...)
			pg_attribute_printf(3, 4);
extern bool fst_test_failed(void);
/* A deterministic seed: FST_TEST_SEED from the environment, else fixed. */
extern uint64 fst_test_seed(void);
/* A scratch directory unique to this test run (created on first use). */
extern const char *fst_test_tmpdir(void);

#define FST_TEST(name) \
	static void name(void); \
	static void __attribute__((constructor)) name##_register(void) \
	{ fst_test_register(#name, name); } \
	static void name(void)

#define CHECK(cond) \
	do { if (!(cond)) { \
		fst_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); return; } \
	} while (0)

#define CHECK_MSG(cond, ...) \
	do { if (!(cond)) { \
		fst_test_fail(__FILE__, __LINE__, __VA_ARGS__); return; } \
	} while (0)

#define CHECK_EQ_INT(a, b) \
	do { long long _a = (long long) (a), _b = (long long) (b); \
		if (_a != _b) { fst_test_fail(__FILE__, __LINE__, \
			"%s == %lld, expected %s == %lld", #a, _a, #b, _b); return; } \
	} while (0)

#define CHECK_OK(code, err) \
	do { FstCode _c = (code); if (_c != FST_OK) { \
		fst_test_fail(__FILE__, __LINE__, "%s returned %s: %s", #code, \
					  fst_code_name(_c), (err)->msg); return; } \
	} while (0)

/* xorshift64*: a small deterministic PRNG for tests */
static inline uint64
fst_rand_next(uint64 *state)
{
	uint64		x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64CONST(2685821657736338717);
}

static inline uint64
fst_rand_range(uint64 *state, uint64 n)
{
	return n ? fst_rand_next(state) % n : 0;
}

#endif							/* FST_UNIT_H */
