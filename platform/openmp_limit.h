#pragma once
// OpenMP's thread limit for the libraries that use it (Tesseract parallelises inside one OCR page
// with OpenMP). Its threads spin while they wait; on a server they fight the page-level parallelism
// Kotae runs itself, the embedder and every request for the cores: measured, one page took 12 s
// instead of 1.4 s on 2 cores (bench/ingest). libgomp reads OMP_THREAD_LIMIT once, when it loads,
// before main, so the limit can only be set by starting the process again with it.

namespace kotae::platform {

// When OMP_THREAD_LIMIT is unset: sets it to 1 and execs this program again with the same arguments
// (same process id). Returns only when it is set already, or when the exec failed (then nothing
// changes and the process goes on as it was).
void restart_with_one_openmp_thread(char** argv);

}  // namespace kotae::platform
