// Returns freed heap memory to the operating system. onnxruntime sessions free tens of megabytes
// when a function parks, but glibc keeps freed chunks in its per-thread arenas (worker threads
// each get one), so the process's RSS would not show the release. malloc_trim(0) walks every
// arena and gives back whole free pages (glibc >= 2.8). Elsewhere it is a no-op returning false.
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

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "trimMemory", NAPI_AUTO_LENGTH, Trim, NULL, &fn);
  napi_set_named_property(env, exports, "trimMemory", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
