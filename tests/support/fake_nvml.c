/* A stand-in for the NVIDIA driver's libnvidia-ml.so.1, for tests on machines without a GPU.
 * It implements the NVML calls voxcap (directly through ctypes, or through nvidia-ml-py) makes,
 * with the real structure layouts and version checks, and answers from environment variables:
 *   FAKE_NVML_COUNT (1), FAKE_NVML_NAME ("NVIDIA H200"), FAKE_NVML_TOTAL/_FREE/_RESERVED (bytes),
 *   FAKE_NVML_LOAD (%), FAKE_NVML_CC ("9.0"), FAKE_NVML_DRIVER ("580.95.05"),
 *   FAKE_NVML_CUDA (13000), FAKE_NVML_NO_V2 (set: the driver lacks the _v2 memory call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct { int index; } *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;

static struct { int index; } devices[8];

static unsigned long long env_ull(const char *k, unsigned long long d) {
    const char *v = getenv(k); return v ? strtoull(v, NULL, 10) : d;
}
static int env_int(const char *k, int d) { const char *v = getenv(k); return v ? atoi(v) : d; }
static unsigned long long total(void) { return env_ull("FAKE_NVML_TOTAL", 150754820096ULL); }
static unsigned long long reserved(void) { return env_ull("FAKE_NVML_RESERVED", 597688320ULL); }
static unsigned long long freemem(void) { return env_ull("FAKE_NVML_FREE", 149640019968ULL); }

nvmlReturn_t nvmlInit(void) { return 0; }
nvmlReturn_t nvmlInit_v2(void) { return 0; }
nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return 0; }
nvmlReturn_t nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) { case 2: return "Invalid Argument"; case 3: return "Not Supported";
                 case 25: return "Argument version mismatch"; default: return "Unknown Error"; }
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { *n = env_int("FAKE_NVML_COUNT", 1); return 0; }
nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return nvmlDeviceGetCount_v2(n); }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h) {
    if (i >= (unsigned)env_int("FAKE_NVML_COUNT", 1) || i >= 8) return 2;
    devices[i].index = (int)i; *h = (nvmlDevice_t)&devices[i]; return 0;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *h) {
    return nvmlDeviceGetHandleByIndex_v2(i, h);
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *buf, unsigned int len) {
    const char *n = getenv("FAKE_NVML_NAME"); (void)h;
    snprintf(buf, len, "%s", n ? n : "NVIDIA H200"); return 0;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t *m) {
    (void)h; m->total = total(); m->free = freemem(); m->used = total() - freemem(); return 0;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t h, nvmlMemory_v2_t *m) {
    (void)h;
    if (getenv("FAKE_NVML_NO_V2")) return 3;
    if (m->version != (unsigned)(sizeof(nvmlMemory_v2_t) | (2 << 24))) return 25;
    m->total = total(); m->reserved = reserved(); m->free = freemem();
    m->used = total() - freemem() - reserved(); return 0;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t *u) {
    (void)h; u->gpu = env_int("FAKE_NVML_LOAD", 7); u->memory = 1; return 0;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int *major, int *minor) {
    const char *cc = getenv("FAKE_NVML_CC"); (void)h;
    *major = 9; *minor = 0;
    if (cc) sscanf(cc, "%d.%d", major, minor);
    return 0;
}
nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned int len) {
    const char *v = getenv("FAKE_NVML_DRIVER"); snprintf(buf, len, "%s", v ? v : "580.95.05"); return 0;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = env_int("FAKE_NVML_CUDA", 13000); return 0; }
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { return nvmlSystemGetCudaDriverVersion_v2(v); }
