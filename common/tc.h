/* SPDX-License-Identifier: MIT */
/*
 * common/tc.h - shared helpers for every neuron-explorer module: the error
 * model, checked allocation, growable buffers, arenas, gzip-aware input and
 * small string utilities.
 *
 * Error model: functions return 0 (or a non-negative value) on success and a
 * negative errno on failure; the human message goes into a caller-supplied
 * struct tc_err.  One message per error, no trailing newline.
 */
#ifndef TC_H
#define TC_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <pthread.h>

#define TC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TC_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TC_MAX(a, b) ((a) > (b) ? (a) : (b))

/**
 * struct tc_err - a caller-owned error message buffer.
 * @code: the negative errno of the first error recorded, 0 when none.
 * @msg:  the message, NUL-terminated, "" when none.
 */
struct tc_err {
	int code;
	char msg[512];
};

/**
 * tc_err_set - record an error unless one is already recorded.
 * @err:  may be NULL (the message is dropped).
 * @code: a negative errno.
 * @fmt:  printf format of the message.
 *
 * Return: @code, so callers can write `return tc_err_set(err, -EINVAL, ...)`.
 */
int tc_err_set(struct tc_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** tc_err_clear - forget a recorded error. */
void tc_err_clear(struct tc_err *err);

/* Checked allocation: running out of memory is fatal in the CLI and server. */
void *tc_xmalloc(size_t n);
void *tc_xcalloc(size_t n, size_t m);
/* tc_xaligned - @n bytes at a multiple of @align (a power of two, at least
 * sizeof(void *)), for free(); out of memory is fatal as for tc_xmalloc(). */
void *tc_xaligned(size_t align, size_t n);
void *tc_xrealloc(void *p, size_t n);
char *tc_xstrdup(const char *s);
/* tc_xstrndup: at most @n bytes of @s, stopping at a NUL, like strndup(3). */
char *tc_xstrndup(const char *s, size_t n);
/* tc_xmemdup: exactly @n bytes of @s (NULs included) and a NUL after them. */
char *tc_xmemdup(const void *s, size_t n);
char *tc_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* TC_GROW - make room for element @n of the tc_xrealloc'd array @arr of
 * capacity @cap: doubled when full, @first elements the first time. */
#define TC_GROW(arr, n, cap, first) do { \
	if ((n) >= (cap)) { \
		(cap) = (cap) ? (cap) * 2 : (first); \
		(arr) = tc_xrealloc((arr), (cap) * sizeof(*(arr))); \
	} \
} while (0)

/**
 * struct tc_buf - a growable byte buffer, always NUL-terminated.
 * Owns @data; release with tc_buf_free().
 */
struct tc_buf {
	char *data;
	size_t len;
	size_t cap;
};

void tc_buf_init(struct tc_buf *b);
void tc_buf_free(struct tc_buf *b);
void tc_buf_reset(struct tc_buf *b);
void tc_buf_add(struct tc_buf *b, const void *p, size_t n);
/**
 * tc_buf_room - room for @n more bytes at the end of @b: write up to @n
 * bytes there, then tc_buf_commit() how many.  Saves a copy when the
 * bytes are produced in place (encoders).
 */
