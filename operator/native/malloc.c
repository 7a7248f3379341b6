/*
 * Portico's malloc addon: gives glibc's free heap pages back to the system.
 *
 * glibc returns memory on its own only from the top of a heap. A burst of work (a full translation, a reload at
 * 10,000 Ingresses, a relist) frees most of what it allocated, but the heaps stay resident wherever one live chunk
 * sits above the freed ones. malloc_trim(0) walks every arena and releases the free pages inside them too
 * (MADV_DONTNEED); operator/memory.ts calls it after its full collection, once the controller is quiet.
 *
 * Exports (Node-API, so one build serves every Node 24 binary):
 *   trim()  -> boolean   whether any memory was released
 *   stats() -> { heapBytes, freeBytes, mmapBytes }  glibc's mallinfo2: bytes in its heaps (all arenas), free bytes
 *                                                   among them, bytes in chunks mapped on their own
 */
#define NAPI_VERSION 8
#include <malloc.h>
#include <node_api.h>

static napi_value portico_trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  if (napi_get_boolean(env, malloc_trim(0) != 0, &result) != napi_ok) return NULL;
  return result;
}

static int set_number(napi_env env, napi_value obj, const char *name, size_t value) {
  napi_value v;
  return napi_create_double(env, (double)value, &v) == napi_ok && napi_set_named_property(env, obj, name, v) == napi_ok;
}

static napi_value portico_stats(napi_env env, napi_callback_info info) {
  (void)info;
  struct mallinfo2 mi = mallinfo2();
  napi_value obj;
  if (napi_create_object(env, &obj) != napi_ok) return NULL;
  if (!set_number(env, obj, "heapBytes", mi.arena) || !set_number(env, obj, "freeBytes", mi.fordblks) ||
      !set_number(env, obj, "mmapBytes", mi.hblkhd))
    return NULL;
  return obj;
}

static int export_function(napi_env env, napi_value exports, const char *name, napi_callback cb) {
  napi_value fn;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn) == napi_ok &&
         napi_set_named_property(env, exports, name, fn) == napi_ok;
}

NAPI_MODULE_INIT() {
  if (!export_function(env, exports, "trim", portico_trim) || !export_function(env, exports, "stats", portico_stats))
    return NULL;
  return exports;
}
