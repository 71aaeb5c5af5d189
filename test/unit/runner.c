/*-------------------------------------------------------------------------
 *
 * runner.c
 *	  Runs the registered engine unit tests.
 *
 *	  usage: unit_tests [substring]
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_TESTS 1024

typedef struct TestCase
{
	const char *name;
	FstTestFn	fn;
} TestCase;

static TestCase tests[MAX_TESTS];
static int	ntests;
static bool current_failed;
static char tmpdir[512];

void
fst_test_register(const char *name, FstTestFn fn)
{
	if (ntests >= MAX_TESTS)
	{
		fprintf(stderr, "too many tests\n");
		exit(2);
	}
	tests[ntests].name = name;
	tests[ntests].fn = fn;
	ntests++;
}

void
fst_test_fail(const char *file, int line, const char *fmt,...)
{
	va_list		ap;

	current_failed = true;
	fprintf(stderr, "    FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool
fst_test_failed(void)
{
	return current_failed;
}

uint64
fst_test_seed(void)
{
	const char *s = getenv("FST_TEST_SEED");

	if (s && *s)
		return strtoull(s, NULL, 0) | 1;
	return UINT64CONST(0x9E3779B97F4A7C15);
}

const char *
fst_test_tmpdir(void)
{
	if (tmpdir[0] == '\0')
	{
		const char *base = getenv("TMPDIR");

		snprintf(tmpdir, sizeof(tmpdir), "%s/forst-unit-XXXXXX",
				 base && *base ? base : "/tmp");
		if (mkdtemp(tmpdir) == NULL)
		{
			perror("mkdtemp");
			exit(2);
		}
	}
	return tmpdir;
}

static int
cmp_tests(const void *a, const void *b)
{
	return strcmp(((const TestCase *) a)->name, ((const TestCase *) b)->name);
}

int
main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	int			passed = 0;
	int			failed = 0;
	int			i;

	qsort(tests, ntests, sizeof(TestCase), cmp_tests);
	for (i = 0; i < ntests; i++)
	{
		struct timespec t0,
					t1;

		if (filter && strstr(tests[i].name, filter) == NULL)
			continue;
		current_failed = false;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		tests[i].fn();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (current_failed)
			failed++;
		else
			passed++;
		printf("%s %s (%.0f ms)\n", current_failed ? "FAIL" : "ok  ",
			   tests[i].name,
			   (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
		fflush(stdout);
	}
	if (tmpdir[0] != '\0' && failed == 0)
	{
		char		cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
