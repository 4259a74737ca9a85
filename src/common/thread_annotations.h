// Clang thread-safety annotations (no-ops under other compilers), in the
// style of LevelDB's port/thread_annotations.h.
#ifndef TESSERA_COMMON_THREAD_ANNOTATIONS_H_
#define TESSERA_COMMON_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define TESSERA_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TESSERA_THREAD_ANNOTATION(x)
#endif

#ifndef GUARDED_BY
#define GUARDED_BY(x) TESSERA_THREAD_ANNOTATION(guarded_by(x))
#endif
#ifndef EXCLUSIVE_LOCKS_REQUIRED
#define EXCLUSIVE_LOCKS_REQUIRED(...) \
  TESSERA_THREAD_ANNOTATION(exclusive_locks_required(__VA_ARGS__))
#endif
#ifndef LOCKS_EXCLUDED
#define LOCKS_EXCLUDED(...) \
  TESSERA_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#endif

#endif  // TESSERA_COMMON_THREAD_ANNOTATIONS_H_
