-- The router's peer hand-off to nginx (Portico's variables module, nginx-assets/modules/portico_vars/
-- ngx_http_portico_vars_peer.c; `portico_peer_handoff` in the balanced upstream block): the first attempt of a
-- request whose endpoint nothing per request decides goes to the endpoint the router picked, without the Lua balancer.
-- Returns nil where that module is not loaded or there is no nginx (the unit tests' mocked ngx, which installs its own
-- table in package.loaded): then the balancer picks every peer, as before. Otherwise a table of:
--   addr(host, port) -> sa, name   an endpoint's binary address and nginx's name for it ("ip:port", "[ip6]:port"),
--                                  made once per endpoint (nil when host is not an IP address); host in nginx's
--                                  host form (an IPv6 address in brackets)
--   handoff(r, sa, name, more) -> true   the request's first attempt goes there, `more` retries allowed after it
--   failure(r) -> state, status    how the handed attempt ended ("failed", "next"), as ngx.balancer's
--                                  get_last_failure says it for the attempts the balancer set; nil while it has not
--   forget(r)                      drops a hand-off not yet taken
local ok, ffi = pcall(require, "ffi")
if not ok or not package.loaded["resty.core.base"] then return nil end

pcall(ffi.cdef, [[
  int ngx_http_portico_vars_peer_addr(const unsigned char *ip, size_t len, int port, unsigned char *sa,
    unsigned char *name, size_t *name_len);
  int ngx_http_portico_vars_peer_handoff(void *r, const unsigned char *sa, size_t salen, const unsigned char *name,
    size_t name_len, int more);
  void ngx_http_portico_vars_peer_forget(void *r);
  int ngx_http_portico_vars_peer_failure(void *r, int *status);
]])
local C = ffi.C
if not pcall(function() return C.ngx_http_portico_vars_peer_handoff end) then return nil end

local handoff_c, failure_c, forget_c = C.ngx_http_portico_vars_peer_handoff, C.ngx_http_portico_vars_peer_failure,
  C.ngx_http_portico_vars_peer_forget
local ffi_string = ffi.string
-- Room for an ngx_sockaddr_t (112 bytes) and NGX_SOCKADDR_STRLEN (115).
local sa_buf = ffi.new("unsigned char[128]")
local name_buf = ffi.new("unsigned char[128]")
local len_p = ffi.new("size_t[1]")
local status_p = ffi.new("int[1]")
-- nginx's NGX_PEER_NEXT and NGX_PEER_FAILED, named as ngx.balancer names them.
local STATES = { [2] = "next", [4] = "failed" }

local _M = {}

function _M.addr(host, port)
  local ip = host:match("^%[(.*)%]$") or host
  local salen = C.ngx_http_portico_vars_peer_addr(ip, #ip, tonumber(port) or 0, sa_buf, name_buf, len_p)
  if salen <= 0 then return nil end
  return ffi_string(sa_buf, salen), ffi_string(name_buf, len_p[0])
end

function _M.handoff(r, sa, name, more)
  return handoff_c(r, sa, #sa, name, #name, more) == 0
end

function _M.failure(r)
  local state = failure_c(r, status_p)
  if state == 0 then return nil end
  return STATES[state] or "unknown", status_p[0]
end

function _M.forget(r) forget_c(r) end

return _M
