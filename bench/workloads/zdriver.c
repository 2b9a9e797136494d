/* SPDX-License-Identifier: MIT */
/* bench/workloads/zdriver.c - the library-heavy workload: zlib compress/decompress of
 * generated data in a loop. Each round deflates a 256 KiB buffer of generated,
 * moderately compressible text in 16 KiB input chunks (level 6), inflates it back in
 * 16 KiB output chunks, checks the round trip with crc32, and varies the data a little
 * for the next round. Usage: zdriver [ROUNDS] (default 40). Deterministic.
 * Prints a checksum on stdout. Build: cc -O2 zdriver.c -lz */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define DATA (256 * 1024)
#define CHUNK (16 * 1024)

static unsigned char data[DATA], packed[DATA + DATA / 8 + 1024], back[DATA];

static void generate(unsigned seed)
{
	static const char *words[] = { "alpha", "beta", "gamma", "delta", "epsilon",
		"zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "call", "trace",
		"ptrace", "stop", "breakpoint", "frame", "return", "thread" };
	unsigned x = seed * 2654435761u + 1;
	size_t i = 0;

	while (i < DATA) {
		x = x * 1103515245u + 12345u;
		const char *w = words[(x >> 16) % 20];
		size_t n = strlen(w);
		if (i + n + 1 > DATA)
			break;
		memcpy(data + i, w, n);
		i += n;
		data[i++] = (x >> 8) % 11 == 0 ? '\n' : ' ';
		if ((x >> 4) % 7 == 0 && i + 8 < DATA)	/* some digits: less compressible */
			i += (size_t)snprintf((char *)data + i, 9, "%u", x % 100000);
	}
	memset(data + i, '.', DATA - i);
}

static size_t compress_chunks(void)
{
	z_stream s = { 0 };
	if (deflateInit(&s, 6) != Z_OK)
		abort();
	s.next_out = packed;
	s.avail_out = sizeof packed;
	for (size_t off = 0; off < DATA; off += CHUNK) {
		s.next_in = data + off;
		s.avail_in = CHUNK;
		if (deflate(&s, off + CHUNK >= DATA ? Z_FINISH : Z_NO_FLUSH) == Z_STREAM_ERROR)
			abort();
	}
	size_t n = s.total_out;
	deflateEnd(&s);
	return n;
}

static void decompress_chunks(size_t n)
{
	z_stream s = { 0 };
	if (inflateInit(&s) != Z_OK)
		abort();
	s.next_in = packed;
	s.avail_in = (uInt)n;
	int rc;
	do {
		s.next_out = back + s.total_out;
		s.avail_out = CHUNK;
		rc = inflate(&s, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END)
			abort();
	} while (rc != Z_STREAM_END);
	inflateEnd(&s);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 40;
	unsigned long sum = 0;

	for (long r = 0; r < rounds; r++) {
		generate((unsigned)r);
		size_t n = compress_chunks();
		decompress_chunks(n);
		uLong a = crc32(0L, Z_NULL, 0), b = crc32(0L, Z_NULL, 0);
		for (size_t off = 0; off < DATA; off += CHUNK) {
			a = crc32(a, data + off, CHUNK);
			b = crc32(b, back + off, CHUNK);
		}
		if (a != b) {
			fprintf(stderr, "zdriver: round trip mismatch in round %ld\n", r);
			return 1;
		}
		sum += n + a;
	}
	printf("%lu\n", sum);
	return 0;
}
