// A stand-in for libnvidia-ml.so.1 with canned readings, built by test/support/fake-nvml.ts: it
// proves tensorfn's NVML binding end to end on a machine without a GPU. Two GPUs: an H100 that
// reports everything, and an A100 in MIG mode whose two populated MIG devices (of 7 slots) report
// memory only, as real MIG devices do. Energy grows 500 J per reading, so "since start" is visible.
#include <string.h>

typedef int nvmlReturn_t;
enum { OK = 0, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NOT_FOUND = 6 };
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

struct nvmlDevice_st {
  const char *name, *uuid;
  int utilization;  // percent; -1: not supported
  unsigned long long total, used;
  int power, limit;  // mW; -1: not supported
  unsigned long long energy;
  int temperature;
  int mig;  // MIG mode of a GPU
};
typedef struct nvmlDevice_st* nvmlDevice_t;

#define GiB (1024ULL * 1024 * 1024)
static struct nvmlDevice_st gpus[2] = {
  {"NVIDIA H100 80GB HBM3", "GPU-11111111-2222-3333-4444-555555555555", 42, 80 * GiB, 20 * GiB, 250000, 700000, 1000000, 55, 0},
  {"NVIDIA A100-SXM4-40GB", "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", -1, 40 * GiB, 6 * GiB, 90000, 400000, 2000000, 40, 1},
};
static struct nvmlDevice_st migs[7] = {
  {"NVIDIA A100-SXM4-40GB MIG 3g.20gb", "MIG-aaaaaaaa-0000-0000-0000-000000000001", -1, 20 * GiB, 1 * GiB, -1, -1, 0, -1, 0},
  {0},
  {"NVIDIA A100-SXM4-40GB MIG 3g.20gb", "MIG-aaaaaaaa-0000-0000-0000-000000000003", -1, 20 * GiB, 5 * GiB, -1, -1, 0, -1, 0},
};
static int initialized;

nvmlReturn_t nvmlInit_v2(void) { initialized = 1; return OK; }
nvmlReturn_t nvmlShutdown(void) { initialized = 0; return OK; }
const char* nvmlErrorString(nvmlReturn_t r) { return r == NOT_SUPPORTED ? "Not Supported" : r == NOT_FOUND ? "Not Found" : "Unknown Error"; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) { *count = 2; return initialized ? OK : 1; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* d) {
  if (i >= 2) return INVALID_ARGUMENT;
  *d = &gpus[i];
  return OK;
}
static nvmlReturn_t copy(const char* s, char* out, unsigned int n) {
  if (strlen(s) + 1 > n) return INVALID_ARGUMENT;
  strcpy(out, s);
  return OK;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* out, unsigned int n) { return copy(d->name, out, n); }
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* out, unsigned int n) { return copy(d->uuid, out, n); }
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  if (d->utilization < 0) return NOT_SUPPORTED;
  u->gpu = (unsigned int)d->utilization;
  u->memory = 10;
  return OK;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  m->total = d->total;
  m->used = d->used;
  m->free = d->total - d->used;
  return OK;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* p) { return d->power < 0 ? NOT_SUPPORTED : (*p = (unsigned int)d->power, OK); }
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* p) { return d->limit < 0 ? NOT_SUPPORTED : (*p = (unsigned int)d->limit, OK); }
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* e) {
  if (d->power < 0) return NOT_SUPPORTED;
  d->energy += 500000;
  *e = d->energy;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* t) {
  if (sensor != 0 || d->temperature < 0) return NOT_SUPPORTED;
  *t = (unsigned int)d->temperature;
  return OK;
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* current, unsigned int* pending) {
  if (d != &gpus[0] && d != &gpus[1]) return NOT_SUPPORTED;
  *current = *pending = (unsigned int)d->mig;
  return OK;
}
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int* count) {
  if (!d->mig) return NOT_SUPPORTED;
  *count = 7;
  return OK;
}
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int i, nvmlDevice_t* mig) {
  if (!d->mig || i >= 7) return INVALID_ARGUMENT;
  if (!migs[i].uuid) return NOT_FOUND;
  *mig = &migs[i];
  return OK;
}
