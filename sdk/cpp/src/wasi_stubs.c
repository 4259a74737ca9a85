/* Definitions of every WASI call wasi-libc's __wasilibc_real.o would import
 * from wasi_snapshot_preview1, so a guest's only import stays
 * tessera_v1.log. Link this object into every guest (sdk/cpp/BUILD.md).
 *
 * Behaviour, so libc and libc++ keep working without an operating system:
 *  - stdout (fd 1) and stderr (fd 2) look like terminals (hence line-buffered)
 *    and each non-empty line written to them becomes one log line: stdout at
 * info, stderr at warn. libc++abi's abort messages arrive this way.
 *  - proc_exit (exit(), returning from main) logs a panic and traps.
 *  - no arguments, no environment, no files, no clocks, no randomness:
 *    a simulation gets time from tick() and must be deterministic.
 *    Calls on other descriptors fail with EBADF, everything else with
 *    ENOSYS.
 * A guest is single-threaded, so the line buffer needs no lock. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wasi/api.h>

/* Same symbol as in tessera/log.h, so the module has a single import. */
__attribute__((import_module("tessera_v1"), import_name("log"))) void
tessera_v1_log(int32_t level, const char* ptr, int32_t len);

enum { kLogInfo = 1, kLogWarn = 2, kLogPanic = 4 };

static int is_std_stream(__wasi_fd_t fd) { return fd == 1 || fd == 2; }

/* Logs what one fd_write call writes to `fd`, one log line per text line
 * (stdio may split a line across iovecs, so lines are joined across them).
 * Empty lines are dropped; a line longer than the buffer is logged in
 * pieces; a last line without a newline is logged as it is. */
static void log_output(__wasi_fd_t fd, const __wasi_ciovec_t* iovs,
                       size_t iovs_len) {
  static char line[1024];
  const int32_t level = fd == 1 ? kLogInfo : kLogWarn;
  size_t used = 0;
  for (size_t k = 0; k < iovs_len; ++k) {
    const uint8_t* data = iovs[k].buf;
    for (size_t i = 0; i < iovs[k].buf_len; ++i) {
      if (data[i] == '\n' || used == sizeof line) {
        if (used > 0) tessera_v1_log(level, line, (int32_t)used);
        used = 0;
        if (data[i] == '\n') continue;
      }
      line[used++] = (char)data[i];
    }
  }
  if (used > 0) tessera_v1_log(level, line, (int32_t)used);
}

__wasi_errno_t __wasi_fd_write(__wasi_fd_t fd, const __wasi_ciovec_t* iovs,
                               size_t iovs_len, __wasi_size_t* retptr0) {
  if (!is_std_stream(fd)) return __WASI_ERRNO_BADF;
  size_t total = 0;
  for (size_t i = 0; i < iovs_len; ++i) total += iovs[i].buf_len;
  log_output(fd, iovs, iovs_len);
  *retptr0 = (__wasi_size_t)total;
  return __WASI_ERRNO_SUCCESS;
}

__wasi_errno_t __wasi_fd_fdstat_get(__wasi_fd_t fd, __wasi_fdstat_t* retptr0) {
  if (!is_std_stream(fd)) return __WASI_ERRNO_BADF;
  memset(retptr0, 0, sizeof *retptr0);
  /* A character device without seek rights is what isatty() checks for. */
  retptr0->fs_filetype = __WASI_FILETYPE_CHARACTER_DEVICE;
  retptr0->fs_rights_base = __WASI_RIGHTS_FD_WRITE;
  return __WASI_ERRNO_SUCCESS;
}

_Noreturn void __wasi_proc_exit(__wasi_exitcode_t rval) {
  static const char kDigits[] = "0123456789";
  char text[48] = "guest called exit(";
  size_t n = strlen(text);
  char digits[10];
  size_t d = 0;
  do {
    digits[d++] = kDigits[rval % 10];
    rval /= 10;
  } while (rval != 0);
  while (d > 0) text[n++] = digits[--d];
  text[n++] = ')';
  tessera_v1_log(kLogPanic, text, (int32_t)n);
  __builtin_trap();
}

__wasi_errno_t __wasi_args_sizes_get(__wasi_size_t* argc,
                                     __wasi_size_t* argv_buf_size) {
  *argc = 0;
  *argv_buf_size = 0;
  return __WASI_ERRNO_SUCCESS;
}
__wasi_errno_t __wasi_args_get(uint8_t** argv, uint8_t* argv_buf) {
  (void)argv;
  (void)argv_buf;
  return __WASI_ERRNO_SUCCESS;
}
__wasi_errno_t __wasi_environ_sizes_get(__wasi_size_t* count,
                                        __wasi_size_t* buf_size) {
  *count = 0;
  *buf_size = 0;
  return __WASI_ERRNO_SUCCESS;
}
__wasi_errno_t __wasi_environ_get(uint8_t** environ, uint8_t* environ_buf) {
  (void)environ;
  (void)environ_buf;
  return __WASI_ERRNO_SUCCESS;
}

