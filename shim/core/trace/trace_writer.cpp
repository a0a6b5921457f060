#include "trace/trace_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>
#include <thread>

#include "options/config.h"

namespace pygraph {

std::atomic<bool> g_trace_active{false};

namespace {

using trace::RecordHeader;
using trace::RecordType;

constexpr uint32_t kChunkBytes = 1u << 20;
// Bound on buffered trace memory: past it records are dropped (and counted), never blocked on.
constexpr uint64_t kMaxChunks = 256;
constexpr auto kWriterPeriod = std::chrono::milliseconds(50);

struct Chunk {
  Chunk* next = nullptr;
  std::atomic<uint32_t> committed{0};  // bytes of whole records, published to the writer
  uint32_t flushed = 0;                // bytes already written out; guarded by Writer::mu
  uint8_t data[kChunkBytes];
};

struct ThreadBuffer {
  Chunk* chunk = nullptr;
  uint32_t pos = 0;      // bytes reserved so far, >= committed
  uint32_t pending = 0;  // size of the record between begin() and commit()
  uint32_t epoch = 0;    // Writer::epoch when registered; stale after fork or close
  uint16_t tid = 0;
  ThreadBuffer* next = nullptr;  // registry list
};

struct Writer {
  std::mutex mu;  // fd, registry, free list; never taken on the hot path
  int fd = -1;
  std::string path;
  std::atomic<uint32_t> epoch{1};
  std::atomic<uint64_t> seq{0};
  std::atomic<uint64_t> records{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> chunks_allocated{0};
  std::atomic<uint32_t> next_tid{0};
  std::atomic<Chunk*> full{nullptr};  // lock-free stack of chunks waiting to be written
  Chunk* free_list = nullptr;
  ThreadBuffer* threads = nullptr;
  uint64_t start_ns = 0;
  std::mutex wake_mu;
  std::condition_variable wake;
  bool stop = false;
};

// Never destroyed: threads may still trace while static destructors run at exit.
Writer& W() {
  static Writer* w = new Writer;
  return *w;
}

__attribute__((tls_model("initial-exec"))) thread_local ThreadBuffer* t_buffer = nullptr;

// Releases the thread's buffer when the thread ends, so its records are not lost.
struct ThreadExit {
  ~ThreadExit();
};
thread_local ThreadExit t_exit;

void write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;  // disk full or gone: the reader reports the trace as truncated
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

Chunk* new_chunk_locked(Writer& w) {
  if (w.free_list) {
    Chunk* c = w.free_list;
    w.free_list = c->next;
    c->next = nullptr;
    c->committed.store(0, std::memory_order_relaxed);
    c->flushed = 0;
    return c;
  }
  if (w.chunks_allocated.load() >= kMaxChunks) return nullptr;
  Chunk* c = new (std::nothrow) Chunk;
  if (c) w.chunks_allocated.fetch_add(1);
  return c;
}

void push_full(Writer& w, Chunk* c) {
  Chunk* head = w.full.load(std::memory_order_relaxed);
  do {
    c->next = head;
  } while (
      !w.full.compare_exchange_weak(head, c, std::memory_order_release, std::memory_order_relaxed));
}

// Writes what `c` holds beyond what was written before. Caller holds w.mu.
void flush_chunk_locked(Writer& w, Chunk* c) {
  const uint32_t committed = c->committed.load(std::memory_order_acquire);
  if (w.fd >= 0 && committed > c->flushed) {
    write_all(w.fd, c->data + c->flushed, committed - c->flushed);
  }
  c->flushed = committed;
}

// Writes the full chunks queued so far, oldest first, then what every thread's current chunk
// holds, so that a process killed later loses at most one writer period of records. Records
// of different threads may land out of order; the reader orders them by seq. Caller holds w.mu.
void drain_locked(Writer& w) {
  Chunk* list = w.full.exchange(nullptr, std::memory_order_acquire);
  Chunk* reversed = nullptr;
  while (list) {
    Chunk* next = list->next;
    list->next = reversed;
    reversed = list;
    list = next;
  }
  while (reversed) {
    Chunk* next = reversed->next;
    flush_chunk_locked(w, reversed);
    reversed->next = w.free_list;
    w.free_list = reversed;
    reversed = next;
  }
  for (ThreadBuffer* tb = w.threads; tb; tb = tb->next) {
    if (tb->chunk) flush_chunk_locked(w, tb->chunk);
  }
}

void writer_loop(Writer* w, uint32_t epoch) {
  std::unique_lock<std::mutex> lk(w->wake_mu);
  while (!w->stop && w->epoch.load() == epoch) {
    w->wake.wait_for(lk, kWriterPeriod);
    lk.unlock();
    {
      std::lock_guard<std::mutex> g(w->mu);
      if (w->epoch.load() == epoch) drain_locked(*w);
    }
    lk.lock();
  }
}

void unregister_locked(Writer& w, ThreadBuffer* tb) {
  for (ThreadBuffer** p = &w.threads; *p; p = &(*p)->next) {
    if (*p == tb) {
      *p = tb->next;
      return;
    }
  }
}

ThreadBuffer* register_thread(Writer& w) {
  (void)&t_exit;  // instantiates the thread-exit hook for this thread
  ThreadBuffer* tb = t_buffer;
  std::lock_guard<std::mutex> g(w.mu);
  if (!tb) {
    tb = new (std::nothrow) ThreadBuffer;
    if (!tb) return nullptr;
    t_buffer = tb;
  }
  // A buffer from before a fork or a close: its chunk belongs to the old trace.
  tb->chunk = new_chunk_locked(w);
  tb->pos = 0;
  tb->pending = 0;
  tb->epoch = w.epoch.load();
  tb->tid = static_cast<uint16_t>(w.next_tid.fetch_add(1) + 1);
  tb->next = w.threads;
  w.threads = tb;
  return tb->chunk ? tb : nullptr;
}

ThreadExit::~ThreadExit() {
  ThreadBuffer* tb = t_buffer;
  if (!tb) return;
  Writer& w = W();
  std::lock_guard<std::mutex> g(w.mu);
  if (tb->epoch == w.epoch.load() && g_trace_active.load()) {
    unregister_locked(w, tb);
    if (tb->chunk) push_full(w, tb->chunk);
  }
  tb->chunk = nullptr;
  tb->epoch = 0;
}

void write_thread_record(ThreadBuffer* tb) {
  // Announced through the normal path so it lands in this thread's chunk before its records.
  trace::ThreadRecord r{tb->tid, static_cast<uint32_t>(::syscall(SYS_gettid))};
  uint8_t* p = trace_writer().begin(RecordType::kThread, sizeof(RecordHeader) + sizeof(r));
  if (!p) return;
  std::memcpy(p, &r, sizeof(r));
  trace_writer().commit();
}

}  // namespace

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

TraceWriter& trace_writer() {
  static TraceWriter writer;
  return writer;
}

bool TraceWriter::open(const std::string& path_template, std::string* error) {
  Writer& w = W();
  std::string path = with_pid(path_template);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    // Another live process traces into this path; keep its file and take our own.
    ::close(fd);
    path += "." + std::to_string(::getpid());
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) ::flock(fd, LOCK_EX | LOCK_NB);
  }
  if (fd < 0 || ::ftruncate(fd, 0) != 0) {
    *error = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return false;
  }
  trace::FileHeader h{};
  std::memcpy(h.magic, trace::kMagic, sizeof(h.magic));
  h.version = trace::kTraceVersion;
  h.header_size = sizeof(h);
  h.pid = static_cast<uint32_t>(::getpid());
  h.start_mono_ns = now_ns();
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  h.start_real_ns = static_cast<uint64_t>(rt.tv_sec) * 1000000000ull + rt.tv_nsec;
  write_all(fd, reinterpret_cast<const uint8_t*>(&h), sizeof(h));

