/*
 * check_task.c - a task folder given to `passnet check`, with its candidate.
 *
 * The input is the folder's files one after another, each part ending where
 * the separator "#PN-FILE#" (tests/fuzz/mkseeds.sh packs the seeds so)
 * starts the next:
 *
 *   part 0   TASK/task.json
 *   part 1   TASK/v01/model.onnx, the reference
 *   part 2   the candidate: CAND/model.onnx, or when the part is empty the
 *            reference's own folder (the reference judged against itself)
 *   part 3.. a first byte 'i' or 'o', then TASK/v01/test_data_set_0/
 *            input_N.pb or output_N.pb (N counting each kind from 0);
 *            parts with another first byte are left out
 *
 * The files are written into one folder made once under /dev/shm (else
 * TMPDIR, else /tmp) and removed at exit, and pn_check_task runs on it with
 * a time limit of 1 s per child process and one timed sample, so that a
 * model that loops costs a second, not a minute.  Results go to /dev/null
 * (to the file $PN_FUZZ_OUT names, when set: to see what a seed checks);
 * the one-line errors of check go to stderr.
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "judge/check.h"

#define SEPARATOR "#PN-FILE#"
#define MAX_PBS 16

static char root[256];
static int n_written[2];   /* input_N.pb and output_N.pb written last time */

static void remove_folder(void)
{
	char path[512];
	static const char *const fixed[] = {"task.json", "v01/model.onnx", "cand/model.onnx"};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
		snprintf(path, sizeof path, "%s/%s", root, fixed[i]);
		unlink(path);
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < n_written[k]; i++) {
			snprintf(path, sizeof path, "%s/v01/test_data_set_0/%s_%d.pb", root,
				 k ? "output" : "input", i);
			unlink(path);
		}
	static const char *const dirs[] = {"v01/test_data_set_0", "v01", "cand", ""};
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		snprintf(path, sizeof path, "%s/%s", root, dirs[i]);
		rmdir(path);
	}
}

static int make_folder(void)
{
	const char *base = getenv("TMPDIR");
	struct stat st;
	if (!stat("/dev/shm", &st) && S_ISDIR(st.st_mode) && !access("/dev/shm", W_OK))
		base = "/dev/shm";
	snprintf(root, sizeof root, "%s/pn-fuzz-check-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(root))
		return -1;
	char path[512];
	snprintf(path, sizeof path, "%s/v01", root);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/v01/test_data_set_0", root);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/cand", root);
	mkdir(path, 0700);
	atexit(remove_folder);
	return 0;
}

/* Writes exactly data[0..size) to root/name, or removes it when absent. */
static void put(const char *name, const uint8_t *data, size_t size, int present)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, name);
	unlink(path);
	if (!present)
		return;
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	if (size)
		fwrite(data, 1, size, f);
	fclose(f);
}

/* The next part of [*p, end): its start and length; *p moves past it. */
static const uint8_t *next_part(const uint8_t **p, const uint8_t *end, size_t *len)
{
	if (*p > end)
		return NULL;
	const uint8_t *start = *p;
	const uint8_t *sep = memmem(start, (size_t)(end - start), SEPARATOR, sizeof SEPARATOR - 1);
	*len = (size_t)((sep ? sep : end) - start);
	*p = sep ? sep + sizeof SEPARATOR - 1 : end + 1;
	return start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!*root && make_folder())
		return 0;
	const uint8_t *p = data, *end = data + size, *part;
	size_t len = 0;
	static const char *const fixed[] = {"task.json", "v01/model.onnx", "cand/model.onnx"};
	int have_cand = 0;
	for (int i = 0; i < 3; i++) {
		part = next_part(&p, end, &len);
		put(fixed[i], part, len, part != NULL && (i < 2 || len > 0));
		if (i == 2)
			have_cand = part && len > 0;
	}
	int n[2] = {0, 0};
	while ((part = next_part(&p, end, &len))) {
		int k = len && part[0] == 'i' ? 0 : len && part[0] == 'o' ? 1 : -1;
		if (k < 0 || n[k] >= MAX_PBS)
			continue;
		char name[64];
		snprintf(name, sizeof name, "v01/test_data_set_0/%s_%d.pb", k ? "output" : "input", n[k]++);
		put(name, part + 1, len - 1, 1);
	}
	/* files of the last input that this one does not have */
	for (int k = 0; k < 2; k++) {
		for (int i = n[k]; i < n_written[k]; i++) {
			char name[64];
			snprintf(name, sizeof name, "v01/test_data_set_0/%s_%d.pb", k ? "output" : "input", i);
			put(name, NULL, 0, 0);
		}
		n_written[k] = n[k];
	}
	char cand[512];
	snprintf(cand, sizeof cand, "%s/%s", root, have_cand ? "cand/model.onnx" : "v01");
	FILE *out = fopen(getenv("PN_FUZZ_OUT") ? getenv("PN_FUZZ_OUT") : "/dev/null", "w");
	if (!out)
		return 0;
	pn_check_opts o = {.time_limit = 1, .runs = 1, .threads = 1};
	pn_check_task(root, cand, &o, out);
	fclose(out);
	return 0;
}
