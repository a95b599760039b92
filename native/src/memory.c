// Returns freed heap memory to the operating system. onnxruntime sessions free tens of megabytes
// when a function parks, but glibc keeps freed chunks in its per-thread arenas (worker threads
// each get one), so the process's RSS would not show the release. malloc_trim(0) walks every
// arena and gives back whole free pages (glibc >= 2.8). Elsewhere it is a no-op returning false.
#include <stdbool.h>
#include <node_api.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#ifdef __GLIBC__
  released = malloc_trim(0);
#endif
  napi_value result;
  napi_get_boolean(env, released != 0, &result);
  return result;
}

// A kept model's bytes live in a SharedArrayBuffer (a worker reads them without a copy), but
// onnxruntime-node's create takes only a plain ArrayBuffer, so each load from PARKED copied them:
// 12 MB for mlp, 45 MB for resnet, at ~3 ms per MB on a VM whose freed pages go back to the host.
// This returns a plain ArrayBuffer over the same memory instead. It holds the view it aliases
// until it is collected, so the shared memory outlives it; nothing may write through it (ORT only
// reads a model). Undefined for anything but a non-empty Uint8Array, or where external buffers are
// refused: the caller copies then.
static void ReleaseSource(napi_env env, void* data, void* hint) {
  (void)data;
  napi_delete_reference(env, (napi_ref)hint);
}

static napi_value PlainView(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result, source;
  napi_get_undefined(env, &result);
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return result;
  bool is_typed = false;
  if (napi_is_typedarray(env, argv[0], &is_typed) != napi_ok || !is_typed) return result;
  napi_typedarray_type type;
  size_t length = 0, offset = 0;
  void* data = NULL;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, &source, &offset) != napi_ok) return result;
  if (type != napi_uint8_array || length == 0 || data == NULL) return result;
  napi_ref ref;
  if (napi_create_reference(env, argv[0], 1, &ref) != napi_ok) return result;
  if (napi_create_external_arraybuffer(env, data, length, ReleaseSource, ref, &result) != napi_ok) {
    napi_delete_reference(env, ref);
    bool pending = false;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending) {
      napi_value ignored;
      napi_get_and_clear_last_exception(env, &ignored);
    }
    napi_get_undefined(env, &result);
  }
  return result;
}

// nvml.c
napi_value tensorfn_read_gpus(napi_env env, napi_callback_info info);

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "trimMemory", NAPI_AUTO_LENGTH, Trim, NULL, &fn);
  napi_set_named_property(env, exports, "trimMemory", fn);
  napi_create_function(env, "plainView", NAPI_AUTO_LENGTH, PlainView, NULL, &fn);
  napi_set_named_property(env, exports, "plainView", fn);
  napi_create_function(env, "readGpus", NAPI_AUTO_LENGTH, tensorfn_read_gpus, NULL, &fn);
  napi_set_named_property(env, exports, "readGpus", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
