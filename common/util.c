#include "common/util.h"

#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/err.h"

pn_key pn_key_of(const void *data, size_t len)
{
	XXH128_hash_t h = XXH3_128bits(data, len);
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, h);
	pn_key k;
	memcpy(k.b, c.digest, 16);
	return k;
}

void pn_hex(const void *data, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = data;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = 0;
}

void pn_key_hex(const pn_key *k, char hex[33])
{
	pn_hex(k->b, 16, hex);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int pn_key_parse(const char *hex, pn_key *k)
{
	if (strlen(hex) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		k->b[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* Bytes in the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), 0 if it is not one. */
static int utf8_sequence(const unsigned char *p)
{
	int n = *p >= 0xF0 && *p <= 0xF4 ? 4 : *p >= 0xE0 ? 3 : *p >= 0xC2 && *p < 0xE0 ? 2 : 0;
	if (*p >= 0xF5 || !n)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	if ((*p == 0xE0 && p[1] < 0xA0) || (*p == 0xED && p[1] > 0x9F) ||
	    (*p == 0xF0 && p[1] < 0x90) || (*p == 0xF4 && p[1] > 0x8F))
		return 0;
	return n;
}

void pn_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p >= 0x80) {
			/* Names come from the files read, and protobuf-c does not
			 * check that strings are UTF-8: a byte that starts no valid
			 * sequence becomes U+FFFD, so every line stays valid JSON. */
			int n = utf8_sequence(p);
			if (n)
				fwrite(p, 1, (size_t)n, f);
			else
				fputs("\\ufffd", f);
			p += n ? n - 1 : 0;
			continue;
		}
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

int pn_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void pn_strv_free(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int pn_write_file(const char *path, const void *data, size_t len, char *err)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(data, 1, len, f) == len;
	if (f && fclose(f))
		ok = 0;
	return ok ? 0 : pn_fail(err, "%s: cannot write", path);
}

int pn_mkdirs(const char *path, mode_t mode, char *err)
{
	size_t n = strlen(path);
	char *p = malloc(n + 1);
	if (!p)
		return pn_fail(err, "%s: out of memory", path);
	memcpy(p, path, n + 1);
	int rc = 0;
	/* Every prefix that ends at a '/', then the whole path; from p + 1 so
	 * that the root of an absolute path is not tried on its own. */
	for (char *s = p + (n > 0);; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;
		*s = 0;
		if (mkdir(p, mode) && errno != EEXIST) {
			rc = pn_fail(err, "%s: %s", p, strerror(errno));
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

double pn_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void pn_progress_start(pn_progress *p, const char *what, uint64_t total)
{
	p->what = what;
	p->done = 0;
	p->total = total;
	p->start = p->last = pn_now();
	p->active = !pn_quiet && isatty(2);
}

void pn_progress_step(pn_progress *p, uint64_t done, const char *note)
{
	p->done = done;
	if (!p->active)
		return;
	double now = pn_now();
	if (now - p->last < 0.1 && done != p->total)
		return;
	p->last = now;
	double el = now - p->start;
	if (p->total) {
		int width = 30, fill = (int)(width * (double)done / (double)p->total);
		double eta = done ? el * (double)(p->total - done) / (double)done : 0;
		fprintf(stderr, "\r%s [%.*s%*s] %llu/%llu  ETA %.0fs  %s\033[K", p->what, fill,
			"##############################", width - fill, "", (unsigned long long)done,
			(unsigned long long)p->total, eta, note ? note : "");
	} else {
		fprintf(stderr, "\r%s %llu  %.1fs  %s\033[K", p->what, (unsigned long long)done, el,
			note ? note : "");
	}
}

void pn_progress_end(pn_progress *p)
{
	if (p->active)
		fputs("\r\033[K", stderr);
	p->active = 0;
}

int pn_stage_threads(int requested)
{
	return requested > 0 ? requested : omp_get_max_threads();
}
