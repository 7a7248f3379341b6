-- conn-limit: ingress-nginx's limit-connections — at most `limit` requests of one client address in progress at
-- once on this route's Ingress (nginx's limit_conn counts connections with a request being processed; Portico
-- counts the requests themselves, which is the same for HTTP/1 and stricter for HTTP/2 multiplexing). Counters live
-- in the shared dict portico_limits, so every worker of this nginx counts together; limits are per node.
--
-- A request takes a slot in access() and gives it back in the log phase: the key is kept in
-- $portico_conn_release, which survives the router's jump to a named location (ngx.ctx does not), and
-- plugins.log() / plugins.release() decrement it. A slot is taken only once per request. The header_filter method
-- (empty) makes the synchronous run send the request to a location with a log handler.
local ip_restriction = require("portico.plugins.ip_restriction")
local util = require("portico.plugins.util")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits.
_M.name = "conn-limit"
_M.order = 7

-- Every counter expires on its own after this long, so a worker that dies mid-request cannot pin a slot forever.
local TTL = 3600

local function access(self)
  local addr = ngx.var.remote_addr or ""
  if self.exempt and ip_restriction.allowed(self.exempt, addr) then return false end
  local held = ngx.var.portico_conn_release
  if held and held ~= "" then return false end
  local dict = ngx.shared.portico_limits
  local key = self.prefix .. addr
  local n, err = dict:incr(key, 1, 0, TTL)
  if not n then
    util.log_every("conn-limit:incr", ngx.ERR, "portico: conn-limit ", self.name, ": cannot count: ", tostring(err))
    return false
  end
  if n > self.limit then
    dict:incr(key, -1, 0)
    return util.deny(self.status)
  end
  ngx.var.portico_conn_release = key
  return false
end

local function header_filter() end

function _M.new(conf, id)
  return {
    name = conf.name or "",
    prefix = (conf.key or id) .. ":c:",
    limit = conf.limit,
    status = conf.status or 503,
    exempt = (type(conf.exempt) == "table" and #conf.exempt > 0) and ip_restriction.new({ allow = conf.exempt }) or nil,
    access = access,
    header_filter = header_filter,
  }
end

-- Gives the request's slot back (log phase, or the answer of a refusal that came after the slot was taken): the
-- registry's release hook.
function _M.release()
  local key = ngx.var.portico_conn_release
  if key == nil or key == "" then return end
  ngx.var.portico_conn_release = ""
  local n = ngx.shared.portico_limits:incr(key, -1, 0)
  if n and n <= 0 then ngx.shared.portico_limits:delete(key) end
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
local C = require("portico.check")
local str, is_int, refusal_status = C.str, C.is_int, C.refusal_status

-- The conn-limit fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  if not is_int(p.limit, 1, 1000000) then return "limit must be 1-1000000" end
  if not refusal_status(p.status) then return "status must be 400-599" end
  if not str(p.key, 253, C.PLUGIN_ID) then return "invalid key" end
  if p.exempt ~= nil then return ip_restriction.cidr_list(p.exempt, "exempt") end
end

return _M
