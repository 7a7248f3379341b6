-- The routing data's generation (Portico's variables module, nginx-assets/modules/portico_vars/
-- ngx_http_portico_vars_generation.c; `portico_data_generation` in nginx.conf): a counter in shared memory that the
-- configuration API bumps with every version of the data it publishes (store.lua), which each request's router reads
-- to know whether anything changed, instead of looking the version up in the shared dictionary (a hash, the
-- dictionary's lock and an LRU move per request). Returns nil where that module is not loaded or there is no nginx
-- (the unit tests' mocked ngx installs its own table in package.loaded); otherwise:
--   get() -> n     the generation (0 to 2^31-1, wrapping), or -1 when nginx.conf has no such zone
--   bump()         a new version of the data is stored and published
local ok, ffi = pcall(require, "ffi")
if not ok or not package.loaded["resty.core.base"] then return nil end

pcall(ffi.cdef, [[
  int ngx_http_portico_vars_generation(void);
  void ngx_http_portico_vars_generation_bump(void);
]])
local C = ffi.C
if not pcall(function() return C.ngx_http_portico_vars_generation end) then return nil end

return { get = C.ngx_http_portico_vars_generation, bump = C.ngx_http_portico_vars_generation_bump }
