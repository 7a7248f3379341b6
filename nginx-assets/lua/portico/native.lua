-- The router's native path (Portico's variables module, nginx-assets/modules/portico_vars/
-- ngx_http_portico_vars_route.c; `if ($portico_route_declined)` around the router's set_by_lua in nginx.conf): the
-- router registers the hosts it routes, and the backends of their plain routes, in a per-worker table that nginx then
-- routes from without entering Lua. Returns nil where that module is not loaded or there is no nginx (the unit tests'
-- mocked ngx installs its own table in package.loaded). Otherwise a table of:
--   reset(generation, ports) -> true    an empty table for this generation of the routing data (store.generation());
--                                       ports: the Gateway listener ports, which the native path leaves to the router
--   backend(id, peers, more) -> true    a backend balanced by round-robin: peers as rr.lua keeps them, each with its
--                                       binary address and name (peer_handoff.lua's addr: peer.sa, peer.name) and weight
--   host(name, mk, flags, nexact, nslash, nprefix) -> true   a host (flags: TLS 1, REGEX 2), then its paths in order:
--   path(path, backend, upstream, mk, flags, tms) -> true     (flags: HTTPS 1, NO_UPGRADE 2, DECLINE 4; tms: the
--                                       route's connect, send and read timeouts in ms, or nil for the location's)
--   native(r) -> bool                   the request was routed natively (its routing did not run the router)
local ok, ffi = pcall(require, "ffi")
if not ok or not package.loaded["resty.core.base"] then return nil end

pcall(ffi.cdef, [[
  int ngx_http_portico_vars_route_reset(int generation, const int *ports, int nports);
  int ngx_http_portico_vars_route_backend(const unsigned char *id, size_t len, int npeers, int more);
  int ngx_http_portico_vars_route_peer(const unsigned char *sa, size_t salen, const unsigned char *name,
    size_t name_len, int weight);
  int ngx_http_portico_vars_route_host(const unsigned char *name, size_t len, const unsigned char *mk, size_t mk_len,
    int flags, int nexact, int nslash, int nprefix);
  int ngx_http_portico_vars_route_path(const unsigned char *path, size_t len, const unsigned char *backend,
    size_t backend_len, const unsigned char *upstream, size_t upstream_len, const unsigned char *mk, size_t mk_len,
    int flags, int connect_ms, int send_ms, int read_ms);
  int ngx_http_portico_vars_peer_native(void *r);
]])
local C = ffi.C
if not pcall(function() return C.ngx_http_portico_vars_route_reset end) then return nil end

local _M = {}

function _M.reset(generation, ports)
  local n = #ports
  local arr = ffi.new("int[?]", math.max(n, 1))
  for i = 1, n do arr[i - 1] = ports[i] end
  return C.ngx_http_portico_vars_route_reset(generation, arr, n) == 0
end

function _M.backend(id, peers, more)
  if C.ngx_http_portico_vars_route_backend(id, #id, #peers, more) ~= 0 then return false end
  for i = 1, #peers do
    local p = peers[i]
    local w = tonumber(p.weight) or 1
    -- (Weights the C side cannot keep as they are leave the backend to the Lua balancer.)
    if w ~= math.floor(w) or w < 1 or w > 1000000 then return false end
    if not p.sa or C.ngx_http_portico_vars_route_peer(p.sa, #p.sa, p.name, #p.name, w) ~= 0 then return false end
  end
  return true
end

function _M.host(name, mk, flags, nexact, nslash, nprefix)
  return C.ngx_http_portico_vars_route_host(name, #name, mk, #mk, flags, nexact, nslash, nprefix) == 0
end

function _M.path(path, backend, upstream, mk, flags, tms)
  local c, s, r = 0, 0, 0
  if tms then c, s, r = tms[1], tms[2], tms[3] end
  return C.ngx_http_portico_vars_route_path(path, #path, backend, #backend, upstream, #upstream, mk, #mk, flags, c, s, r) == 0
end

function _M.native(r)
  return C.ngx_http_portico_vars_peer_native(r) ~= 0
end

return _M
