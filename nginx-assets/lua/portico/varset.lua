-- nginx variables written by index: ngx.var's setter lower-cases and hashes the variable's name on every write (about
-- 440 instructions a write, e2e/bench/dataplane-cg.ts), and the router writes several per request. Portico's variables
-- module (nginx-assets/modules/portico_vars) resolves a name to its index once and stores a value by index, as
-- ngx.var's setter stores it (a copy in the request's pool). Only Portico's own variables ("portico_*") nginx.conf
-- reads and lets be set can be named; any other name, a request not at hand (nil), or a Lua without nginx (the unit
-- tests' mocked ngx) writes through ngx.var as before.
local _M = {}

local ngx_var = ngx.var

-- The module's two functions through LuaJIT's FFI, when this runs in nginx with the module loaded.
local index_of, set_by_index
do
  local ok, ffi = pcall(require, "ffi")
  if ok and package.loaded["resty.core.base"] then
    pcall(ffi.cdef, [[
      intptr_t ngx_http_portico_vars_index(const unsigned char *name, size_t len);
      int ngx_http_portico_vars_set(void *r, intptr_t index, const unsigned char *data, size_t len);
    ]])
    local C = ffi.C
    local found = pcall(function() return C.ngx_http_portico_vars_set end)
    if found then
      index_of = function(name) return tonumber(C.ngx_http_portico_vars_index(name, #name)) end
      set_by_index = C.ngx_http_portico_vars_set
    end
  end
end

-- A writer of $name: f(r, value) with nginx's request r (resty.core.base's get_request()) and a string value; or
-- f(r, buf, len) with the value's bytes in an FFI buffer (no Lua string is made for it).
function _M.setter(name)
  if not set_by_index then
    return function(_, value, len)
      if len then value = require("ffi").string(value, len) end
      ngx_var[name] = value
    end
  end
  local ffi_string = require("ffi").string
  -- The index is resolved at the first write, in a worker (the configuration's indexes are known by then).
  local index = nil
  return function(r, value, len)
    if r ~= nil then
      if index == nil then index = index_of(name) end
      if index >= 0 and set_by_index(r, index, value, len or #value) == 0 then return end
    end
    if len then value = ffi_string(value, len) end
    ngx_var[name] = value
  end
end

return _M
