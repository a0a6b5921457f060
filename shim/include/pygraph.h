/* The public C API of libpygraph.so, for programs that want to ask the shim something while it
   is preloaded. The shim is optional for such a program: look the function up at run time
   rather than linking against it, so the program also runs without the shim.

   From C or C++:
     typedef int (*pygraph_write_stats_fn)(const char*);
     pygraph_write_stats_fn fn = (pygraph_write_stats_fn)dlsym(RTLD_DEFAULT, "pygraph_write_stats");
     if (fn) fn("stats-warm.json");

   From Python (ctypes; the symbol is found only when libpygraph.so is preloaded):
     lib = ctypes.CDLL(None)
     if hasattr(lib, "pygraph_write_stats"):
         lib.pygraph_write_stats(b"stats-warm.json") */
#ifndef PYGRAPH_H_
#define PYGRAPH_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the PYGRAPH_STATS document (docs/stats-format.md) as the counters stand now to `path`
   ("%p" becomes the process id; "stderr" means standard error, as for PYGRAPH_STATS), or, when
   `path` is NULL or empty, to the PYGRAPH_STATS destination. Returns 0, or -1 when nothing is
   configured or the file cannot be written (one line on stderr says why).

   A snapshot: it submits no deferred work. Call it right after a synchronization (nothing is
   deferred then), so that launches.seen_by_engine == replayed_in_graphs + eager holds; two
   snapshots give steady-state figures by difference. Thread-safe; before the first CUDA call it
   writes zero counts. */
int pygraph_write_stats(const char* path);

#ifdef __cplusplus
}
#endif

#endif /* PYGRAPH_H_ */
