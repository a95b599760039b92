// GPU telemetry through NVML, loaded at run time: libnvidia-ml.so.1 comes with the NVIDIA driver,
// so the addon neither links it nor needs the CUDA toolkit to build, and where there is no driver
// readGpus() says so instead of failing to load. Declarations after nvml.h (the handle is opaque,
// the structs and codes are NVML's); the calls are the ones Triton's metrics use.
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <node_api.h>

typedef int nvmlReturn_t;  // NVML_SUCCESS = 0
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

#define NVML_BUFFER 96       // NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE
#define NVML_TEMPERATURE_GPU 0
#define NVML_DEVICE_MIG_ENABLE 1

static struct {
  bool tried;
  const char* problem;  // why there is no NVML, once known
  char detail[256];
  nvmlReturn_t (*init)(void);
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*count)(unsigned int*);
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*);
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*);
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned int*, unsigned int*);
  nvmlReturn_t (*mig_count)(nvmlDevice_t, unsigned int*);
  nvmlReturn_t (*mig_handle)(nvmlDevice_t, unsigned int, nvmlDevice_t*);
} nvml;

// Opens the library and initialises NVML once; afterwards nvml.problem says why not, or NULL.
static void Open(void) {
  if (nvml.tried) return;
  nvml.tried = true;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(nvml.detail, sizeof nvml.detail, "no NVIDIA driver: %s", dlerror());
    nvml.problem = nvml.detail;
    return;
  }
#define SYM(field, symbol) *(void**)(&nvml.field) = dlsym(lib, symbol)
  SYM(init, "nvmlInit_v2");
  SYM(error_string, "nvmlErrorString");
  SYM(count, "nvmlDeviceGetCount_v2");
  SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
  SYM(name, "nvmlDeviceGetName");
  SYM(uuid, "nvmlDeviceGetUUID");
  SYM(utilization, "nvmlDeviceGetUtilizationRates");
  SYM(memory, "nvmlDeviceGetMemoryInfo");
  SYM(power, "nvmlDeviceGetPowerUsage");
  SYM(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  SYM(energy, "nvmlDeviceGetTotalEnergyConsumption");
  SYM(temperature, "nvmlDeviceGetTemperature");
  SYM(mig_mode, "nvmlDeviceGetMigMode");
  SYM(mig_count, "nvmlDeviceGetMaxMigDeviceCount");
  SYM(mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex");
#undef SYM
  if (!nvml.init || !nvml.count || !nvml.handle || !nvml.uuid || !nvml.name) {
    nvml.problem = "libnvidia-ml.so.1 lacks nvmlInit_v2 or the device queries (a driver older than NVML 5)";
    return;
  }
  nvmlReturn_t r = nvml.init();
  if (r != 0) {
    snprintf(nvml.detail, sizeof nvml.detail, "nvmlInit_v2 failed: %s", nvml.error_string ? nvml.error_string(r) : "error");
    nvml.problem = nvml.detail;
  }
}

static void SetNumber(napi_env env, napi_value object, const char* key, double value) {
  napi_value v;
  napi_create_double(env, value, &v);
  napi_set_named_property(env, object, key, v);
}

static void SetString(napi_env env, napi_value object, const char* key, const char* value) {
  napi_value v;
  napi_create_string_utf8(env, value, NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, object, key, v);
}

// One device's readings; a query the device does not support leaves its field out.
static napi_value Device(napi_env env, nvmlDevice_t device, unsigned int index, const char* parent) {
  napi_value out;
  napi_create_object(env, &out);
  char text[NVML_BUFFER];
  SetNumber(env, out, "index", index);
  if (nvml.uuid(device, text, sizeof text) == 0) SetString(env, out, "uuid", text);
  if (nvml.name(device, text, sizeof text) == 0) SetString(env, out, "name", text);
  if (parent) SetString(env, out, "parent", parent);
  nvmlUtilization_t utilization;
  if (nvml.utilization && nvml.utilization(device, &utilization) == 0) SetNumber(env, out, "utilizationPercent", utilization.gpu);
  nvmlMemory_t memory;
  if (nvml.memory && nvml.memory(device, &memory) == 0) {
    SetNumber(env, out, "memoryTotalBytes", (double)memory.total);
    SetNumber(env, out, "memoryUsedBytes", (double)memory.used);
    SetNumber(env, out, "memoryFreeBytes", (double)memory.free);
  }
  unsigned int value;
  if (nvml.power && nvml.power(device, &value) == 0) SetNumber(env, out, "powerMilliwatts", value);
  if (nvml.power_limit && nvml.power_limit(device, &value) == 0) SetNumber(env, out, "powerLimitMilliwatts", value);
  unsigned long long energy;
  if (nvml.energy && nvml.energy(device, &energy) == 0) SetNumber(env, out, "energyMillijoules", (double)energy);
  if (nvml.temperature && nvml.temperature(device, NVML_TEMPERATURE_GPU, &value) == 0) SetNumber(env, out, "temperatureCelsius", value);
  return out;
}

// readGpus(): { devices: [...] } with each GPU, then its MIG devices (with `parent`), or { problem }.
napi_value tensorfn_read_gpus(napi_env env, napi_callback_info info) {
  (void)info;
  Open();
  napi_value result;
  napi_create_object(env, &result);
  if (nvml.problem) {
    SetString(env, result, "problem", nvml.problem);
    return result;
  }
  unsigned int count = 0;
  nvmlReturn_t r = nvml.count(&count);
  if (r != 0) {
    SetString(env, result, "problem", nvml.error_string ? nvml.error_string(r) : "nvmlDeviceGetCount_v2 failed");
    return result;
  }
  napi_value devices;
  napi_create_array(env, &devices);
  uint32_t n = 0;
  for (unsigned int i = 0; i < count; i++) {
    nvmlDevice_t device;
    if (nvml.handle(i, &device) != 0) continue;
    napi_set_element(env, devices, n++, Device(env, device, i, NULL));
    unsigned int current = 0, pending = 0, slots = 0;
    if (!nvml.mig_mode || !nvml.mig_count || !nvml.mig_handle) continue;
    if (nvml.mig_mode(device, &current, &pending) != 0 || current != NVML_DEVICE_MIG_ENABLE) continue;
    if (nvml.mig_count(device, &slots) != 0) continue;
    char parent[NVML_BUFFER] = "";
    nvml.uuid(device, parent, sizeof parent);
    for (unsigned int m = 0; m < slots; m++) {
      nvmlDevice_t mig;
      if (nvml.mig_handle(device, m, &mig) != 0) continue;  // NOT_FOUND: no instance in that slot
      napi_set_element(env, devices, n++, Device(env, mig, m, parent));
    }
  }
  napi_set_named_property(env, result, "devices", devices);
  return result;
}