  uint32_t epoch;
  {
    std::lock_guard<std::mutex> g(w.mu);
    w.fd = fd;
    w.path = path;
    w.start_ns = h.start_mono_ns;
    w.records = 0;
    w.stop = false;
    epoch = w.epoch.fetch_add(1) + 1;  // buffers of an earlier trace are stale now
    g_trace_active.store(true, std::memory_order_release);
  }
  std::thread(writer_loop, &w, epoch).detach();
  return true;
}

const std::string& TraceWriter::path() const {
  return W().path;
}

uint64_t TraceWriter::next_seq() {
  return W().seq.fetch_add(1, std::memory_order_relaxed);
}

uint64_t TraceWriter::dropped() const {
  return W().dropped.load();
}

uint8_t* TraceWriter::begin(trace::RecordType type, uint32_t size) {
  Writer& w = W();
  if (!g_trace_active.load(std::memory_order_acquire)) return nullptr;
  ThreadBuffer* tb = t_buffer;
  if (__builtin_expect(!tb || tb->epoch != w.epoch.load(std::memory_order_relaxed) || !tb->chunk,
                       0)) {
    tb = register_thread(w);
    if (!tb) {
      w.dropped.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    write_thread_record(tb);
  }
  if (__builtin_expect(tb->pos + size > kChunkBytes, 0)) {
    if (size > kChunkBytes) {
      w.dropped.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    // The closer reads tb->chunk under w.mu; swap under it so it never sees a chunk twice.
    std::lock_guard<std::mutex> g(w.mu);
    Chunk* fresh = new_chunk_locked(w);
    if (!fresh) {
      w.dropped.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    push_full(w, tb->chunk);
    tb->chunk = fresh;
    tb->pos = 0;
  }
  uint8_t* p = tb->chunk->data + tb->pos;
  RecordHeader h{static_cast<uint16_t>(type), 0, size};
  std::memcpy(p, &h, sizeof(h));
  tb->pending = size;
  return p + sizeof(h);
}

void TraceWriter::commit() {
  ThreadBuffer* tb = t_buffer;
  tb->pos += tb->pending;
  tb->pending = 0;
  tb->chunk->committed.store(tb->pos, std::memory_order_release);
  W().records.fetch_add(1, std::memory_order_relaxed);
}

uint16_t TraceWriter::thread_id() {
  ThreadBuffer* tb = t_buffer;
  return tb ? tb->tid : 0;
}

void TraceWriter::close(uint64_t unwrapped_entry_points) {
  Writer& w = W();
  {
    std::lock_guard<std::mutex> g(w.wake_mu);
    w.stop = true;
  }
  w.wake.notify_all();
  std::lock_guard<std::mutex> g(w.mu);
  if (!g_trace_active.exchange(false)) return;
  drain_locked(w);
  w.threads = nullptr;
  w.epoch.fetch_add(1);
  struct {
    RecordHeader h;
    trace::EndRecord e;
  } __attribute__((packed)) end{};
  end.h = RecordHeader{static_cast<uint16_t>(RecordType::kEnd), 0, sizeof(end)};
  end.e.records = w.records.load();
  end.e.dropped = w.dropped.load();
  end.e.unwrapped = unwrapped_entry_points;
  end.e.dur_ns = now_ns() - w.start_ns;
  write_all(w.fd, reinterpret_cast<const uint8_t*>(&end), sizeof(end));
  ::close(w.fd);
  w.fd = -1;
}

void TraceWriter::reset_in_child() {
  // Only the forking thread exists here. The parent's chunks, registry and writer thread are
  // abandoned (leaked, never written); the mutexes may have been held by vanished threads.
  Writer& w = W();
  new (&w.mu) std::mutex;
  new (&w.wake_mu) std::mutex;
  new (&w.wake) std::condition_variable;
  if (w.fd >= 0) ::close(w.fd);  // drops our reference only; the parent keeps its lock
  w.fd = -1;
  g_trace_active.store(false);
  w.full.store(nullptr);
  w.threads = nullptr;
  w.free_list = nullptr;
  w.chunks_allocated = 0;
  w.epoch.fetch_add(1);
  w.stop = false;
  if (t_buffer) t_buffer->chunk = nullptr;
}

}  // namespace pygraph
