/*
 * test_sources.c - walking files, directories and archives, pn_folder, and
 * the manifest parser.
 *
 * Every fixture is made at run time in a fresh mkdtemp directory: archives
 * with libarchive's writer (tar, tar.gz, tar.xz, tar.bz2, zip, archives in
 * archives), files with plain stdio.  Walking does not parse ONNX, so any
 * bytes named *.onnx stand in for models; each carries its own name so a
 * mix-up between units shows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <locale.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "extract/sources.h"
#include "scratch_dir.h"

/* --- fixtures ---------------------------------------------------------------- */

static char tmp[64];

static int setup(void **state)
{
	(void)state;
	return scratch_dir_make(tmp, sizeof tmp, "sources");
}

static int teardown(void **state)
{
	(void)state;
	return scratch_dir_remove(tmp);
}

/* A path under the test's directory; rotates through a few buffers so that
 * several can be alive in one call. */
static const char *at(const char *fmt, ...)
{
	static char bufs[8][512];
	static int k;
	char rel[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof rel, fmt, ap);
	va_end(ap);
	char *b = bufs[k++ % 8];
	snprintf(b, 512, "%s/%s", tmp, rel);
	return b;
}

static void mkdirs(const char *path)
{
	char p[512];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static void put_file(const char *path, const void *data, size_t len)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s", path);
	char *s = strrchr(dir, '/');
	*s = '\0';
	mkdirs(dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void put_text(const char *path, const char *text)
{
	put_file(path, text, strlen(text));
}

static void random_bytes(void *p, size_t n, unsigned seed)
{
	unsigned char *b = p;
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (unsigned char)x;
	}
}

enum fx_fmt { FX_TAR, FX_TGZ, FX_TXZ, FX_TBZ2, FX_ZIP, FX_AR };
enum fx_kind { FX_FILE, FX_DIR, FX_SYMLINK, FX_HARDLINK, FX_ZEROS };

/* One member to write.  FX_ZEROS writes len zero bytes without holding
 * them; FX_SYMLINK and FX_HARDLINK take their target from data. */
typedef struct fx_entry {
	const char *name;
	const void *data;
	size_t len;
	enum fx_kind kind;
} fx_entry;

#define FILE_ENTRY(n, s) { (n), (s), strlen(s), FX_FILE }

typedef struct fx_buf {
	unsigned char *p;
	size_t n, cap;
} fx_buf;

static la_ssize_t fx_write_cb(struct archive *a, void *ud, const void *data, size_t len)
{
	(void)a;
	fx_buf *b = ud;
	if (b->n + len > b->cap) {
		b->cap = (b->n + len) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
	return (la_ssize_t)len;
}

/* Writes an archive into memory with libarchive.  Names are UTF-8: the
 * writer runs in a UTF-8 locale (its C-locale path cannot store them), the
 * walks under test in the "C" locale every program starts in. */
static void *fx_archive(enum fx_fmt fmt, const fx_entry *e, int n, size_t *len)
{
	assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
	struct archive *a = archive_write_new();
	assert_non_null(a);
	if (fmt == FX_ZIP) {
		assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
	} else if (fmt == FX_AR) {
		/* What dpkg-deb writes: a plain ar archive. */
		assert_int_equal(archive_write_set_format_ar_svr4(a), ARCHIVE_OK);
	} else {
		assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
		if (fmt == FX_TGZ)
			assert_int_equal(archive_write_add_filter_gzip(a), ARCHIVE_OK);
		if (fmt == FX_TXZ)
			assert_int_equal(archive_write_add_filter_xz(a), ARCHIVE_OK);
		if (fmt == FX_TBZ2)
			assert_int_equal(archive_write_add_filter_bzip2(a), ARCHIVE_OK);
	}
	fx_buf b = { 0 };
	assert_int_equal(archive_write_open2(a, &b, NULL, fx_write_cb, NULL, NULL), ARCHIVE_OK);
	for (int i = 0; i < n; i++) {
		struct archive_entry *en = archive_entry_new();
		archive_entry_set_pathname(en, e[i].name);
		archive_entry_set_perm(en, 0644);
		archive_entry_set_mtime(en, 1700000000, 0);
		switch (e[i].kind) {
		case FX_DIR:
			archive_entry_set_filetype(en, AE_IFDIR);
			archive_entry_set_size(en, 0);
			break;
		case FX_SYMLINK:
			archive_entry_set_filetype(en, AE_IFLNK);
			archive_entry_set_symlink(en, e[i].data);
			archive_entry_set_size(en, 0);
			break;
		case FX_HARDLINK:
			archive_entry_set_filetype(en, AE_IFREG);
			archive_entry_set_hardlink(en, e[i].data);
			archive_entry_set_size(en, 0);
			break;
		default:
			archive_entry_set_filetype(en, AE_IFREG);
			archive_entry_set_size(en, (la_int64_t)e[i].len);
		}
		assert_int_equal(archive_write_header(a, en), ARCHIVE_OK);
		if (e[i].kind == FX_FILE && e[i].len) {
			assert_int_equal(archive_write_data(a, e[i].data, e[i].len), (la_ssize_t)e[i].len);
		} else if (e[i].kind == FX_ZEROS) {
			static const unsigned char zeros[1 << 20];
			for (size_t done = 0; done < e[i].len;) {
				size_t k = e[i].len - done < sizeof zeros ? e[i].len - done : sizeof zeros;
				assert_int_equal(archive_write_data(a, zeros, k), (la_ssize_t)k);
				done += k;
			}
		}
		archive_entry_free(en);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	assert_non_null(setlocale(LC_CTYPE, "C"));
	*len = b.n;
	return b.p;
}

/* gzip of head followed by fill_len bytes of fill, through libarchive's
 * "raw" writer. */
static void *fx_gzip_fill(const void *head, size_t len, int fill, size_t fill_len, size_t *out_len)
{
	struct archive *a = archive_write_new();
	assert_int_equal(archive_write_set_format_raw(a), ARCHIVE_OK);
	assert_int_equal(archive_write_add_filter_gzip(a), ARCHIVE_OK);
	fx_buf b = { 0 };
	assert_int_equal(archive_write_open2(a, &b, NULL, fx_write_cb, NULL, NULL), ARCHIVE_OK);
	struct archive_entry *en = archive_entry_new();
	archive_entry_set_pathname(en, "data");
	archive_entry_set_filetype(en, AE_IFREG);
	archive_entry_set_size(en, (la_int64_t)(len + fill_len));
	assert_int_equal(archive_write_header(a, en), ARCHIVE_OK);
	assert_int_equal(archive_write_data(a, head, len), (la_ssize_t)len);
	static unsigned char chunk[1 << 20];
	memset(chunk, fill, sizeof chunk);
	for (size_t done = 0; done < fill_len;) {
		size_t k = fill_len - done < sizeof chunk ? fill_len - done : sizeof chunk;
		assert_int_equal(archive_write_data(a, chunk, k), (la_ssize_t)k);
		done += k;
	}
	archive_entry_free(en);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	*out_len = b.n;
	return b.p;
}

static void *fx_gzip(const void *data, size_t len, size_t *out_len)
{
	return fx_gzip_fill(data, len, 0, 0, out_len);
}

static void put_archive(const char *path, enum fx_fmt fmt, const fx_entry *e, int n)
{
	size_t len;
	void *p = fx_archive(fmt, e, n, &len);
	put_file(path, p, len);
	free(p);
}

/* --- collecting a walk ---------------------------------------------------------- */

typedef struct collect {
	pn_unit **u;
	int nu;
	char **err;   /* "place\tmessage" */
	int ne;
	int stop_at;  /* on_unit returns 7 on this unit (1-based); 0 = never */
	const char *source;
} collect;

static int on_unit(void *ud, pn_unit *u)
{
	collect *c = ud;
	assert_string_equal(u->source, c->source);
	c->u = realloc(c->u, (size_t)(c->nu + 1) * sizeof *c->u);
	c->u[c->nu++] = u;
	return c->stop_at && c->nu == c->stop_at ? 7 : 0;
}

static void on_error(void *ud, const char *source, const char *path, const char *msg)
{
	collect *c = ud;
	assert_string_equal(source, c->source);
	assert_null(strchr(msg, '\n'));
	assert_null(strchr(path, '\n'));
	c->err = realloc(c->err, (size_t)(c->ne + 1) * sizeof *c->err);
	assert_true(asprintf(&c->err[c->ne++], "%s\t%s", path, msg) > 0);
}

static int walk(collect *c, const char *location)
{
	static const pn_walk_cb cb0 = { on_unit, on_error, NULL };
	pn_walk_cb cb = cb0;
	cb.ud = c;
	if (!c->source)
		c->source = "src";
	char err[PN_ERRLEN] = "";
	int rc = pn_source_walk(c->source, location, &cb, err);
	if (rc == -1)
		print_message("walk error: %s\n", err);
	return rc;
}

static void collect_free(collect *c)
{
	for (int i = 0; i < c->nu; i++)
		pn_unit_free(c->u[i]);
	for (int i = 0; i < c->ne; i++)
		free(c->err[i]);
	free(c->u);
	free(c->err);
	memset(c, 0, sizeof *c);
}

static void dump(const collect *c)
{
	for (int i = 0; i < c->nu; i++)
		print_message("unit  %s\n", c->u[i]->path);
	for (int i = 0; i < c->ne; i++)
		print_message("error %s\n", c->err[i]);
}

static void expect_units(const collect *c, const char *const *want, int n)
{
	if (c->nu != n)
		dump(c);
	assert_int_equal(c->nu, n);
	for (int i = 0; i < n; i++)
		assert_string_equal(c->u[i]->path, want[i]);
}

/* Number of errors whose place equals place (NULL: any) and whose message
 * contains needle. */
static int errors_with(const collect *c, const char *place, const char *needle)
{
	int k = 0;
	for (int i = 0; i < c->ne; i++) {
		const char *tab = strchr(c->err[i], '\t');
		if (place && (strncmp(c->err[i], place, (size_t)(tab - c->err[i])) ||
		              strlen(place) != (size_t)(tab - c->err[i])))
			continue;
		if (strstr(tab + 1, needle))
			k++;
	}
	return k;
}

static void expect_bytes(const pn_unit *u, const char *content)
{
	assert_int_equal(u->len, strlen(content));
	assert_memory_equal(u->bytes, content, u->len);
}

static void expect_read(pn_folder *f, const char *rel, const char *content)
{
	void *d = NULL;
	size_t n = 0;
	char err[PN_ERRLEN];
	int rc = pn_folder_read(f, rel, &d, &n, err);
	if (rc)
		print_message("pn_folder_read %s: %d %s\n", rel, rc, rc < 0 ? err : "");
	assert_int_equal(rc, 0);
	assert_int_equal(n, strlen(content));
	assert_memory_equal(d, content, n);
	free(d);
}

static void expect_list(pn_folder *f, const char *rel, const char *const *want, int n)
{
	char **names;
	char err[PN_ERRLEN];
	int got = pn_folder_list(f, rel, &names, err);
	if (got != n)
		for (int i = 0; i < got; i++)
			print_message("listed %s\n", names[i]);
	assert_int_equal(got, n);
	for (int i = 0; i < n; i++) {
		assert_string_equal(names[i], want[i]);
		free(names[i]);
	}
	free(names);
}

/* The tree most tests use: a model with weights and a test set beside it. */
static const fx_entry model_tree[] = {
	FILE_ENTRY("m/test_data_set_0/output_0.pb", "out0"),
	FILE_ENTRY("m/model.weights", "weights"),
	FILE_ENTRY("m/model.onnx", "model m"),
	FILE_ENTRY("m/test_data_set_0/input_0.pb", "in0"),
};

static void expect_model_folder(pn_folder *f)
{
	expect_read(f, "model.weights", "weights");
	expect_read(f, "test_data_set_0/input_0.pb", "in0");
	expect_read(f, "./test_data_set_0//output_0.pb", "out0");
	void *d = (void *)1;
	size_t n;
	char err[PN_ERRLEN];
	assert_int_equal(pn_folder_read(f, "missing.pb", &d, &n, err), 1);
	assert_null(d);
	assert_int_equal(pn_folder_read(f, "test_data_set_0", &d, &n, err) != 0, 1);
	assert_int_equal(pn_folder_read(f, "../m/model.weights", &d, &n, err), -1);
	assert_int_equal(pn_folder_read(f, "/etc/passwd", &d, &n, err), -1);
	static const char *const top[] = { "model.onnx", "model.weights", "test_data_set_0/" };
	expect_list(f, "", top, 3);
	static const char *const ts[] = { "input_0.pb", "output_0.pb" };
	expect_list(f, "test_data_set_0", ts, 2);
	expect_list(f, "test_data_set_0/", ts, 2);
	expect_list(f, "test_data_set_9", NULL, 0);
}

/* --- walking order and paths --------------------------------------------------- */

static const char *const tree_files[] = {
	"b/model.onnx", "a/sub/m.onnx", "c.onnx", "a-b/x.onnx", "a.txt", "a/model.onnx",
	"Z.ONNX", "a0/y.onnx",
};
static const char *const tree_sorted[] = {
	"Z.ONNX", "a-b/x.onnx", "a/model.onnx", "a/sub/m.onnx", "a0/y.onnx", "b/model.onnx",
	"c.onnx",
};

static void test_dir_order(void **state)
{
	(void)state;
	/* The same tree made in two different creation orders. */
	int n = (int)(sizeof tree_files / sizeof *tree_files);
	for (int i = 0; i < n; i++)
		put_text(at("d1/%s", tree_files[i]), tree_files[i]);
	for (int i = n; i-- > 0;)
		put_text(at("d2/%s", tree_files[i]), tree_files[i]);
	collect c1 = { 0 }, c2 = { 0 };
	assert_int_equal(walk(&c1, at("d1")), 0);
	assert_int_equal(walk(&c2, at("d2/")), 0);
	expect_units(&c1, tree_sorted, 7);
	expect_units(&c2, tree_sorted, 7);
	assert_int_equal(c1.ne, 0);
	for (int i = 0; i < c1.nu; i++) {
		expect_bytes(c1.u[i], tree_sorted[i]);
		const char *base = strrchr(tree_sorted[i], '/');
		assert_string_equal(c1.u[i]->model_name, base ? base + 1 : tree_sorted[i]);
	}
	collect_free(&c1);
	collect_free(&c2);
}

static void test_archive_order(void **state)
{
	(void)state;
	/* The same tree as members of archives written in two orders: the walk
	 * gives the directory's order, with the archive's name and '!'. */
	int n = (int)(sizeof tree_files / sizeof *tree_files);
	fx_entry fwd[8], rev[8];
	for (int i = 0; i < n; i++) {
		fwd[i] = (fx_entry)FILE_ENTRY(tree_files[i], tree_files[i]);
		rev[n - 1 - i] = fwd[i];
	}
	put_archive(at("s/t.tar"), FX_TAR, fwd, n);
	put_archive(at("s/u.zip"), FX_ZIP, rev, n);
	put_archive(at("s/v.tar.gz"), FX_TGZ, rev, n);
	collect c = { 0 };
	assert_int_equal(walk(&c, at("s")), 0);
	assert_int_equal(c.ne, 0);
	assert_int_equal(c.nu, 21);
	const char *arch[] = { "t.tar", "u.zip", "v.tar.gz" };
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 7; i++) {
			char want[128];
			snprintf(want, sizeof want, "%s!%s", arch[k], tree_sorted[i]);
			assert_string_equal(c.u[7 * k + i]->path, want);
			expect_bytes(c.u[7 * k + i], tree_sorted[i]);
		}
	collect_free(&c);
}

static void test_formats_and_folders(void **state)
{
	(void)state;
	static const struct { const char *name; enum fx_fmt fmt; } fm[] = {
		{ "a.tar", FX_TAR }, { "b.tar.gz", FX_TGZ }, { "c.tgz", FX_TGZ },
		{ "d.tar.xz", FX_TXZ }, { "e.txz", FX_TXZ }, { "f.tar.bz2", FX_TBZ2 },
		{ "g.tbz2", FX_TBZ2 }, { "h.zip", FX_ZIP },
		/* Named as one format, written as another: detection decides. */
		{ "i.tar.gz", FX_ZIP }, { "j.zip", FX_TXZ },
	};
	int nf = (int)(sizeof fm / sizeof *fm);
	for (int i = 0; i < nf; i++)
		put_archive(at("z/%s", fm[i].name), fm[i].fmt, model_tree, 4);
	/* The same tree on disk, and a file with an archive's content but no
	 * archive extension, which a directory walk leaves alone. */
	for (int i = 0; i < 4; i++)
		put_text(at("z/k/%s", model_tree[i].name), model_tree[i].data);
	put_archive(at("z/l.bin"), FX_TAR, model_tree, 4);

	collect c = { 0 };
	assert_int_equal(walk(&c, at("z")), 0);
	if (c.ne)
		dump(&c);
	assert_int_equal(c.ne, 0);
	assert_int_equal(c.nu, nf + 1);
	for (int i = 0; i < nf; i++) {
		char want[128];
		snprintf(want, sizeof want, "%s!m/model.onnx", fm[i].name);
		assert_string_equal(c.u[i]->path, want);
		assert_string_equal(c.u[i]->model_name, "model.onnx");
		expect_bytes(c.u[i], "model m");
		expect_model_folder(c.u[i]->folder);
	}
	assert_string_equal(c.u[nf]->path, "k/m/model.onnx");
	expect_model_folder(c.u[nf]->folder);
	collect_free(&c);

	/* An archive as the source itself, found by content whatever its name. */
	c = (collect){ 0 };
	assert_int_equal(walk(&c, at("z/l.bin")), 0);
	static const char *const want_l[] = { "l.bin!m/model.onnx" };
	expect_units(&c, want_l, 1);
	expect_model_folder(c.u[0]->folder);
	collect_free(&c);
	c = (collect){ 0 };
	assert_int_equal(walk(&c, at("z/d.tar.xz")), 0);
	static const char *const want_d[] = { "d.tar.xz!m/model.onnx" };
	expect_units(&c, want_d, 1);
	collect_free(&c);
}

static void test_single_file_and_stop(void **state)
{
	(void)state;
	for (int i = 0; i < 4; i++)
		put_text(at("one/%s", model_tree[i].name), model_tree[i].data);
	collect c = { 0 };
	assert_int_equal(walk(&c, at("one/m/model.onnx")), 0);
	static const char *const want[] = { "model.onnx" };
	expect_units(&c, want, 1);
	expect_bytes(c.u[0], "model m");
	expect_model_folder(c.u[0]->folder);
	collect_free(&c);

	char err[PN_ERRLEN];
	pn_walk_cb cb = { on_unit, on_error, &c };
	c = (collect){ .source = "src" };
	assert_int_equal(pn_source_walk("src", at("nowhere"), &cb, err), -1);
	assert_non_null(strstr(err, "nowhere"));
	assert_non_null(strstr(err, "No such file"));
	put_text(at("notes.txt"), "just some text, not an archive\n");
	assert_int_equal(pn_source_walk("src", at("notes.txt"), &cb, err), -1);
	assert_non_null(strstr(err, "notes.txt"));
	assert_non_null(strstr(err, "not a model file (.onnx, .pt), a directory or a readable archive"));
	assert_int_equal(c.nu, 0);

	/* on_unit asks to stop at the second unit: nothing after it. */
	int n = (int)(sizeof tree_files / sizeof *tree_files);
	for (int i = 0; i < n; i++)
		put_text(at("st/%s", tree_files[i]), tree_files[i]);
	c = (collect){ .stop_at = 2 };
	assert_int_equal(walk(&c, at("st")), 7);
	expect_units(&c, tree_sorted, 2);
	collect_free(&c);
}

/* --- pn_folder lifetime and threads --------------------------------------------- */

static void test_folder_lifetime_threads(void **state)
{
	(void)state;
	enum { NM = 24, SZ = 100000 };
	fx_entry e[NM + 2];
	static unsigned char blobs[NM][SZ];
	static char names[NM][32];
	for (int i = 0; i < NM; i++) {
		random_bytes(blobs[i], SZ, (unsigned)i + 1);
		snprintf(names[i], sizeof names[i], "w/blob%02d.bin", i);
		e[i] = (fx_entry){ names[i], blobs[i], SZ, FX_FILE };
	}
	e[NM] = (fx_entry)FILE_ENTRY("w/a.onnx", "A");
	e[NM + 1] = (fx_entry)FILE_ENTRY("w/b.onnx", "B");
	put_archive(at("blobs.tar.gz"), FX_TGZ, e, NM + 2);

	collect c = { 0 };
	assert_int_equal(walk(&c, at("blobs.tar.gz")), 0);
	assert_int_equal(c.nu, 2);
	/* The walk is over and one unit is gone: the other's folder (an
	 * archive in memory) must still answer, from many threads at once. */
	pn_folder *f = c.u[1]->folder;
	pn_unit_free(c.u[0]);
	c.u[0] = NULL;
	c.nu = 0;
	pn_folder_retain(f);
	pn_unit_free(c.u[1]);
	collect_free(&c);
	/* Had the archive been freed with its units, this would likely reuse
	 * and overwrite its buffers (and ASan would say so outright). */
	void *scribble[NM];
	for (int i = 0; i < NM; i++) {
		scribble[i] = malloc(SZ);
		memset(scribble[i], 0xaa, SZ);
	}
	int bad = 0;
#pragma omp parallel for num_threads(8) reduction(+ : bad) schedule(dynamic)
	for (int k = 0; k < 8 * NM * 4; k++) {
		int i = k % NM;
		void *d;
		size_t n;
		char err[PN_ERRLEN];
		if (pn_folder_read(f, names[i] + 2, &d, &n, err) != 0) {
			bad++;
			continue;
		}
		bad += n != SZ || memcmp(d, blobs[i], SZ) != 0;
		free(d);
		char **l;
		int nl = pn_folder_list(f, "", &l, err);
		bad += nl != NM + 2;
		for (int j = 0; j < nl; j++)
			free(l[j]);
		free(l);
	}
	assert_int_equal(bad, 0);
	expect_read(f, "a.onnx", "A");
	pn_folder_release(f);
	for (int i = 0; i < NM; i++)
		free(scribble[i]);
}

/* --- refused and odd members ------------------------------------------------- */

static void test_refused_names(void **state)
{
	(void)state;
	static const fx_entry e[] = {
		FILE_ENTRY("ok.onnx", "ok"),
		FILE_ENTRY("../x.onnx", "escape"),
		FILE_ENTRY("/abs.onnx", "absolute"),
		FILE_ENTRY("a/../../y.onnx", "escape too"),
		FILE_ENTRY("./dot/./z.onnx", "dotted"),
		{ "dir/", NULL, 0, FX_DIR },
		FILE_ENTRY("dir/w.onnx", "in dir"),
		{ "link.onnx", "ok.onnx", 0, FX_SYMLINK },
		FILE_ENTRY("__MACOSX/._ok.onnx", "appledouble"),
	};
	put_archive(at("r/t.tar"), FX_TAR, e, 9);
	put_archive(at("r/u.zip"), FX_ZIP, e, 7);   /* zip: no symlink entry */
	collect c = { 0 };
	assert_int_equal(walk(&c, at("r")), 0);
	static const char *const want[] = {
		"t.tar!dir/w.onnx", "t.tar!dot/z.onnx", "t.tar!ok.onnx",
		"u.zip!dir/w.onnx", "u.zip!dot/z.onnx", "u.zip!ok.onnx",
	};
	expect_units(&c, want, 6);
	expect_bytes(c.u[2], "ok");
	expect_bytes(c.u[4], "dotted");
	const char *arch[] = { "t.tar", "u.zip" };
	for (int k = 0; k < 2; k++) {
		char p[64];
		snprintf(p, sizeof p, "%s!../x.onnx", arch[k]);
		assert_int_equal(errors_with(&c, p, "'..' component, refused"), 1);
		snprintf(p, sizeof p, "%s!/abs.onnx", arch[k]);
		assert_int_equal(errors_with(&c, p, "absolute member name, refused"), 1);
		snprintf(p, sizeof p, "%s!a/../../y.onnx", arch[k]);
		assert_int_equal(errors_with(&c, p, "refused"), 1);
	}
	assert_int_equal(errors_with(&c, "t.tar", "'link.onnx' is a symbolic link, skipped"), 1);
	assert_int_equal(c.ne, 7);
	collect_free(&c);
}

static void test_utf8_names(void **state)
{
	(void)state;
	/* pax and zip store names as UTF-8; the test runs in the "C" locale,
	 * where libarchive cannot convert them, which must not matter. */
	static const fx_entry e[] = { FILE_ENTRY("mod\xc3\xa8le/\xe6\xa8\xa1\xe5\x9e\x8b.onnx", "utf8") };
	put_archive(at("u/a.tar.gz"), FX_TGZ, e, 1);
	put_archive(at("u/b.zip"), FX_ZIP, e, 1);
	collect c = { 0 };
	assert_int_equal(walk(&c, at("u")), 0);
	static const char *const want[] = {
		"a.tar.gz!mod\xc3\xa8le/\xe6\xa8\xa1\xe5\x9e\x8b.onnx",
		"b.zip!mod\xc3\xa8le/\xe6\xa8\xa1\xe5\x9e\x8b.onnx",
	};
	expect_units(&c, want, 2);
	assert_string_equal(c.u[0]->model_name, "\xe6\xa8\xa1\xe5\x9e\x8b.onnx");
	if (c.ne)
		dump(&c);
	assert_int_equal(c.ne, 0);
	collect_free(&c);
}

static void test_duplicates_and_hardlinks(void **state)
{
	(void)state;
	static const fx_entry e[] = {
		FILE_ENTRY("m.onnx", "first"),
		FILE_ENTRY("n.onnx", "other"),
		FILE_ENTRY("m.onnx", "second"),
		{ "h/linked.onnx", "n.onnx", 0, FX_HARDLINK },
	};
	put_archive(at("dup.tar"), FX_TAR, e, 4);
	collect c = { 0 };
	assert_int_equal(walk(&c, at("dup.tar")), 0);
	static const char *const want[] = { "dup.tar!h/linked.onnx", "dup.tar!m.onnx", "dup.tar!n.onnx" };
	expect_units(&c, want, 3);
	expect_bytes(c.u[0], "other");
	expect_bytes(c.u[1], "second");
	assert_int_equal(errors_with(&c, "dup.tar", "member 'm.onnx' appears more than once; the last copy is used"), 1);
	assert_int_equal(c.ne, 1);
	collect_free(&c);
}

static void test_symlinks_on_disk(void **state)
{
	(void)state;
	put_text(at("real/in.onnx"), "real");
	put_text(at("sl/a.onnx"), "a");
	assert_int_equal(symlink(at("real"), at("sl/linkdir")), 0);
	assert_int_equal(symlink(at("real/in.onnx"), at("sl/linkfile.onnx")), 0);
	assert_int_equal(symlink(at("gone.onnx"), at("sl/dangling.onnx")), 0);
	collect c = { 0 };
	assert_int_equal(walk(&c, at("sl")), 0);
	static const char *const want[] = { "a.onnx", "linkfile.onnx" };
	expect_units(&c, want, 2);
	expect_bytes(c.u[1], "real");
	assert_int_equal(errors_with(&c, "dangling.onnx", "No such file"), 1);
	assert_int_equal(c.ne, 1);
	collect_free(&c);
}

/* --- damage ---------------------------------------------------------------------- */

static void test_corrupt_archives(void **state)
{
	(void)state;
	/* Random members: deflate stores them verbatim, so the tar stream can be
	 * found inside the .tar.gz, and a cut lands at a predictable member. */
	enum { SZ = 200000 };
	static unsigned char b1[SZ], b2[SZ], b3[SZ];
	random_bytes(b1, SZ, 11);
	random_bytes(b2, SZ, 12);
	random_bytes(b3, SZ, 13);
	fx_entry e[] = {
		{ "p/1.onnx", b1, SZ, FX_FILE },
		{ "p/2.onnx", b2, SZ, FX_FILE },
		{ "p/3.onnx", b3, SZ, FX_FILE },
	};
	size_t len;
	unsigned char *good = fx_archive(FX_TGZ, e, 3, &len);
	/* a: cut at 60%, inside the second member. */
	put_file(at("c/a.tar.gz"), good, len * 6 / 10);
	free(good);
	/* b: the third member's tar header damaged (its checksum no longer
	 * matches), then gzipped.  (Flipping bytes of the gzip stream instead
	 * may go unnoticed: deflate has no redundancy, and libarchive does not
	 * check the gzip CRC.) */
	unsigned char *tar = fx_archive(FX_TAR, e, 3, &len);
	unsigned char *h = memmem(tar, len, "p/3.onnx", 8);
	assert_non_null(h);
	memcpy(h, "p/X.onnx", 8);
	size_t glen;
	good = fx_gzip(tar, len, &glen);
	put_file(at("c/b.tar.gz"), good, glen);
	free(good);
	/* d: a plain tar cut inside the second member's header. */
	h = memmem(tar, len, "p/2.onnx", 8);
	assert_non_null(h);
	put_file(at("c/d.tar"), tar, (size_t)(h - tar) + 100);
	free(tar);
	/* c: a zip whose second member's bytes are flipped: its CRC fails. */
	good = fx_archive(FX_ZIP, e, 3, &len);
	h = memmem(good, len, b2 + 1000, 64);
	assert_non_null(h);
	h[10] ^= 0x5a;
	put_file(at("c/c.zip"), good, len);
	free(good);
	/* x: not an archive at all, whatever the name says. */
	put_text(at("c/x.zip"), "this is not a zip file");
	put_text(at("c/y/model.onnx"), "after the damage");

	collect c = { 0 };
	assert_int_equal(walk(&c, at("c")), 0);
	static const char *const want[] = {
		"a.tar.gz!p/1.onnx",
		"b.tar.gz!p/1.onnx", "b.tar.gz!p/2.onnx",
		"c.zip!p/1.onnx", "c.zip!p/3.onnx",
		"d.tar!p/1.onnx",
		"y/model.onnx",
	};
	expect_units(&c, want, 7);
	for (int i = 0; i < 6; i++)
		assert_int_equal(c.u[i]->len, SZ);
	assert_memory_equal(c.u[0]->bytes, b1, SZ);
	assert_memory_equal(c.u[2]->bytes, b2, SZ);
	assert_memory_equal(c.u[4]->bytes, b3, SZ);
	assert_memory_equal(c.u[5]->bytes, b1, SZ);
	expect_bytes(c.u[6], "after the damage");
	/* libarchive's own words follow ours. */
	assert_int_equal(errors_with(&c, "a.tar.gz", "corrupt archive, member 'p/2.onnx' lost: truncated gzip input"), 1);
	assert_int_equal(errors_with(&c, "b.tar.gz", "damaged archive, skipping to the next readable member: Damaged tar archive"), 1);
	assert_int_equal(errors_with(&c, "c.zip", "member 'p/2.onnx' lost: ZIP bad CRC"), 1);
	assert_int_equal(errors_with(&c, "d.tar", "corrupt archive, reading stopped: Truncated tar archive"), 1);
	assert_int_equal(errors_with(&c, "x.zip", "cannot read archive: Unrecognized archive format"), 1);
	if (c.ne != 5)
		dump(&c);
	assert_int_equal(c.ne, 5);
	collect_free(&c);
}

static void test_gzip_bomb(void **state)
{
	(void)state;
	/* 600 MiB of zeros compress to about 600 KB: the bound for such an
	 * archive is 256 MiB, and the member's declared size is past it. */
	static const fx_entry e[] = {
		FILE_ENTRY("a.onnx", "before the bomb"),
		{ "zeros.bin", NULL, (size_t)600 << 20, FX_ZEROS },
		FILE_ENTRY("z.onnx", "after the bomb"),
	};
	size_t len;
	void *bomb = fx_archive(FX_TGZ, e, 3, &len);
	assert_true(len < 2u << 20);
	put_file(at("bomb/bomb.tar.gz"), bomb, len);
	put_text(at("bomb/next.onnx"), "next");
	/* The same bomb one level down shares the outer archive's bound. */
	fx_entry outer[] = {
		FILE_ENTRY("first.onnx", "first"),
		{ "inner.tar.gz", bomb, len, FX_FILE },
	};
	put_archive(at("bomb/outer.tar"), FX_TAR, outer, 2);
	free(bomb);

	collect c = { 0 };
	assert_int_equal(walk(&c, at("bomb")), 0);
	static const char *const want[] = {
		"bomb.tar.gz!a.onnx", "next.onnx", "outer.tar!first.onnx", "outer.tar!inner.tar.gz!a.onnx",
	};
	expect_units(&c, want, 4);
	expect_bytes(c.u[0], "before the bomb");
	assert_int_equal(errors_with(&c, "bomb.tar.gz", "archive expands beyond 268435456 bytes (limit:"), 1);
	assert_int_equal(errors_with(&c, "bomb.tar.gz", "reading stopped at member 'zeros.bin'"), 1);
	assert_int_equal(errors_with(&c, "outer.tar!inner.tar.gz", "archive expands beyond 268435456 bytes"), 1);
	assert_int_equal(c.ne, 2);
	collect_free(&c);
}

static void test_junk_bomb(void **state)
{
	(void)state;
	/* One good member, then 300 MiB of junk that is no tar header: the
	 * reader skips it block by block, and those blocks count against the
	 * bound like members do. */
	static const fx_entry e[] = { FILE_ENTRY("good.onnx", "good") };
	size_t len, glen;
	unsigned char *tar = fx_archive(FX_TAR, e, 1, &len);
	unsigned char *gz = fx_gzip_fill(tar, 1024, 0x01, (size_t)300 << 20, &glen);
	free(tar);
	assert_true(glen < 2u << 20);
	put_file(at("junk/junk.tar.gz"), gz, glen);
	free(gz);
	put_text(at("junk/next.onnx"), "next");
	collect c = { 0 };
	assert_int_equal(walk(&c, at("junk")), 0);
	static const char *const want[] = { "junk.tar.gz!good.onnx", "next.onnx" };
	expect_units(&c, want, 2);
	assert_int_equal(errors_with(&c, "junk.tar.gz", "damaged archive, skipping to the next readable member"), 1);
	assert_int_equal(errors_with(&c, "junk.tar.gz", "archive expands beyond 268435456 bytes"), 1);
	assert_int_equal(errors_with(&c, "junk.tar.gz", "reading stopped while skipping damaged data"), 1);
	if (c.ne != 2)
		dump(&c);
	assert_int_equal(c.ne, 2);
	collect_free(&c);
}

static void test_nesting_limit(void **state)
{
	(void)state;
	/* n00.tar holds m00.onnx and n01.<fmt>, which holds m01.onnx and ...,
	 * down to n19.  Formats rotate so that every reader nests in every
	 * other. */
	static const enum fx_fmt fmts[] = { FX_TAR, FX_TGZ, FX_ZIP, FX_TBZ2, FX_TXZ };
	static const char *const exts[] = { "tar", "tar.gz", "zip", "tar.bz2", "tar.xz" };
	enum { DEPTH = 20 };
	void *inner = NULL;
	size_t inner_len = 0;
	char mname[32], aname[32], content[32];
	for (int d = DEPTH - 1; d >= 0; d--) {
		snprintf(mname, sizeof mname, "m%02d.onnx", d);
		snprintf(content, sizeof content, "model at depth %d", d + 1);
		snprintf(aname, sizeof aname, "n%02d.%s", d + 1, exts[(d + 1) % 5]);
		fx_entry e[2] = { FILE_ENTRY(mname, content), { aname, inner, inner_len, FX_FILE } };
		size_t len;
		void *a = fx_archive(fmts[d % 5], e, inner ? 2 : 1, &len);
		free(inner);
		inner = a;
		inner_len = len;
	}
	put_file(at("nest/n00.tar"), inner, inner_len);
	free(inner);
	put_text(at("nest/z.onnx"), "after");

	collect c = { 0 };
	assert_int_equal(walk(&c, at("nest")), 0);
	char want[PN_LIMIT_NESTING + 1][512];
	const char *wp[PN_LIMIT_NESTING + 1];
	char place[512] = "n00.tar";
	for (int d = 0; d < PN_LIMIT_NESTING; d++) {
		snprintf(want[d], sizeof want[d], "%s!m%02d.onnx", place, d);
		wp[d] = want[d];
		char next[512];
		snprintf(next, sizeof next, "%s!n%02d.%s", place, d + 1, exts[(d + 1) % 5]);
		memcpy(place, next, sizeof place);
	}
	wp[PN_LIMIT_NESTING] = "z.onnx";
	expect_units(&c, wp, PN_LIMIT_NESTING + 1);
	for (int d = 0; d < PN_LIMIT_NESTING; d++) {
		snprintf(content, sizeof content, "model at depth %d", d + 1);
		expect_bytes(c.u[d], content);
	}
	/* place is now the ninth archive, the first one too deep. */
	assert_int_equal(errors_with(&c, place, "archive nesting deeper than 8"), 1);
	assert_int_equal(c.ne, 1);
	collect_free(&c);
}

/* --- fetched files ----------------------------------------------------------------- */

static int walk_fetched(collect *c, const char *disk, const char *name, char *err)
{
	static const pn_walk_cb cb0 = { on_unit, on_error, NULL };
	pn_walk_cb cb = cb0;
	cb.ud = c;
	return pn_source_walk_fetched(c->source, disk, name, &cb, err);
}

/* A cached file is walked as the name it stands for, never as its cache
 * name, and sees nothing else of the cache. */
static void test_fetched_files(void **state)
{
	(void)state;
	char err[PN_ERRLEN] = "";
	put_text(at("cache/sha256/aaaa"), "model bytes");
	put_text(at("cache/sha256/bbbb"), "a neighbour in the cache");
	collect c = { .source = "web" };
	assert_int_equal(walk_fetched(&c, at("cache/sha256/aaaa"), "model.onnx", err), 0);
	static const char *const w1[] = { "model.onnx" };
	expect_units(&c, w1, 1);
	expect_bytes(c.u[0], "model bytes");
	assert_string_equal(c.u[0]->model_name, "model.onnx");
	void *d;
	size_t l;
	assert_int_equal(pn_folder_read(c.u[0]->folder, "bbbb", &d, &l, err), 1);
	char **names;
	assert_int_equal(pn_folder_list(c.u[0]->folder, "", &names, err), 1);
	assert_string_equal(names[0], "model.onnx");
	free(names[0]);
	free(names);
	collect_free(&c);

	/* An npm tarball: members under the tarball's own name. */
	const fx_entry pkg[] = { FILE_ENTRY("package/models/a.onnx", "A"),
	                         FILE_ENTRY("package/README.md", "not a model") };
	put_archive(at("cache/sha512/cccc"), FX_TGZ, pkg, 2);
	c = (collect){ .source = "npm" };
	assert_int_equal(walk_fetched(&c, at("cache/sha512/cccc"), "tiny-1.0.0.tgz", err), 0);
	static const char *const w2[] = { "tiny-1.0.0.tgz!package/models/a.onnx" };
	expect_units(&c, w2, 1);
	assert_int_equal(c.ne, 0);
	collect_free(&c);

	/* A .deb: an ar archive whose data.tar.xz is walked inside it. */
	const fx_entry data[] = { FILE_ENTRY("./usr/share/m/b.onnx", "B") };
	const fx_entry control[] = { FILE_ENTRY("./control", "Package: tiny\n") };
	size_t dlen, clen, arlen;
	void *dp = fx_archive(FX_TXZ, data, 1, &dlen);
	void *cp = fx_archive(FX_TXZ, control, 1, &clen);
	const fx_entry deb[] = { FILE_ENTRY("debian-binary", "2.0\n"), { "control.tar.xz", cp, clen, FX_FILE },
	                         { "data.tar.xz", dp, dlen, FX_FILE } };
	void *ar = fx_archive(FX_AR, deb, 3, &arlen);
	put_file(at("cache/sha256/dddd"), ar, arlen);
	c = (collect){ .source = "deb" };
	assert_int_equal(walk_fetched(&c, at("cache/sha256/dddd"), "tiny_1.0-1.deb", err), 0);
	static const char *const w3[] = { "tiny_1.0-1.deb!data.tar.xz!usr/share/m/b.onnx" };
	expect_units(&c, w3, 1);
	expect_bytes(c.u[0], "B");
	collect_free(&c);
	/* ar is let in for a .deb only, and no report names the cache file. */
	c = (collect){ .source = "web" };
	assert_int_equal(walk_fetched(&c, at("cache/sha256/dddd"), "tiny.tar", err), -1);
	assert_non_null(strstr(err, "tiny.tar: not a model file (.onnx, .pt) or a readable archive"));
	assert_null(strstr(err, "dddd"));
	assert_int_equal(c.nu, 0);
	collect_free(&c);
	/* The same .deb as a local archive source. */
	put_file(at("local/tiny_1.0-1_all.deb"), ar, arlen);
	c = (collect){ .source = "file" };
	assert_int_equal(walk(&c, at("local/tiny_1.0-1_all.deb")), 0);
	static const char *const w4[] = { "tiny_1.0-1_all.deb!data.tar.xz!usr/share/m/b.onnx" };
	expect_units(&c, w4, 1);
	collect_free(&c);
	free(ar);
	free(dp);
	free(cp);

	c = (collect){ .source = "web" };
	assert_int_equal(walk_fetched(&c, at("cache/sha256/gone"), "model.onnx", err), -1);
	assert_string_equal(err, "model.onnx: the cached file is gone");
	collect_free(&c);
}

/* --- manifest -------------------------------------------------------------------- */

/* npm's integrity of a real tarball (an `npm pack` of a two-file package). */
#define INTEGRITY "sha512-PRE/crf8fUNCTABnmaijtk+1lAoaR+kI2E2ntYwrzGtNg3oeOsjn+jprtPDGmwF18De7a3yFTHoLhpu8/bMp9g=="

static void test_manifest_good(void **state)
{
	(void)state;
	put_text(at("mf/data-manifest.txt"),
	         "# passnet corpus\n"
	         "\n"
	         "   # indented comment\n"
	         "zoo   archive zoo/a.tar.gz 0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef BSD-3-Clause  zoo archive, see #12  \n"
	         "models\tdir\t/abs/models\t-\tMIT\r\n"
	         "one file m.onnx ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff unknown\n"
	         "pkg npm @scope/tiny-models@1.0.0-rc.1 " INTEGRITY " MIT from npm\n"
	         "deb deb libonnx-testdata=1:1.12.0-2~bpo1 ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff Apache-2.0\n"
	         "web url https://example.org/zoo.tar.gz?x=1 FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF MIT\n");
	pn_manifest_entry *e;
	int n;
	char err[PN_ERRLEN];
	int rc = pn_manifest_read(at("mf/data-manifest.txt"), &e, &n, err);
	if (rc)
		print_message("%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(n, 6);
	assert_string_equal(e[0].name, "zoo");
	assert_string_equal(e[0].kind, "archive");
	assert_string_equal(e[0].location, at("mf/zoo/a.tar.gz"));
	assert_string_equal(e[0].checksum, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_string_equal(e[0].licence, "BSD-3-Clause");
	assert_string_equal(e[0].note, "zoo archive, see #12");
	assert_int_equal(e[0].line, 4);
	assert_string_equal(e[1].name, "models");
	assert_string_equal(e[1].kind, "dir");
	assert_string_equal(e[1].location, "/abs/models");
	assert_string_equal(e[1].checksum, "-");
	assert_string_equal(e[1].licence, "MIT");
	assert_string_equal(e[1].note, "");
	assert_int_equal(e[1].line, 5);
	assert_string_equal(e[2].location, at("mf/m.onnx"));
	assert_int_equal(e[2].line, 6);
	/* Remote locations are names, not paths: kept as written. */
	assert_string_equal(e[3].kind, "npm");
	assert_string_equal(e[3].location, "@scope/tiny-models@1.0.0-rc.1");
	assert_string_equal(e[3].checksum, INTEGRITY);
	assert_string_equal(e[4].location, "libonnx-testdata=1:1.12.0-2~bpo1");
	assert_string_equal(e[5].location, "https://example.org/zoo.tar.gz?x=1");
	assert_string_equal(e[5].checksum, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
	assert_true(pn_kind_is_remote(e[3].kind) && pn_kind_is_remote(e[4].kind) && pn_kind_is_remote(e[5].kind));
	assert_false(pn_kind_is_remote(e[0].kind) || pn_kind_is_remote(e[1].kind));
	pn_manifest_free(e, n);

	/* A manifest named without a folder keeps locations as written. */
	char cwd[512];
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(at("mf")), 0);
	rc = pn_manifest_read("data-manifest.txt", &e, &n, err);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(rc, 0);
	assert_string_equal(e[0].location, "zoo/a.tar.gz");
	pn_manifest_free(e, n);

	put_text(at("mf/empty.txt"), "# nothing yet\n\n");
	assert_int_equal(pn_manifest_read(at("mf/empty.txt"), &e, &n, err), 0);
	assert_int_equal(n, 0);
	pn_manifest_free(e, n);
}

/* The base64 of INTEGRITY (64 bytes). */
#define B64 "PRE/crf8fUNCTABnmaijtk+1lAoaR+kI2E2ntYwrzGtNg3oeOsjn+jprtPDGmwF18De7a3yFTHoLhpu8/bMp9g=="

static void test_manifest_bad(void **state)
{
	(void)state;
	static const char sha[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	static const struct { const char *line, *problem; } bad[] = {
		{ "a archive x.tar", "missing field 'checksum'" },
		{ "a", "missing field 'kind'" },
		{ "a tarball x.tar SHA MIT", "bad kind 'tarball'" },
		{ "a archive x.tar - MIT", "checksum '-' is only allowed for kind dir, not archive" },
		{ "a dir d SHA MIT", "a dir takes checksum '-'" },
		{ "a url https://h/x.onnx - MIT", "only allowed for kind dir, not url" },
		{ "a url ftp://h/x.onnx SHA MIT", "bad url 'ftp://h/x.onnx'" },
		{ "a url https:///x SHA MIT", "bad url" },
		{ "a deb libfoo SHA MIT", "bad deb location 'libfoo' (expected NAME=VERSION)" },
		{ "a deb libfoo=1.0 sha512-" B64 " MIT", "bad sha256" },
		{ "a npm tiny SHA MIT", "bad npm location 'tiny'" },
		{ "a npm tiny@^1.0.0 SHA MIT", "an exact version" },
		{ "a npm @scope@1.0.0 SHA MIT", "bad npm location" },
		{ "a npm tiny@1.0.0 SHA MIT", "bad npm integrity" },
		{ "a npm tiny@1.0.0 sha256-" B64 " MIT", "bad npm integrity" },
		{ "a npm tiny@1.0.0 sha512-AAAA MIT", "bad npm integrity" },
		{ "a npm tiny@1.0.0 sha512-" B64 "x MIT", "bad npm integrity" },
		{ "a file x.onnx - MIT", "only allowed for kind dir" },
		{ "a archive x.tar 0123 MIT", "bad sha256 '0123'" },
		{ "a archive x.tar SHAg MIT", "bad sha256" },
		{ "a/b archive x.tar SHA MIT", "bad source name 'a/b'" },
		{ "a!b archive x.tar SHA MIT", "bad source name" },
		{ "a archive x.tar SHA", "missing field 'licence'" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		/* SHA stands for a valid digest, SHAg for one with a bad digit. */
		char line[256], text[512];
		const char *s = bad[i].line;
		char *o = line;
		while (*s) {
			if (!strncmp(s, "SHA", 3)) {
				memcpy(o, sha, 64);
				o += 64;
				s += 3;
				if (*s == 'g') {
					o[-1] = 'g';
					s++;
				}
			} else {
				*o++ = *s++;
			}
		}
		*o = '\0';
		snprintf(text, sizeof text, "# header\nok dir d - MIT\n\n%s\nlater dir e - MIT\n", line);
		put_text(at("bad.txt"), text);
		pn_manifest_entry *e = (void *)1;
		int n = 5;
		char err[PN_ERRLEN] = "";
		assert_int_equal(pn_manifest_read(at("bad.txt"), &e, &n, err), -1);
		assert_null(e);
		assert_int_equal(n, 0);
		char where[600];
		snprintf(where, sizeof where, "%s:4: ", at("bad.txt"));
		if (strncmp(err, where, strlen(where)) || !strstr(err, bad[i].problem))
			print_message("line '%s': got '%s', want '%s' + '%s'\n", line, err, where, bad[i].problem);
		assert_int_equal(strncmp(err, where, strlen(where)), 0);
		assert_non_null(strstr(err, bad[i].problem));
	}

	put_text(at("dup.txt"), "x dir a - MIT\ny dir b - MIT\n# c\nx dir c - MIT\n");
	pn_manifest_entry *e;
	int n;
	char err[PN_ERRLEN];
	assert_int_equal(pn_manifest_read(at("dup.txt"), &e, &n, err), -1);
	char want[600];
	snprintf(want, sizeof want, "%s:4: duplicate source name 'x' (first on line 1)", at("dup.txt"));
	assert_string_equal(err, want);

	assert_int_equal(pn_manifest_read(at("none.txt"), &e, &n, err), -1);
	assert_non_null(strstr(err, "none.txt: No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dir_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_archive_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_formats_and_folders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_single_file_and_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folder_lifetime_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_utf8_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicates_and_hardlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks_on_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_archives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gzip_bomb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_junk_bomb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nesting_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetched_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_manifest_good, setup, teardown),
		cmocka_unit_test_setup_teardown(test_manifest_bad, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