char *tc_buf_room(struct tc_buf *b, size_t n);
void tc_buf_commit(struct tc_buf *b, size_t n);
/** tc_buf_add_utf8 - append code point @cp (<= 0x10FFFF) as UTF-8. */
void tc_buf_add_utf8(struct tc_buf *b, uint32_t cp);
/** tc_buf_addc - append byte @c (inline: writers call it per character). */
static inline void
tc_buf_addc(struct tc_buf *b, char c)
{
	if (b->len + 1 < b->cap) {
		b->data[b->len++] = c;
		b->data[b->len] = '\0';
	} else {
		tc_buf_add(b, &c, 1);
	}
}
void tc_buf_adds(struct tc_buf *b, const char *s);
void tc_buf_printf(struct tc_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/** tc_buf_steal - hand @b's data to the caller (free() it); @b is reset. */
char *tc_buf_steal(struct tc_buf *b);

/**
 * struct tc_arena - bump allocator for per-request / per-batch memory.
 * Everything allocated from it is released at once by tc_arena_reset() or
 * tc_arena_free().  Not thread-safe: one arena per thread of work.
 */
struct tc_arena_chunk;
struct tc_arena {
	struct tc_arena_chunk *head;
	size_t chunk_size;
};

void tc_arena_init(struct tc_arena *a, size_t chunk_size);
void *tc_arena_alloc(struct tc_arena *a, size_t n);
char *tc_arena_strndup(struct tc_arena *a, const char *s, size_t n);
void tc_arena_reset(struct tc_arena *a);
void tc_arena_free(struct tc_arena *a);

/*
 * Gzip-aware streaming input.  tc_input_open() sniffs the gzip magic (1f 8b)
 * and transparently inflates (multi-member gzip included).  Never reads the
 * whole file into memory.
 */
struct tc_input;

/**
 * tc_input_open - open @path for streaming reads.
 * @in:   out: the new input; free with tc_input_close().
 * @path: file name, "-" for standard input.
 * Return: 0 or -errno with @err set ("PATH: reason").
 */
int tc_input_open(struct tc_input **in, const char *path, struct tc_err *err);
/** tc_input_open_mem - the same over a caller-owned buffer (kept alive by the caller). */
int tc_input_open_mem(struct tc_input **in, const void *data, size_t len,
		      const char *name, struct tc_err *err);
/**
 * tc_input_read - read up to @n decompressed bytes.
 * Return: bytes read (0 at end of data) or -errno with @err set, e.g. for a
 * truncated or corrupt gzip stream ("NAME: truncated gzip stream at byte N").
 */
long tc_input_read(struct tc_input *in, void *buf, size_t n, struct tc_err *err);
/** tc_input_is_gzip - whether the input was gzip-compressed. */
bool tc_input_is_gzip(const struct tc_input *in);
/** tc_input_raw_offset - compressed bytes consumed so far (for progress). */
uint64_t tc_input_raw_offset(const struct tc_input *in);
/** tc_input_raw_size - size of the underlying file, 0 when unknown. */
uint64_t tc_input_raw_size(const struct tc_input *in);
const char *tc_input_name(const struct tc_input *in);
void tc_input_close(struct tc_input *in);

/** tc_now_ns - CLOCK_REALTIME in ns.  tc_mono_ns - CLOCK_MONOTONIC in ns. */
int64_t tc_now_ns(void);
int64_t tc_mono_ns(void);
/** tc_thread_cpu_ns - CPU time of the calling thread, nanoseconds. */
int64_t tc_thread_cpu_ns(void);

/**
 * tc_write_errno - the errno to report for a failed stdio write, read from
 * errno right after it: ENOSPC and EDQUOT (the disk is full: the server
 * answers 507) as they are, EIO for everything else (stdio leaves errno
 * unreliable after some failures).
 */
int tc_write_errno(void);

/**
 * tc_remove_partial - unlink the half-written output @path after a failed
 * write, but only a regular file: a device or FIFO named as the output
 * (/dev/full, /dev/stdout) belongs to the system, not to us.
 */
void tc_remove_partial(const char *path);

/** tc_random_hex - fill @out with @nbytes*2 random hex digits + NUL. */
int tc_random_hex(char *out, size_t nbytes);

/** tc_mkdir_p - mkdir -p; 0 or -errno. */
int tc_mkdir_p(const char *path, int mode);

/** tc_fsync_dir - fsync the directory @dir (after a rename into it); 0 or -errno. */
int tc_fsync_dir(const char *dir);
/** tc_fsync_file - fsync the file @path; 0 or -errno. */
int tc_fsync_file(const char *path);
/**
 * tc_thread_name - name the calling thread "nx-@what" (cut to the 15 bytes
 * Linux keeps), so that top -H, perf and gdb tell the threads apart.
 */
void tc_thread_name(const char *what);

/** tc_s - "s" after a count of @n things unless @n is 1: "%lld unit%s". */
static inline const char *
tc_s(long long n)
{
	return n == 1 ? "" : "s";
}

/**
 * tc_env_num - environment variable @name as a whole decimal number within
 * [@lo, @hi]; @dflt when it is unset, empty, not such a number or out of range.
 */
long tc_env_num(const char *name, long lo, long hi, long dflt);

/**
 * tc_mem_total - the memory this process may use, in bytes: the machine's
 * physical memory, lowered to the memory limit of its cgroup or of any
 * cgroup above it (v2 memory.max, v1 memory.limit_in_bytes), as a container
 * or a systemd MemoryMax= sets.  0 when nothing can be read.
 */
uint64_t tc_mem_total(void);
/** tc_mem_total_at - tc_mem_total() with /proc and /sys read under @root (tests). */
uint64_t tc_mem_total_at(const char *root);
/**
 * tc_mem_share - a 1/@div share of tc_mem_total(), within [@least, @most];
 * @least when the total cannot be read.
 */
uint64_t tc_mem_share(unsigned div, uint64_t least, uint64_t most);
/**
 * tc_ncpus - the CPUs this process may use: its affinity mask (as nproc(1)
 * counts), lowered to its cgroup's CPU quota rounded up (v2 cpu.max, v1
 * cpu.cfs_quota_us / cpu.cfs_period_us).  At least 1.
 */
int tc_ncpus(void);
/** tc_ncpus_at - tc_ncpus() with /proc and /sys read under @root (tests). */
int tc_ncpus_at(const char *root);

/** tc_write_all - write all @n bytes of @buf to @fd (retrying short writes); 0 or -errno. */
int tc_write_all(int fd, const void *buf, size_t n);

/*
 * Write-behind (common/tc-wbehind.c): a background thread writes one handed
 * buffer at a time with the owner's callback while the caller fills the
 * next, in hand-over order.
 */
/** tc_wb_fn - write @n bytes of @job for @ctx; 0 or -errno. */
typedef int (*tc_wb_fn)(void *ctx, void *job, size_t n);

/**
 * struct tc_wbehind - one writer behind the caller (fields private to
 * common/tc-wbehind.c).  @pend is the thread's until written, then it
 * becomes @spare, which the next hand-over gives back to the caller.
 */
struct tc_wbehind {
	tc_wb_fn write;
	void *ctx;
	const char *what;	/* the thread's name, "nx-" before it */
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool thr_on, no_thr, quit;
	void *pend;
	size_t pendn;
	void *spare;
	int werr;		/* the first error of the writes, sticky */
};

/** tc_wb_init - an idle writer calling @write(@ctx, ...); no thread yet. */
void tc_wb_init(struct tc_wbehind *wb, tc_wb_fn write, void *ctx, const char *what);
/**
 * tc_wb_put - hand *@job (@n bytes) to the thread once the job in flight is
 * written, and set *@job to the buffer written before (NULL when none: the
 * caller allocates one).  Without a thread the job is written in place and
 * *@job stays.
 * Return: 0, or the first error of any write so far (*@job then stays the
 * caller's).
 */
int tc_wb_put(struct tc_wbehind *wb, void **job, size_t n);
/** tc_wb_wait - wait until the job in flight is written; the first error of any write, or 0. */
int tc_wb_wait(struct tc_wbehind *wb);
/**
 * tc_wb_stop - write the job in flight and end the thread.
 * Return: the spare buffer, the caller's to free (NULL when none).
 */
void *tc_wb_stop(struct tc_wbehind *wb);

/** tc_hexval - value of hex digit @c, -1 when @c is not one. */
int tc_hexval(int c);

/** tc_sha256_file - hex sha256 (65 bytes with NUL) of a file; 0 or -errno. */
int tc_sha256_file(const char *path, char hex[65], struct tc_err *err);
/**
 * tc_copy_file - copy @src into a new file @dst, fsync'ed (common/tc-copy.c).
 * @hex: when not NULL, receives the hex sha256 of the bytes written.
 * Return: 0, or -errno with @err set and @dst removed.
 */
int tc_copy_file(const char *src, const char *dst, char hex[65], struct tc_err *err);

/** tc_parse_i64 / tc_parse_u64 - whole-string decimal parse; 0 or -EINVAL/-ERANGE. */
int tc_parse_i64(const char *s, int64_t *out);
int tc_parse_u64(const char *s, uint64_t *out);

/** tc_human_bytes - "1.2 MiB" into @buf. */
const char *tc_human_bytes(uint64_t n, char *buf, size_t len);

#endif /* TC_H */