__wasi_errno_t __wasi_sched_yield(void) { return __WASI_ERRNO_SUCCESS; }

/* Descriptor calls: the standard streams cannot seek or close; there are no
 * other descriptors (EBADF also ends libc's scan for preopened dirs). */
#define TESSERA_FD_ERRNO(fd) \
  (is_std_stream(fd) || (fd) == 0 ? __WASI_ERRNO_NOSYS : __WASI_ERRNO_BADF)

__wasi_errno_t __wasi_fd_close(__wasi_fd_t fd) { return TESSERA_FD_ERRNO(fd); }
__wasi_errno_t __wasi_fd_seek(__wasi_fd_t fd, __wasi_filedelta_t offset,
                              __wasi_whence_t whence,
                              __wasi_filesize_t* retptr0) {
  (void)offset;
  (void)whence;
  (void)retptr0;
  return is_std_stream(fd) || fd == 0 ? __WASI_ERRNO_SPIPE : __WASI_ERRNO_BADF;
}
__wasi_errno_t __wasi_fd_tell(__wasi_fd_t fd, __wasi_filesize_t* retptr0) {
  (void)retptr0;
  return is_std_stream(fd) || fd == 0 ? __WASI_ERRNO_SPIPE : __WASI_ERRNO_BADF;
}
__wasi_errno_t __wasi_fd_read(__wasi_fd_t fd, const __wasi_iovec_t* iovs,
                              size_t iovs_len, __wasi_size_t* retptr0) {
  (void)iovs;
  (void)iovs_len;
  (void)retptr0;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_pread(__wasi_fd_t fd, const __wasi_iovec_t* iovs,
                               size_t iovs_len, __wasi_filesize_t offset,
                               __wasi_size_t* retptr0) {
  (void)iovs;
  (void)iovs_len;
  (void)offset;
  (void)retptr0;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_pwrite(__wasi_fd_t fd, const __wasi_ciovec_t* iovs,
                                size_t iovs_len, __wasi_filesize_t offset,
                                __wasi_size_t* retptr0) {
  (void)iovs;
  (void)iovs_len;
  (void)offset;
  (void)retptr0;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_advise(__wasi_fd_t fd, __wasi_filesize_t offset,
                                __wasi_filesize_t len, __wasi_advice_t advice) {
  (void)offset;
  (void)len;
  (void)advice;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_allocate(__wasi_fd_t fd, __wasi_filesize_t offset,
                                  __wasi_filesize_t len) {
  (void)offset;
  (void)len;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_datasync(__wasi_fd_t fd) {
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_sync(__wasi_fd_t fd) { return TESSERA_FD_ERRNO(fd); }
__wasi_errno_t __wasi_fd_fdstat_set_flags(__wasi_fd_t fd,
                                          __wasi_fdflags_t flags) {
  (void)flags;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_fdstat_set_rights(
    __wasi_fd_t fd, __wasi_rights_t fs_rights_base,
    __wasi_rights_t fs_rights_inheriting) {
  (void)fs_rights_base;
  (void)fs_rights_inheriting;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_filestat_get(__wasi_fd_t fd,
                                      __wasi_filestat_t* retptr0) {
  (void)retptr0;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_filestat_set_size(__wasi_fd_t fd,
                                           __wasi_filesize_t size) {
  (void)size;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_filestat_set_times(__wasi_fd_t fd,
                                            __wasi_timestamp_t atim,
                                            __wasi_timestamp_t mtim,
                                            __wasi_fstflags_t fst_flags) {
  (void)atim;
  (void)mtim;
  (void)fst_flags;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_prestat_get(__wasi_fd_t fd,
                                     __wasi_prestat_t* retptr0) {
  (void)fd;
  (void)retptr0;
  return __WASI_ERRNO_BADF;
}
__wasi_errno_t __wasi_fd_prestat_dir_name(__wasi_fd_t fd, uint8_t* path,
                                          __wasi_size_t path_len) {
  (void)fd;
  (void)path;
  (void)path_len;
  return __WASI_ERRNO_BADF;
}
__wasi_errno_t __wasi_fd_readdir(__wasi_fd_t fd, uint8_t* buf,
                                 __wasi_size_t buf_len,
                                 __wasi_dircookie_t cookie,
                                 __wasi_size_t* retptr0) {
  (void)buf;
  (void)buf_len;
  (void)cookie;
  (void)retptr0;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_fd_renumber(__wasi_fd_t fd, __wasi_fd_t to) {
  (void)to;
  return TESSERA_FD_ERRNO(fd);
}

/* Paths: there is no file system. */
__wasi_errno_t __wasi_path_create_directory(__wasi_fd_t fd, const char* path) {
  (void)fd;
  (void)path;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_path_filestat_get(__wasi_fd_t fd,
                                        __wasi_lookupflags_t flags,
                                        const char* path,
                                        __wasi_filestat_t* retptr0) {
  (void)fd;
  (void)flags;
  (void)path;
  (void)retptr0;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_path_filestat_set_times(__wasi_fd_t fd,
                                              __wasi_lookupflags_t flags,
                                              const char* path,
                                              __wasi_timestamp_t atim,
                                              __wasi_timestamp_t mtim,
                                              __wasi_fstflags_t fst_flags) {
  (void)fd;
  (void)flags;
  (void)path;
  (void)atim;
  (void)mtim;
  (void)fst_flags;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_path_link(__wasi_fd_t old_fd,
                                __wasi_lookupflags_t old_flags,
                                const char* old_path, __wasi_fd_t new_fd,
                                const char* new_path) {
  (void)old_fd;
  (void)old_flags;
  (void)old_path;
  (void)new_fd;
  (void)new_path;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_path_open(__wasi_fd_t fd, __wasi_lookupflags_t dirflags,
                                const char* path, __wasi_oflags_t oflags,
                                __wasi_rights_t fs_rights_base,
                                __wasi_rights_t fs_rights_inheriting,
                                __wasi_fdflags_t fdflags,
                                __wasi_fd_t* retptr0) {
  (void)fd;
  (void)dirflags;
  (void)path;
  (void)oflags;
  (void)fs_rights_base;
  (void)fs_rights_inheriting;
  (void)fdflags;
  (void)retptr0;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_path_readlink(__wasi_fd_t fd, const char* path,
                                    uint8_t* buf, __wasi_size_t buf_len,
                                    __wasi_size_t* retptr0) {
  (void)fd;
  (void)path;
  (void)buf;
  (void)buf_len;
  (void)retptr0;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_path_remove_directory(__wasi_fd_t fd, const char* path) {
  (void)fd;
  (void)path;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_path_rename(__wasi_fd_t fd, const char* old_path,
                                  __wasi_fd_t new_fd, const char* new_path) {
  (void)fd;
  (void)old_path;
  (void)new_fd;
  (void)new_path;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_path_symlink(const char* old_path, __wasi_fd_t fd,
                                   const char* new_path) {
  (void)old_path;
  (void)fd;
  (void)new_path;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_path_unlink_file(__wasi_fd_t fd, const char* path) {
  (void)fd;
  (void)path;
  return __WASI_ERRNO_NOSYS;
}

/* Time, randomness, sockets and polling: not available to a simulation. */
__wasi_errno_t __wasi_clock_res_get(__wasi_clockid_t id,
                                    __wasi_timestamp_t* retptr0) {
  (void)id;
  (void)retptr0;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_clock_time_get(__wasi_clockid_t id,
                                     __wasi_timestamp_t precision,
                                     __wasi_timestamp_t* retptr0) {
  (void)id;
  (void)precision;
  (void)retptr0;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_random_get(uint8_t* buf, __wasi_size_t buf_len) {
  (void)buf;
  (void)buf_len;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_poll_oneoff(const __wasi_subscription_t* in,
                                  __wasi_event_t* out,
                                  __wasi_size_t nsubscriptions,
                                  __wasi_size_t* retptr0) {
  (void)in;
  (void)out;
  (void)nsubscriptions;
  (void)retptr0;
  return __WASI_ERRNO_NOSYS;
}
__wasi_errno_t __wasi_sock_accept(__wasi_fd_t fd, __wasi_fdflags_t flags,
                                  __wasi_fd_t* retptr0) {
  (void)flags;
  (void)retptr0;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_sock_recv(__wasi_fd_t fd, const __wasi_iovec_t* ri_data,
                                size_t ri_data_len, __wasi_riflags_t ri_flags,
                                __wasi_size_t* retptr0,
                                __wasi_roflags_t* retptr1) {
  (void)ri_data;
  (void)ri_data_len;
  (void)ri_flags;
  (void)retptr0;
  (void)retptr1;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_sock_send(__wasi_fd_t fd, const __wasi_ciovec_t* si_data,
                                size_t si_data_len, __wasi_siflags_t si_flags,
                                __wasi_size_t* retptr0) {
  (void)si_data;
  (void)si_data_len;
  (void)si_flags;
  (void)retptr0;
  return TESSERA_FD_ERRNO(fd);
}
__wasi_errno_t __wasi_sock_shutdown(__wasi_fd_t fd, __wasi_sdflags_t how) {
  (void)how;
  return TESSERA_FD_ERRNO(fd);
}
